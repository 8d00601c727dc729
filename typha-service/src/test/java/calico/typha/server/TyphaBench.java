package calico.typha.server;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.proto.ClientHello;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.KV;
import calico.libcalico.typha.proto.KVs;
import calico.libcalico.typha.proto.Pong;
import calico.libcalico.typha.proto.ServerMessage;
import calico.libcalico.typha.proto.SyncStatus;
import calico.libcalico.typha.proto.TyphaGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Typha under load (printed figures, not a test). Typha runs in a child JVM (so its heap is
 * measured alone) over a memory datastore holding N GlobalNetworkSets; C lightweight protocol
 * clients in this JVM connect at once; then U updates/s for S seconds, each stamped with
 * {@code System.nanoTime()} (CLOCK_MONOTONIC, shared by both JVMs) in a label, give the delay
 * from datastore write to receipt by each client.
 *
 * <p>{@code bench/run.sh typha-service calico.typha.server.TyphaBench [clients] [resources] [rate] [seconds]
 * [kvs-gzip|gzip|none] [inflate-all] [overlap] [cold] [direct|pool|grpc-pool]} (defaults 1000 20000 200 10 kvs-gzip): what the clients accept
 * (kvs-gzip as felix's TyphaClient), whether every client inflates the snapshot (default every 50th;
 * see {@link BenchClient}), and whether the updates run while the clients are still syncing
 * ("during catch-up") instead of after all are in sync ("steady state"); "cold" skips the warm-up
 * round (200 clients synced, eight seconds of updates, disconnected) that otherwise comes first.
 * Typha's own CPU time per phase is printed beside the wall-clock figures: on this shared machine
 * it is the measure of typha's cost that the clients and other load do not distort.
 */
public final class TyphaBench {

    private static final String STAMP = "\"bench-t\":\"";

