package calico.launcher.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code nft monitor} and {@code ip monitor route} inside each node's namespace for the whole fault
 * phase; every change line is kept with the time it arrived, so that each fault's window counts its own.
 */
final class KernelMonitor implements AutoCloseable {

    record Change(long at, String namespace, String line) {
    }

    private final List<Process> processes = new ArrayList<>();
    private final List<Change> changes = new ArrayList<>();

    KernelMonitor(List<String> namespaces) {
        for (String ns : namespaces) {
            watch(ns, List.of("ip", "netns", "exec", ns, "nft", "monitor"));
            watch(ns, List.of("ip", "-n", ns, "monitor", "route"));
        }
    }

    private void watch(String ns, List<String> cmd) {
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", cmd), e);
        }
        processes.add(p);
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    if (KernelChanges.isChange(line)) {
                        synchronized (changes) {
                            changes.add(new Change(System.currentTimeMillis(), ns, line));
                        }
                    }
                }
            } catch (IOException e) {
                // the monitor was stopped
            }
        }, "monitor-" + ns);
        t.setDaemon(true);
        t.start();
    }

    /** {@return the changes seen in {@code [from, to)}}. */
    List<Change> between(long from, long to) {
        synchronized (changes) {
            return changes.stream().filter(c -> c.at() >= from && c.at() < to).toList();
        }
    }

    @Override
    public void close() {
        processes.forEach(Process::destroy);
    }
}
