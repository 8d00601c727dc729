package calico.felix.testing;

import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Every change the kernel announces in one network namespace, as the kernel itself reports it:
 * {@code nft monitor} (tables, chains, rules, sets and set elements added, deleted, flushed) and
 * {@code ip monitor route} (routes added and deleted), each line kept. Felix is not asked: what
 * it would count as "no change" is exactly what this checks. {@link #start} proves both monitors
 * are listening before it returns, by making a change of its own in each and waiting to see it.
 */
public final class KernelChanges implements AutoCloseable {

    /** A table and a route nobody else uses: the monitors' self-check. */
    private static final String PROBE_TABLE = "e2e_monitor_probe";
    private static final String PROBE_ADDRESS = "192.0.2.254";

    private final List<Process> monitors = new ArrayList<>();
    private final List<String> lines = new ArrayList<>();

    private KernelChanges() {
    }

    /** {@return monitors of {@code ns}, listening} */
    public static KernelChanges start(NetNs ns) {
        KernelChanges k = new KernelChanges();
        try {
            k.monitor(ns, "nft", "monitor");
            k.monitor(ns, "ip", "monitor", "route");
            // Changes of our own, repeated until each monitor has shown one (a monitor may still be
            // subscribing when the first is made).
            Await.until("kernel monitors in " + ns.name() + " seeing changes of their own", Duration.ofSeconds(10),
                    () -> {
                        if (k.seen(PROBE_TABLE) && k.seen(PROBE_ADDRESS)) {
                            return true;
                        }
                        k.makeOwnChanges(ns);
                        return false;
                    });
            k.clear();
            return k;
        } catch (AssertionError e) {
            k.close();
            throw new IllegalStateException(e.getMessage() + ": " + k.all(), e);
        } catch (RuntimeException e) {
            k.close();
            throw e;
        }
    }

    /**
     * Adds and deletes the self-check's table and route: each attempt makes changes afresh (a route
     * {@code replace} of an identical route is announced to nobody, so a repeated one would never show).
     */
    private void makeOwnChanges(NetNs ns) {
        ns.exec("nft", "add", "table", "inet", PROBE_TABLE);
        ns.exec("nft", "delete", "table", "inet", PROBE_TABLE);
        ns.exec("ip", "route", "add", "unreachable", PROBE_ADDRESS + "/32");
        ns.exec("ip", "route", "del", "unreachable", PROBE_ADDRESS + "/32");
    }

    private void monitor(NetNs ns, String... command) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", ns.name()));
        full.addAll(List.of(command));
        Process p;
        try {
            p = new ProcessBuilder(full).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", full) + ": " + e.getMessage(), e);
        }
        monitors.add(p);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (lines) {
                        lines.add(command[0] + ": " + line);
                    }
                }
            } catch (IOException e) {
                // the monitor was stopped
            }
        }, "kernel-monitor-" + command[0]);
        reader.setDaemon(true);
        reader.start();
    }

    private boolean seen(String text) {
        synchronized (lines) {
            return lines.stream().anyMatch(l -> l.contains(text));
        }
    }

    /** {@return every line, the self-check's too} (for diagnostics). */
    public List<String> all() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /**
     * {@return every change announced since the last {@link #clear}}, monitor name first, without
     * the self-check's own (its table and route, and the generations its {@code nft} runs made:
     * felix writes through libnftables in its own process, whose generations name its dataplane thread),
     * and without the routes the kernel makes itself for a link's addresses ({@code proto kernel}: a
     * workload link's IPv6 link-local address may finish duplicate address detection seconds after
     * the link came up; felix's own routes carry another protocol, so none of them is hidden).
     */
    public List<String> lines() {
        synchronized (lines) {
            return lines.stream().filter(l -> !l.contains(PROBE_TABLE) && !l.contains(PROBE_ADDRESS)
                    && !(l.contains("# new generation") && l.endsWith("(nft)"))
                    && !(l.startsWith("ip: ") && l.contains(" proto kernel "))).toList();
        }
    }

    public void clear() {
        synchronized (lines) {
            lines.clear();
        }
    }

    @Override
    public void close() {
        monitors.forEach(Process::destroy);
    }
}