    /** Seconds of updates in the warm-up round: enough sends for the JIT to finish the delta path. */
    private static final int WARM_UP_SECONDS = 8;

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("server")) {
            server(Integer.parseInt(args[1]));
            return;
        }
        int clients = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int resources = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        int seconds = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        Options opts = Options.parse(Arrays.copyOfRange(args, Math.min(4, args.length), args.length));

        // BENCH_TYPHA_CPUS / BENCH_CLIENT_CPUS (taskset lists, e.g. 0 and 1): pin typha's JVM and the
        // clients' JVM to separate CPUs, so that each side's CPU is its own and not the other's.
        String typhaCpus = System.getenv("BENCH_TYPHA_CPUS");
        String clientCpus = System.getenv("BENCH_CLIENT_CPUS");
        if (clientCpus != null && !clientCpus.isBlank()) {
            pin(ProcessHandle.current().pid(), clientCpus.trim());
        }
        List<String> childCmd = new ArrayList<>();
        if (typhaCpus != null && !typhaCpus.isBlank()) {
            childCmd.addAll(List.of("taskset", "-c", typhaCpus.trim()));
        }
        // Typha's JVM options as ./calico launches it: its line of scripts/lib/jvm-flags.conf
        // (BENCH_JVM_FLAGS_FILE: another file, e.g. bench/jvm-flags-main.conf for the options before issue 30).
        childCmd.add(javaBin());
        childCmd.addAll(typhaJvmFlags());
        // Extra JVM options for typha only, e.g. a JFR recording: BENCH_TYPHA_JVM_OPTS="-XX:StartFlightRecording=..."
        String extra = System.getenv("BENCH_TYPHA_JVM_OPTS");
        if (extra != null && !extra.isBlank()) {
            childCmd.addAll(Arrays.asList(extra.trim().split("\\s+")));
        }
        childCmd.addAll(List.of("-cp", System.getProperty("java.class.path"), TyphaBench.class.getName(), "server",
                String.valueOf(resources)));
        Process child = new ProcessBuilder(childCmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        // Drain the child's stdout continuously (its logs share it): a full pipe would stall typha.
        java.util.concurrent.BlockingQueue<String> in = new java.util.concurrent.LinkedBlockingQueue<>();
        BufferedReader childOut = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        Thread pump = new Thread(() -> {
            try {
                for (String line; (line = childOut.readLine()) != null; ) {
                    if (line.matches("^(PORT|HEAP|CPU|SEQ|UPDATES|QUIT|ERROR) .*")) {
                        in.add(line);
                    }
                }
            } catch (java.io.IOException ignored) {
                // child ended
            }
            in.add("EOF ");
        }, "child-stdout");
        pump.setDaemon(true);
        pump.start();
        PrintWriter out = new PrintWriter(child.getOutputStream(), true, StandardCharsets.UTF_8);
        try {
            int port = Integer.parseInt(expect(in, "PORT"));
            if (opts.warmup) {
                warmUp(port, Math.min(clients, 200), rate, in, out, opts, resources);
            }
            long heapBefore = Long.parseLong(command(in, out, "HEAP"));
            System.out.printf("typha: %d resources in sync, heap after GC %.1f MiB; clients: %s%n", resources,
                    heapBefore / 1048576.0, opts);
            System.out.printf("load average at start: %s; typha on CPUs %s, clients on CPUs %s%n", loadAverage(),
                    typhaCpus == null || typhaCpus.isBlank() ? "any" : typhaCpus.trim(),
                    clientCpus == null || clientCpus.isBlank() ? "any" : clientCpus.trim());

            Latencies latencies = new Latencies(clients * rate * seconds + clients * 16);
            CountDownLatch inSync = new CountDownLatch(clients);
            List<BenchClient> all = new ArrayList<>();
            long typhaCpu0 = Long.parseLong(command(in, out, "CPU"));
            long benchCpu0 = processCpuNanos();
            double[] split0 = userSys(child.pid());
            double[] sched0 = schedWait(child.pid());
            double[] benchSched0 = schedWait(ProcessHandle.current().pid());
            double[] benchSplit0 = userSys(ProcessHandle.current().pid());
            long t0 = System.nanoTime();
            if (opts.overlap) {
                out.println("UPDATES " + rate + " " + seconds); // answered later; the child writes while clients sync
            }
            for (int i = 0; i < clients; i++) {
                all.add(new BenchClient(port, "bench-" + i, opts.inflates(i), opts.compression, opts.callbacks, inSync, latencies));
            }
            boolean synced = inSync.await(300, TimeUnit.SECONDS);
            double syncSeconds = (System.nanoTime() - t0) / 1e9;
            long benchCpu1 = processCpuNanos();
            long written;
            long typhaCpu1;
            if (opts.overlap) {
                written = Long.parseLong(expect(in, "UPDATES"));
                typhaCpu1 = Long.parseLong(command(in, out, "CPU"));
            } else {
                typhaCpu1 = Long.parseLong(command(in, out, "CPU"));
                written = 0;
            }
            double[] split1 = userSys(child.pid());
            double[] benchSplit1 = userSys(ProcessHandle.current().pid());
            double[] sched1 = schedWait(child.pid());
            double[] benchSched1 = schedWait(ProcessHandle.current().pid());
            printSched(sched0, sched1, benchSched0, benchSched1);
            System.out.printf("%d clients: %s in %.2f s; typha CPU %.1f s (user %.1f, kernel %.1f), bench clients' CPU "
                            + "%.1f s (user %.1f, kernel %.1f); load average %s%n",
                    clients, synced ? "all in sync" : "NOT all in sync", syncSeconds, (typhaCpu1 - typhaCpu0) / 1e9,
                    split1[0] - split0[0], split1[1] - split0[1], (benchCpu1 - benchCpu0) / 1e9,
                    benchSplit1[0] - benchSplit0[0], benchSplit1[1] - benchSplit0[1], loadAverage());
            System.out.println("  " + SnapshotCheck.of(all, resources));
            System.out.printf("typha process with %d clients in sync: %s%n", clients, processFootprint(child.pid()));
            long heapWith = Long.parseLong(command(in, out, "HEAP"));
            System.out.printf("typha heap with %d clients %.1f MiB: %.1f KiB per client%n", clients,
                    heapWith / 1048576.0, (heapWith - heapBefore) / 1024.0 / clients);

            long seq0 = 0;
            String label = "during catch-up (updates written while the clients were connecting and syncing)";
            long typhaCpu2 = typhaCpu1;
            long benchCpu2 = benchCpu1;
            if (!opts.overlap) {
                label = "steady state (updates written after every client was in sync)";
                typhaCpu2 = Long.parseLong(command(in, out, "CPU"));
                benchCpu2 = processCpuNanos();
                split1 = userSys(child.pid());
                benchSplit1 = userSys(ProcessHandle.current().pid());
                sched1 = schedWait(child.pid());
                benchSched1 = schedWait(ProcessHandle.current().pid());
                seq0 = Long.parseLong(command(in, out, "SEQ"));
                written = Long.parseLong(command(in, out, "UPDATES " + rate + " " + seconds));
            }
            // During catch-up a client that started from a later snapshot receives the earlier
            // updates in it, not as deltas: fewer receipts than written × clients is expected there.
            long expected = written * clients;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int seen = -1;
            while (latencies.count() < expected && System.nanoTime() < deadline
                    && !(opts.overlap && latencies.count() == seen)) {
                seen = latencies.count();
                Thread.sleep(opts.overlap ? 3000 : 50);
            }
            long typhaCpu3 = Long.parseLong(command(in, out, "CPU"));
            long breadcrumbs = Long.parseLong(command(in, out, "SEQ")) - seq0;
            long benchCpu3 = processCpuNanos();
            double[] split3 = userSys(child.pid());
            double[] benchSplit3 = userSys(ProcessHandle.current().pid());
            printSched(sched1, schedWait(child.pid()), benchSched1, schedWait(ProcessHandle.current().pid()));
            System.out.printf("typha process after the deltas: %s%n", processFootprint(child.pid()));
            long[] sorted = latencies.sorted();
            int n = sorted.length;
            long reconnects = all.stream().filter(c -> c.failed.get() != null).count();
            System.out.printf("deltas %s:%n  %d written at %d/s, %d of %d receipts%s; latency write->client p50 %.1f ms, "
                            + "p99 %.1f ms, max %.1f ms; clients that lost their stream: %d%n",
                    label, written, rate, n, expected, opts.overlap ? " (the rest arrived inside snapshots)" : "",
                    pct(sorted, 0.50), pct(sorted, 0.99),
                    n == 0 ? 0 : sorted[n - 1] / 1e6, reconnects);
            if (!opts.overlap) {
                System.out.printf("  %d delta messages per client (%.1f updates each); typha CPU %.1f s (user %.1f, "
                                + "kernel %.1f; %.1f µs per message sent, %.2f µs per update received), bench clients' "
                                + "CPU %.1f s (user %.1f, kernel %.1f; %.1f µs per message received); load average %s%n",
                        breadcrumbs, written / (double) Math.max(1, breadcrumbs), (typhaCpu3 - typhaCpu2) / 1e9,
                        split3[0] - split1[0], split3[1] - split1[1],
                        (typhaCpu3 - typhaCpu2) / 1e3 / Math.max(1, breadcrumbs * clients),
                        (typhaCpu3 - typhaCpu2) / 1e3 / Math.max(1, n),
                        (benchCpu3 - benchCpu2) / 1e9, benchSplit3[0] - benchSplit1[0], benchSplit3[1] - benchSplit1[1],
                        (benchCpu3 - benchCpu2) / 1e3 / Math.max(1, breadcrumbs * clients), loadAverage());
            }
            all.forEach(BenchClient::close);
            command(in, out, "QUIT");
        } finally {
            child.destroy();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        System.exit(0);
    }

    /**
     * Connects {@code n} clients, lets them sync and receive {@link #WARM_UP_SECONDS} of updates, and closes
     * them: both JVMs then run compiled code, as a typha that has been up for a while does (a
     * cold JVM spends most of its first connection storm in the JIT compiler).
     */
    private static void warmUp(int port, int n, int rate, java.util.concurrent.BlockingQueue<String> in, PrintWriter out,
                               Options opts, int resources) throws Exception {
        long t0 = System.nanoTime();
        long typhaCpu0 = Long.parseLong(command(in, out, "CPU"));
        Latencies latencies = new Latencies(n * rate * WARM_UP_SECONDS + n * 16);
        CountDownLatch inSync = new CountDownLatch(n);
        List<BenchClient> warm = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            warm.add(new BenchClient(port, "warmup-" + i, opts.inflates(i), opts.compression, opts.callbacks, inSync, latencies));
        }
        if (!inSync.await(300, TimeUnit.SECONDS)) {
            throw new IllegalStateException("warm-up clients did not get in sync");
        }
        long written = Long.parseLong(command(in, out, "UPDATES " + rate + " " + WARM_UP_SECONDS));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (latencies.count() < written * n && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        warm.forEach(BenchClient::close);
        Thread.sleep(1000);
        System.out.printf("warm-up: %d clients synced and got %d updates in %.1f s (typha CPU %.1f s, cold JVMs)%n", n,
                written, (System.nanoTime() - t0) / 1e9, (Long.parseLong(command(in, out, "CPU")) - typhaCpu0) / 1e9);
    }

    /** What the clients offer in their hello and how many of them inflate the snapshot. */
    /**
     * Where a bench client's callbacks run. The clients stand in for felixes, which run on their
     * own nodes; here they share typha's two cores, so the lightest faithful client (every message
     * received, inflated if compressed, parsed, every KV's label read) distorts typha's figures
     * least. On the quiet machine the direct client cost ~31 µs per message received, run after
     * run; a shared pool swung between ~36 and ~77 µs (thread hand-offs and wake-ups), and
     * gRPC's cached pool (a thread per busy client) cost ~50 µs.
     */
    private enum Callbacks {
        /** On the transport's event-loop threads (the default): no hand-off per message. */
        DIRECT(", callbacks on the transport threads (direct executor)"),
        /** One pool, as many threads as CPUs, shared by every client. */
        POOL(", callbacks on one pool of " + Runtime.getRuntime().availableProcessors() + " threads shared by the clients"),
        /** gRPC's default executor per channel, an unbounded cached pool, as felix's TyphaClient. */
        GRPC_DEFAULT(", callbacks on gRPC's default executor (a cached pool)");

        final String description;

        Callbacks(String description) {
            this.description = description;
        }
    }

    private static final java.util.concurrent.ExecutorService CLIENT_CALLBACKS = java.util.concurrent.Executors
            .newFixedThreadPool(Runtime.getRuntime().availableProcessors(), r -> {
                Thread t = new Thread(r, "bench-callbacks");
                t.setDaemon(true);
                return t;
            });

    private record Options(String compression, int inflateEvery, boolean overlap, boolean warmup, Callbacks callbacks) {
        static Options parse(String[] args) {
            String compression = "kvs-gzip";
            int inflateEvery = 50;
            boolean overlap = false;
            boolean warmup = true;
            Callbacks callbacks = Callbacks.DIRECT;
            for (String a : args) {
                switch (a) {
                    case "kvs-gzip", "gzip", "none" -> compression = a;
                    case "inflate-all" -> inflateEvery = 1;
                    case "overlap" -> overlap = true;
                    case "cold" -> warmup = false;
                    case "direct" -> callbacks = Callbacks.DIRECT;
                    case "pool" -> callbacks = Callbacks.POOL;
                    case "grpc-pool" -> callbacks = Callbacks.GRPC_DEFAULT;
                    default -> throw new IllegalArgumentException("unknown option " + a
                            + " (kvs-gzip | gzip | none, inflate-all, overlap, cold, direct | pool | grpc-pool)");
                }
            }
            return new Options(compression, inflateEvery, overlap, warmup, callbacks);
        }

        /** {@return whether this client counts the snapshot's KVs (plain chunks are always counted)} */
        boolean inflates(int client) {
            return !compression.equals("kvs-gzip") || client % inflateEvery == 0;
        }

        @Override
        public String toString() {
            return "accept " + compression + (compression.equals("kvs-gzip") ? inflateEvery == 1
                    ? ", every client inflates and counts every snapshot chunk"
                    : ", every " + inflateEvery + "th client inflates the snapshot, the others checksum the compressed bytes"
                    : "") + (overlap ? ", updates during catch-up" : "")
                    + (warmup ? ", after a warm-up round" : ", cold JVMs")
                    + callbacks.description;
        }
    }

    private static String loadAverage() {
        try {
            return String.join(" ", Arrays.copyOf(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                    .split(" "), 3));
        } catch (java.io.IOException e) {
            return "?";
        }
    }

    /**
     * {@return seconds on a CPU and seconds runnable but waiting for one, summed over the live
     * threads of {@code pid}} (/proc/PID/task/TID/schedstat: the kernel's own accounting; a thread
     * that ended meanwhile is not counted)
     */
    /**
     * {@return seconds the live threads of {@code pid} ran and waited runnable for a CPU, and of
     * the run time the JIT compiler's and the garbage collector's shares} (schedstat per thread;
     * threads that ended meanwhile are not counted)
     */
    private static double[] schedWait(long pid) {
        double run = 0;
        double wait = 0;
        double jit = 0;
        double gc = 0;
        try (var tasks = java.nio.file.Files.list(java.nio.file.Path.of("/proc/" + pid + "/task"))) {
            for (java.nio.file.Path t : tasks.toList()) {
                try {
                    String[] f = java.nio.file.Files.readString(t.resolve("schedstat")).trim().split(" ");
                    String comm = java.nio.file.Files.readString(t.resolve("comm")).trim();
                    double ran = Long.parseLong(f[0]) / 1e9;
                    run += ran;
                    wait += Long.parseLong(f[1]) / 1e9;
                    if (comm.contains("CompilerThre")) {
                        jit += ran;
                    } else if (comm.startsWith("G1 ") || comm.startsWith("GC Thread")) {
                        gc += ran;
                    }
                } catch (java.io.IOException | RuntimeException e) {
                    // the thread ended
                }
            }
        } catch (java.io.IOException e) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN, Double.NaN};
        }
        return new double[] {run, wait, jit, gc};
    }

    private static void printSched(double[] t0, double[] t1, double[] b0, double[] b1) {
        System.out.printf("  scheduler: typha's threads ran %.1f s (JIT compiler %.1f s, GC %.1f s) and waited %.1f s "
                + "for a CPU while runnable; the clients' ran %.1f s (JIT %.1f s, GC %.1f s) and waited %.1f s%n",
                t1[0] - t0[0], t1[2] - t0[2], t1[3] - t0[3], t1[1] - t0[1],
                b1[0] - b0[0], b1[2] - b0[2], b1[3] - b0[3], b1[1] - b0[1]);
    }

    /** Pins every thread of process {@code pid} (and so the threads it starts) to {@code cpus}. */
    private static void pin(long pid, String cpus) throws Exception {
        Process p = new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, String.valueOf(pid))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("taskset -a -p -c " + cpus + " " + pid + " failed");
        }
    }

    /** {@return user and kernel CPU seconds of process {@code pid}} (from /proc/PID/stat, in clock ticks of 10 ms) */
    private static double[] userSys(long pid) {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // after "(comm) ": state is field 3, so utime (14) and stime (15) are at 11 and 12
            return new double[] {Long.parseLong(f[11]) / 100.0, Long.parseLong(f[12]) / 100.0};
        } catch (java.io.IOException | RuntimeException e) {
            return new double[] {Double.NaN, Double.NaN};
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Receipt latencies from all clients (lock-free append). */
    private static final class Latencies {
        private final long[] values;
        private final AtomicInteger count = new AtomicInteger();

        Latencies(int capacity) {
            values = new long[capacity];
        }

        void add(long nanos) {
            int i = count.getAndIncrement();
            if (i < values.length) {
                values[i] = nanos;
            }
        }

        int count() {
            return count.get();
        }

        long[] sorted() {
            long[] s = Arrays.copyOf(values, Math.min(count.get(), values.length));
            Arrays.sort(s);
            return s;
        }
    }

    /**
     * Proof that every client received the whole snapshot: clients that inflate count its KVs;
     * the others must have received byte-for-byte the same compressed chunks (same length, same CRC).
     */
    private record SnapshotCheck(long inflating, long inflatedComplete, long checksummed, long sameBytes, long kvsBytes) {
        static SnapshotCheck of(List<BenchClient> all, int resources) {
            BenchClient reference = all.stream().filter(c -> c.inflates).findFirst().orElseThrow();
            long inflating = all.stream().filter(c -> c.inflates).count();
            long complete = all.stream().filter(c -> c.inflates && c.snapshotKvs.get() == resources).count();
            long same = all.stream().filter(c -> !c.inflates && c.snapshotBytes.get() == reference.snapshotBytes.get()
                    && c.snapshotCrc == reference.snapshotCrc).count();
            return new SnapshotCheck(inflating, complete, all.size() - inflating, same, reference.snapshotBytes.get());
        }

        @Override
        public String toString() {
            return String.format("snapshot check: %d of %d counting clients saw every KV; %d of %d checksumming clients "
                    + "received the same %d snapshot bytes", inflatedComplete, inflating, sameBytes, checksummed, kvsBytes);
        }
    }

    private static double pct(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))] / 1e6;
    }

    private static String javaBin() {
        return java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** {@return typha's line of the JVM flags file} (words after the service name; {@code #} starts a comment). */
    private static List<String> typhaJvmFlags() throws java.io.IOException {
        String file = System.getenv().getOrDefault("BENCH_JVM_FLAGS_FILE", "scripts/lib/jvm-flags.conf");
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of(file))) {
            String[] w = line.replaceAll("#.*", "").trim().split("\\s+");
            if (w[0].equals("typha")) {
                List<String> flags = List.of(w).subList(1, w.length);
                System.out.println("typha's JVM options (" + file + "): " + String.join(" ", flags));
                return flags;
            }
        }
        throw new IllegalStateException(file + " has no line for typha");
    }

    /** {@return the child's resident memory and threads} ({@code /proc/<pid>/status}). */
    private static String processFootprint(long pid) {
        try {
            String rss = "?";
            String threads = "?";
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = String.format("%.1f MiB", Long.parseLong(line.substring(6).trim().split("\\s+")[0]) / 1024.0);
                } else if (line.startsWith("Threads:")) {
                    threads = line.substring(8).trim();
                }
            }
            return "RSS " + rss + ", " + threads + " threads";
        } catch (java.io.IOException e) {
            return "(no /proc/" + pid + "/status: " + e.getMessage() + ")";
        }
    }

    private static String expect(java.util.concurrent.BlockingQueue<String> in, String prefix) throws Exception {
        for (String line; !(line = in.take()).startsWith("EOF "); ) {
            if (line.startsWith(prefix + " ")) {
                return line.substring(prefix.length() + 1).trim();
            }
        }
        throw new IllegalStateException("typha child ended before " + prefix);
    }

    private static String command(java.util.concurrent.BlockingQueue<String> in, PrintWriter out, String cmd) throws Exception {
        out.println(cmd);
        return expect(in, cmd.split(" ")[0]);
    }

    // ---- child: typha over a memory datastore ----

    private static void server(int resources) throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        for (int i = 0; i < resources; i++) {
            ds.create(set("gns-" + i, Map.of(), i));
        }
        TyphaServer typha = new TyphaServer(ds, ServerSettings.defaults(0).withMaxConnections(100_000),
                null, new SimpleMeterRegistry(), new HealthAggregator(Clock.systemUTC()), "bench");
        typha.start();
        while (typha.status(SyncerType.FELIX) != SyncerStatus.IN_SYNC || typha.status(SyncerType.BGP) != SyncerStatus.IN_SYNC) {
            Thread.sleep(20);
        }
        System.out.println("PORT " + typha.port());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.split(" ");
            switch (w[0]) {
                case "CPU" -> System.out.println("CPU " + processCpuNanos());
                case "SEQ" -> System.out.println("SEQ " + typha.sequence(SyncerType.FELIX));
                case "HEAP" -> {
                    for (int i = 0; i < 3; i++) {
                        System.gc();
                        Thread.sleep(200);
                    }
                    System.out.println("HEAP " + ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
                }
                case "UPDATES" -> {
                    int rate = Integer.parseInt(w[1]);
                    int seconds = Integer.parseInt(w[2]);
                    long interval = 1_000_000_000L / rate;
                    long start = System.nanoTime();
                    long n = (long) rate * seconds;
                    for (long i = 0; i < n; i++) {
                        long due = start + i * interval;
                        long wait;
                        while ((wait = due - System.nanoTime()) > 0) {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        }
                        String name = "gns-" + (i % resources);
                        var current = ds.get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, name)).orElseThrow();
                        ds.update(set(name, Map.of("bench-t", String.valueOf(System.nanoTime())), (int) i)
                                .withMetadata(current.metadata().withLabels(
                                        Map.of("bench-t", String.valueOf(System.nanoTime())))));
                    }
                    System.out.println("UPDATES " + n);
                }
                case "QUIT" -> {
                    System.out.println("QUIT bye");
                    typha.close();
                    System.exit(0);
                }
                default -> System.out.println("ERROR unknown command " + line);
            }
        }
        System.exit(0);
    }

    private static GlobalNetworkSet set(String name, Map<String, String> labels, int variant) {
        return new GlobalNetworkSet(ObjectMeta.named(name).withLabels(labels),
                new GlobalNetworkSetSpec(List.of("10." + (variant % 250) + "." + (variant / 250 % 250) + ".0/24")));
    }

    /**
     * The Sync method with a response marshaller that reads every byte of every message and skims
     * plain snapshot chunks (counts their KVs without building objects); everything else is
     * parsed. The bench measures typha and the transport, not 1 000 clients' protobuf decoding
     * sharing this JVM's two cores.
     */
    private static final io.grpc.MethodDescriptor<ClientMessage, ServerMessage> SKIMMING_SYNC =
            TyphaGrpc.getSyncMethod().toBuilder(io.grpc.protobuf.ProtoUtils.marshaller(ClientMessage.getDefaultInstance()),
                    new io.grpc.MethodDescriptor.Marshaller<ServerMessage>() {
                        @Override
                        public java.io.InputStream stream(ServerMessage value) {
                            throw new UnsupportedOperationException();
                        }

                        @Override
                        public ServerMessage parse(java.io.InputStream in) {
                            try {
                                byte[] b = in.readAllBytes();
                                ServerMessage skimmed = skimSnapshot(b);
                                return skimmed != null ? skimmed : ServerMessage.parseFrom(b);
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }
                    }).build();

    /** {@return a snapshot chunk with its KVs replaced by empty ones (same count), or null if not a plain chunk} */
    private static ServerMessage skimSnapshot(byte[] b) throws java.io.IOException {
        var top = com.google.protobuf.CodedInputStream.newInstance(b);
        int tag = top.readTag();
        if (tag != ((2 << 3) | 2)) { // ServerMessage.kvs
            return null;
        }
        KVs skimmed = skimKvs(top.readByteArray());
        return skimmed == null ? null : ServerMessage.newBuilder().setKvs(skimmed).build();
    }

    /** {@return a serialised snapshot KVs with its KVs replaced by empty ones (same count), or null for deltas} */
    private static KVs skimKvs(byte[] serialised) throws java.io.IOException {
        var kvs = com.google.protobuf.CodedInputStream.newInstance(serialised);
        int count = 0;
        boolean snapshot = false;
        boolean last = false;
        for (int t; (t = kvs.readTag()) != 0; ) {
            switch (t >>> 3) {
                case 1 -> {
                    count++;
                    kvs.skipField(t);
                }
                case 2 -> snapshot = kvs.readBool();
                case 3 -> last = kvs.readBool();
                default -> kvs.skipField(t);
            }
        }
        if (!snapshot) {
            return null;
        }
        KVs.Builder out = KVs.newBuilder().setSnapshot(true).setLastSnapshotChunk(last);
        for (int i = 0; i < count; i++) {
            out.addKvs(KV.getDefaultInstance());
        }
        return out.build();
    }

    /**
     * A protocol client that does what felix's must at the least, and no more: its own TCP
     * connection, the hello, a pong for every ping, every byte of every message received. Plain
     * snapshot chunks are skimmed (KVs counted, not built); compressed snapshot chunks are either
     * inflated and counted ({@code inflates}) or CRC-checked (every byte read; {@link SnapshotCheck}
     * proves they equal what an inflating client counted). Every delta message is inflated if
     * compressed and parsed, and the write time in each KV's label gives one latency sample.
     */
    private static final class BenchClient implements ClientResponseObserver<ClientMessage, ServerMessage> {
        private final ManagedChannel channel;
        private final CountDownLatch inSync;
        private final Latencies latencies;
        final boolean inflates;
        final AtomicLong snapshotKvs = new AtomicLong();
        final AtomicLong snapshotBytes = new AtomicLong();
        private final java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        private final calico.libcalico.typha.KvsInflater inflater = new calico.libcalico.typha.KvsInflater(); // as TyphaClient's
        volatile long snapshotCrc;
        final java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        private ClientCallStreamObserver<ClientMessage> requests;
        private boolean synced;

        BenchClient(int port, String host, boolean inflates, String compression, Callbacks callbacks, CountDownLatch inSync,
                    Latencies latencies) {
            this.inSync = inSync;
            this.latencies = latencies;
            this.inflates = inflates;
            NettyChannelBuilder b = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext();
            this.channel = switch (callbacks) {
                case POOL -> b.executor(CLIENT_CALLBACKS).build();
                case GRPC_DEFAULT -> b.build();
                case DIRECT -> b.directExecutor().build();
            };
            var req = io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
                    channel.newCall(SKIMMING_SYNC, io.grpc.CallOptions.DEFAULT), this);
            ClientHello.Builder hello = ClientHello.newBuilder().setHostname(host).setSyncerType("felix");
            if (!compression.equals("none")) {
                hello.addAcceptedCompression(compression);
            }
            req.onNext(ClientMessage.newBuilder().setHello(hello).build());
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<ClientMessage> r) {
            requests = r;
        }

        @Override
        public void onNext(ServerMessage m) {
            long now = System.nanoTime();
            try {
                switch (m.getPayloadCase()) {
                    case KVS -> onKvs(m.getKvs(), now);
                    case COMPRESSED_KVS -> {
                        if (synced) { // the snapshot (and its IN_SYNC) came first: this is a delta
                            onKvs(inflater.inflate(m.getCompressedKvs()), now);
                        } else {
                            com.google.protobuf.ByteString gz = m.getCompressedKvs().getGzip();
                            for (java.nio.ByteBuffer buf : gz.asReadOnlyByteBufferList()) {
                                crc.update(buf);
                            }
                            snapshotBytes.addAndGet(gz.size());
                            if (inflates) {
                                onKvs(skimKvs(inflater.inflateBytes(m.getCompressedKvs())), now);
                            }
                        }
                    }
                    case STATUS -> {
                        if (m.getStatus().getStatus() == SyncStatus.IN_SYNC && !synced) {
                            synced = true;
                            snapshotCrc = crc.getValue();
                            inSync.countDown();
                        }
                    }
                    case PING -> requests.onNext(ClientMessage.newBuilder().setPong(Pong.newBuilder()
                            .setPingSentUnixNanos(m.getPing().getSentUnixNanos())).build());
                    default -> { }
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        private void onKvs(KVs kvs, long now) {
            if (kvs.getSnapshot()) {
                snapshotKvs.addAndGet(kvs.getKvsCount());
                return;
            }
            for (KV kv : kvs.getKvsList()) {
                String json = kv.getValueJson().toStringUtf8();
                int at = json.indexOf(STAMP);
                if (at >= 0) {
                    int from = at + STAMP.length();
                    latencies.add(now - Long.parseLong(json.substring(from, json.indexOf('"', from))));
                }
            }
        }

        @Override
        public void onError(Throwable t) {
            failed.set(t);
        }

        @Override
        public void onCompleted() {
            failed.set(new IllegalStateException("completed"));
        }

        void close() {
            requests.cancel("bench over", null);
            channel.shutdownNow();
        }
    }
}
