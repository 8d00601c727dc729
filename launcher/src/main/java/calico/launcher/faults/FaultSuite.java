package calico.launcher.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The fault suite (issue 29 part 5) against a running {@code ./calico up}: each of the datastore's API
 * server, goldmane, whisker-backend, typha, felix, BIRD and the CNI daemon is killed with SIGKILL while a
 * prober inside {@code shop/client}'s namespace sends an allowed probe (to {@code shop/frontend}, on the
 * other node) and a denied one (to {@code data/database}) every 100 ms, and is started again at once (as
 * a supervisor would). Per fault it records probe errors, kernel changes on the nodes ({@code nft monitor},
 * {@code ip monitor route}), the time from the process being back to it being ready with probes normal,
 * and the connections goldmane lost per 15 s bucket against those the prober made. The CNI daemon is
 * killed during an ADD and during a DEL, and no address may leak once it is back.
 *
 * <p>Prints {@code PASS:}/{@code FAIL:} lines (probe errors and kernel changes are asserted: 0; the
 * CNI fault's new endpoint changes the kernel on purpose), then the figures as a Markdown table, also
 * written to {@code <run-dir>/logs/faults.md}. The demo client loop on the probed flow is paused meanwhile,
 * so that the flow's connections are the prober's alone.
 */
public final class FaultSuite {

    private static final long SETTLE_MILLIS = 3_000;
    private static final long FLUSH_MILLIS = 8_000;
    private static final long RECOVERY_TIMEOUT_MILLIS = 60_000;
    private static final String CLIENT = "shop/client", SERVER = "shop/frontend", DENIED = "data/database";
    private static final int SERVER_PORT = 80, DENIED_PORT = 5432;

    private final Cluster cluster;
    private final PrintStream out;
    private final List<Probe> probes = Collections.synchronizedList(new ArrayList<>());
    private final List<Window> windows = new ArrayList<>();
    private final List<String> verdicts = new ArrayList<>();
    private boolean failedRestart;

    /** One fault's window: killed at, back (new pid) at, ready at, end of its settle time. */
    record Window(String fault, long killed, long back, long ready, long recovered, long end, boolean kernelMayChange, String note) {

        /** Whether the killed process is on the flow records' path: not the baseline, BIRD nor the CNI daemon. */
        boolean carriesFlows() {
            return !(fault.startsWith("(") || fault.startsWith("bird-") || fault.startsWith("cni-"));
        }
    }

    private FaultSuite(Cluster cluster, PrintStream out) {
        this.cluster = cluster;
        this.out = out;
    }

    /** {@code launcher faults}: runs the suite; exit 0 when every verdict passed, 1 otherwise. */
    public static int faults(Cluster cluster, PrintStream out) {
        return new FaultSuite(cluster, out).run();
    }

    /** {@code launcher probe ...}: the prober (inside a pod's namespace). */
    public static int probe(List<String> args, PrintStream out, PrintStream err) {
        return Prober.main(args, out, err);
    }

    private record Pod(String ip, String node) {
    }

    private Pod pod(String name) {
        Path dir = cluster.runDir().resolve("pods").resolve(name.replace('/', '.'));
        try {
            return new Pod(Files.readString(dir.resolve("ip")).strip(), Files.readString(dir.resolve("node")).strip());
        } catch (IOException e) {
            throw new IllegalStateException("pod " + name + " is not up (" + dir + "): " + e.getMessage());
        }
    }

    private int run() {
        Pod server = pod(SERVER), denied = pod(DENIED);
        String node = server.node();
        String loop = "traffic-" + CLIENT.replace('/', '-') + "-" + SERVER.replace('/', '-') + "-tcp-" + SERVER_PORT;
        Optional<Long> loopPid = cluster.pid(loop);
        loopPid.ifPresent(p -> Shell.run("kill", "-STOP", "--", "-" + p));
        List<String> order = new ArrayList<>(List.of("goldmane", "whisker", datastoreService(),
                "typha", "felix-" + node, "bird-" + node));
        order.removeIf(s -> cluster.pid(s).isEmpty() && !s.startsWith("felix"));
        Process prober = null;
        long proberStart = System.currentTimeMillis();
        try (KernelMonitor kernel = new KernelMonitor(cluster.nodeNamespaces())) {
            prober = startProber(server, denied);
            awaitFirstProbes();
            long baseline = System.currentTimeMillis();
            pause(SETTLE_MILLIS);
            windows.add(new Window("(none: baseline)", baseline, baseline, baseline, baseline, System.currentTimeMillis(), false, ""));
            for (String service : order) {
                if (!failedRestart) {
                    windows.add(kill(service, "", () -> { }, false));
                }
            }
            if (!failedRestart) {
                windows.addAll(new CniInterruption(cluster, node, this::kill, verdicts::add).run());
            } else {
                verdicts.add("FAIL: faults: a service did not come back; the faults after it were skipped");
            }
            long proberEnd = System.currentTimeMillis();
            pause(1_500); // the last probes' answers (or time-outs) arrive
            prober.destroy();
            List<String[]> rows = figures(kernel, proberStart, proberEnd);
            report(rows);
        } finally {
            if (prober != null) {
                prober.destroyForcibly();
            }
            loopPid.ifPresent(p -> Shell.run("kill", "-CONT", "--", "-" + p));
        }
        verdicts.forEach(out::println);
        return verdicts.stream().anyMatch(v -> v.startsWith("FAIL")) ? 1 : 0;
    }

    /** The service holding Calico's datastore, as {@code ./calico} records it: kube-apiserver, etcd, or apiserver-service (memory). */
    private String datastoreService() {
        String datastore;
        try {
            datastore = Files.readString(cluster.runDir().resolve("datastore")).strip();
        } catch (IOException e) {
            datastore = "kubernetes";
        }
        return switch (datastore) {
            case "etcd" -> "etcd";
            case "memory" -> "apiserver";
            default -> "kube";
        };
    }

    private Process startProber(Pod server, Pod denied) {
        String netns = cluster.prefix() + "pod-" + CLIENT.replace('/', '-');
        List<String> cmd = List.of("ip", "netns", "exec", netns, "java", "-XX:TieredStopAtLevel=1", "-Xmx64m", "-cp",
                cluster.root().resolve("launcher/target/launcher.jar").toString(), "calico.launcher.Main", "probe",
                server.ip() + ":" + SERVER_PORT, "reply from " + SERVER, denied.ip() + ":" + DENIED_PORT, "900");
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the prober: " + cmd, e);
        }
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    Probe probe = Probe.parse(line);
                    if (probe != null) {
                        probes.add(probe);
                    } else {
                        out.println("prober: " + line);
                    }
                }
            } catch (IOException e) {
                // stopped
            }
        }, "prober");
        t.setDaemon(true);
        t.start();
        return p;
    }

    private void awaitFirstProbes() {
        long deadline = System.currentTimeMillis() + 30_000;
        while (probes.size() < 10) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the prober sent no probe within 30 s");
            }
            pause(100);
        }
    }

    /** The kill of one service: what to start just before (the CNI call it interrupts). */
    @FunctionalInterface
    interface Killer {
        Window kill(String service, String label, Runnable beforeKill, boolean kernelMayChange);
    }

    /** Runs {@code beforeKill}, kills {@code service} with SIGKILL, starts it again, waits until it is ready and settles. */
    Window kill(String service, String label, Runnable beforeKill, boolean kernelMayChange) {
        String name = service + label;
        long pid = cluster.pid(service).orElseThrow(() -> new IllegalStateException(service + " does not run before its fault"));
        beforeKill.run();
        out.println("faults: killing " + name + " (pid " + pid + ")");
        long killed = System.currentTimeMillis();
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        awaitGone(pid);
        long[] back = {-1};
        Thread watcher = new Thread(() -> {
            while (back[0] < 0 && !Thread.currentThread().isInterrupted()) {
                Optional<Long> now = cluster.pid(service);
                if (now.isPresent() && now.get() != pid) {
                    back[0] = System.currentTimeMillis();
                    return;
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "back-" + service);
        watcher.start();
        String note = "";
        try {
            cluster.restart(service);
        } catch (RuntimeException e) {
            note = "did not come back: " + firstLine(e.getMessage());
            verdicts.add("FAIL: fault " + name + ": " + note);
            failedRestart = true;
        }
        long ready = System.currentTimeMillis();
        watcher.interrupt();
        long recovered = ready;
        long deadline = ready + RECOVERY_TIMEOUT_MILLIS;
        while (note.isEmpty() && !cluster.nodesRecovered()) {
            if (System.currentTimeMillis() > deadline) {
                note = "the nodes' services not ready and connected " + RECOVERY_TIMEOUT_MILLIS / 1000 + " s after " + name + " was";
                verdicts.add("FAIL: fault " + name + ": " + note);
                break;
            }
            pause(100);
            recovered = System.currentTimeMillis();
        }
        pause(SETTLE_MILLIS);
        long end = System.currentTimeMillis();
        return new Window(name, killed, back[0] < 0 ? ready : Math.min(back[0], ready), ready, recovered, end, kernelMayChange, note);
    }

    private List<String[]> figures(KernelMonitor kernel, long proberStart, long proberEnd) {
        FlowBuckets buckets = FlowBuckets.GOLDMANE;
        long from = buckets.boundaryAtOrAfter(proberStart + 2_000);
        long to = buckets.bucketOf(proberEnd);
        Map<String, List<FlowBuckets.Bucket>> ledger = flowLedger(buckets, from, to);
        List<String[]> rows = new ArrayList<>();
        List<Probe> all;
        synchronized (probes) {
            all = List.copyOf(probes);
        }
        // The raw material, for a failure's post-mortem (the local suite keeps the logs).
        dump("faults-probes.log", all.stream().map(Probe::line).toList());
        dump("faults-kernel.log", kernel.between(0, Long.MAX_VALUE).stream().map(c -> c.at() + " " + c.namespace() + " " + c.line()).toList());
        dump("faults-windows.log", windows.stream().map(Window::toString).toList());
        List<FlowBuckets.Span> spans = windows.stream().map(w -> new FlowBuckets.Span(w.killed(), w.end(), w.carriesFlows())).toList();
        for (Window w : windows) {
            ProbeScore score = ProbeScore.of(all, w.killed(), w.end());
            long recover = Math.max(w.recovered(), score.normalAgainAt(w.ready(), Prober.INTERVAL_MILLIS)) - w.ready();
            List<KernelMonitor.Change> changes = kernel.between(w.killed(), w.end());
            boolean baseline = w.fault().startsWith("(");
            if (!baseline) {
                verdicts.add((score.errors() == 0 ? "PASS" : "FAIL") + ": fault " + w.fault() + ": " + score.errors()
                        + " probe errors of " + score.probes() + " (" + score.allowedErrors() + " allowed failed, "
                        + score.deniedErrors() + " denied got through)");
            }
            if (!w.kernelMayChange()) {
                verdicts.add((changes.isEmpty() ? "PASS" : "FAIL") + ": fault " + w.fault() + ": " + changes.size()
                        + " kernel changes (nft monitor, ip monitor route)" + (changes.isEmpty() ? "" : "; first: " + changes.get(0)));
            }
            int index = windows.indexOf(w);
            String lost = ledger.isEmpty() ? "n/a" : ledger.entrySet().stream()
                    .map(e -> e.getKey() + " " + (w.end() <= from || w.killed() >= to ? "n/a"
                            : Long.toString(buckets.lostPerSpan(e.getValue(), spans)[index])))
                    .reduce((a, b) -> a + ", " + b).orElse("");
            rows.add(new String[] {w.fault(), score.errors() + " (" + score.allowedErrors() + "/" + score.deniedErrors() + " of "
                    + score.probes() + ")", baseline ? "—" : (w.back() - w.killed()) + " / " + (w.ready() - w.back()) + " / " + recover,
                    Integer.toString(changes.size()), lost,
                    w.note()});
        }
        ledger.forEach((reporter, list) -> {
            long sent = list.stream().mapToLong(FlowBuckets.Bucket::sent).sum();
            long recorded = list.stream().mapToLong(FlowBuckets.Bucket::recorded).sum();
            out.println("flows (" + reporter + "): " + list.size() + " buckets from " + from / 1000 + ": sent " + sent + ", recorded "
                    + recorded + ", per bucket " + list.stream().map(b -> b.sent() + "/" + b.recorded()).toList());
        });
        return rows;
    }

    /** Per reporter, the buckets of {@code [from, to)}: the prober's connections against goldmane's (through whisker). */
    private Map<String, List<FlowBuckets.Bucket>> flowLedger(FlowBuckets buckets, long from, long to) {
        Map<String, List<FlowBuckets.Bucket>> ledger = new LinkedHashMap<>();
        Path tokenFile = cluster.runDir().resolve("whisker-token");
        if (cluster.pid("whisker").isEmpty() || !Files.exists(tokenFile) || to <= from) {
            out.println("faults: flows not counted (whisker not running, or no whole bucket)");
            return ledger;
        }
        pause(Math.max(0, to + FLUSH_MILLIS - System.currentTimeMillis()));
        WhiskerFlows whisker;
        try {
            whisker = new WhiskerFlows(URI.create("http://127.0.0.1:" + System.getenv().getOrDefault("CALICO_WHISKER_PORT", "8081")),
                    Files.readString(tokenFile).strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        WhiskerFlows.FlowKey key = new WhiskerFlows.FlowKey(CLIENT, SERVER, "tcp", SERVER_PORT);
        Map<Long, Long> sent;
        synchronized (probes) {
            sent = buckets.sent(probes, from, to);
        }
        Map<String, Map<Long, Long>> recorded = new LinkedHashMap<>(Map.of("Dst", new LinkedHashMap<>(), "Src", new LinkedHashMap<>()));
        for (long b = from; b < to; b += buckets.bucketMillis()) {
            long start = b;
            whisker.connections(key, b, b + buckets.bucketMillis()).forEach((reporter, n) ->
                    recorded.computeIfAbsent(reporter, r -> new LinkedHashMap<>()).put(start, n));
        }
        recorded.forEach((reporter, byBucket) -> ledger.put(reporter, FlowBuckets.compare(sent, byBucket)));
        return ledger;
    }

    private void report(List<String[]> rows) {
        StringBuilder t = new StringBuilder();
        t.append("| fault (SIGKILL) | probe errors (allowed/denied of probes) | killed→back / back→ready / ready→recovered (ms) | kernel changes | connections lost (per reporter) | note |\n");
        t.append("|---|---|---|---|---|---|\n");
        for (String[] r : rows) {
            t.append("| ").append(String.join(" | ", r)).append(" |\n");
        }
        out.print(t);
        try {
            Path file = cluster.runDir().resolve("logs").resolve("faults.md");
            Files.createDirectories(file.getParent());
            Files.writeString(file, t.toString());
        } catch (IOException e) {
            out.println("faults: cannot write the table: " + e.getMessage());
        }
    }

    /** SIGKILL is asynchronous: a JVM's threads and sockets go a moment later; its ports are free once it is gone, or a zombie with no thread left. */
    private static void awaitGone(long pid) {
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline) {
            Optional<ProcessHandle> h = ProcessHandle.of(pid);
            if (h.isEmpty() || !h.get().isAlive() || zombie(pid) && threads(pid) <= 1) {
                return;
            }
            pause(10);
        }
        throw new IllegalStateException("pid " + pid + " still runs 30 s after SIGKILL");
    }

    /** A JVM's main thread turns zombie first; its other threads (and its sockets) go after. */
    private static long threads(long pid) {
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            return tasks.count();
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    private static boolean zombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    private static String firstLine(String s) {
        String line = s == null ? "" : s.lines().findFirst().orElse("");
        return line.length() > 200 ? line.substring(0, 200) + "…" : line;
    }

    private void dump(String file, List<String> lines) {
        try {
            Path f = cluster.runDir().resolve("logs").resolve(file);
            Files.createDirectories(f.getParent());
            Files.write(f, lines);
        } catch (IOException e) {
            out.println("faults: cannot write " + file + ": " + e.getMessage());
        }
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
