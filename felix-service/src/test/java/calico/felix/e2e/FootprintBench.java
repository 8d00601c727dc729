package calico.felix.e2e;

import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.libcalico.testing.Await;
import calico.api.model.TierSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Issue 30's footprint benchmark: every long-running service of {@code ./calico up} started as
 * {@code ./calico} starts it (the same jars and environment; the node's felix, CNI daemon, confd
 * and BIRD through the launcher's own {@code startup}/{@code up}, so through {@code NodeServices}),
 * with the JVM options of a flags file, and for each service: RSS (and its part that maps files: the JDK's and
 * an AppCDS archive's pages, shared by every JVM mapping them), heap used (as it is, and after
 * a full collection), threads, the time from process start to ready, and its JVM options.
 *
 * <p>Each cycle has its own etcd (tmpfs), free ports, a run dir of its own and namespaces
 * {@code ft-underlay}/{@code ft-node-1} ({@code --prefix=P}: {@code P} instead of {@code ft-}, so that two benches
 * can run side by side; never {@code ./calico up}'s fixed ports or {@code calico-}
 * names); one node, BGP (confd + BIRD run). Two flags files are compared, alternating their
 * order each round so that a load change on the machine hits both: {@code --before=FILE}
 * (default {@code bench/jvm-flags-main.conf}, the options before issue 30) and {@code --after=FILE}
 * (default {@code scripts/lib/jvm-flags.conf}, what {@code ./calico} uses). Scales: {@code demo}
 * (4 endpoints on the node, 6 policies) and {@code policy} (PolicyScaleBench's: 2,000 policies,
 * 500 endpoints on the node and 1,500 elsewhere), written after calico-node's start-up and before
 * the services start, so start-up includes the catch-up. The load average is printed beside each
 * cycle. Differences from {@code ./calico up}: the etcd datastore (its default is kubernetes), no
 * kube-controllers (it needs the Kubernetes API) and no flow sink (goldmane's {@code PUSH_URL}).
 *
 * <p>Run (as root, after {@code mvn install}: it runs the packaged jars):
 * {@code bench/run.sh felix-service calico.felix.e2e.FootprintBench [--rounds=2] [--scales=demo,policy]
 * [--settle=20] [--before=FILE] [--before-root=DIR] [--after=FILE] [--variants=before,after] [--prefix=ft-]}: {@code --before-root}
 * runs the "before" cycles from another tree's jars ({@code DIR/MODULE/target/JAR}, e.g. a copy of the previous
 * build's), so that a pair compares two builds in the same run, not only two sets of options; a service whose options have
 * {@code -XX:NativeMemoryTracking=summary} also gets its committed memory by category printed.
 */
public final class FootprintBench {

    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final String NODE = "node-1";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    private FootprintBench() {
    }

    /** One measured service. */
    record Figures(String service, long rssKiB, long rssFileKiB, long heapUsedKiB, long heapAfterGcKiB, int threads, long readyMs,
                   long readyCpuMs, String flags) {
    }

    /** One cycle: a scale, a flags file, when, at what load. */
    record Cycle(String scale, String variant, int round, String load, List<Figures> services) {
    }

    public static void main(String[] args) throws Exception {
        int rounds = 2;
        int settle = 20;
        List<String> scales = List.of("demo", "policy");
        List<String> which = List.of("before", "after");
        Path before = ROOT.resolve("bench/jvm-flags-main.conf");
        Path after = ROOT.resolve("scripts/lib/jvm-flags.conf");
        Path beforeRoot = ROOT;
        String prefix = "ft-";
        for (String a : args) {
            if (a.startsWith("--rounds=")) {
                rounds = Integer.parseInt(a.substring(9));
            } else if (a.startsWith("--scales=")) {
                scales = List.of(a.substring(9).split(","));
            } else if (a.startsWith("--prefix=")) {
                prefix = a.substring(9);
            } else if (a.startsWith("--settle=")) {
                settle = Integer.parseInt(a.substring(9));
            } else if (a.startsWith("--before=")) {
                before = Path.of(a.substring(9)).toAbsolutePath();
            } else if (a.startsWith("--variants=")) {
                which = List.of(a.substring(11).split(","));
            } else if (a.startsWith("--before-root=")) {
                beforeRoot = Path.of(a.substring(14)).toAbsolutePath();
            } else if (a.startsWith("--after=")) {
                after = Path.of(a.substring(8)).toAbsolutePath();
            } else {
                throw new IllegalArgumentException("unknown option " + a
                        + " (--rounds=N, --scales=demo,policy, --settle=S, --before=FILE, --before-root=DIR, --after=FILE, --prefix=P)");
            }
        }
        // felix's jar is felix-service-exec.jar since it is a plain main; a root of an older tree has felix-service.jar.
        for (String jar : List.of("launcher/target/launcher.jar", "felix-service/target/felix-service-exec.jar",
                "typha-service/target/typha-service-exec.jar", "goldmane-service/target/goldmane-service-exec.jar",
                "whisker-backend/target/whisker-backend-exec.jar", "cni-plugin/target/cni-plugin.jar",
                "confd-service/target/confd-service-exec.jar", "node-startup/target/node-startup-exec.jar")) {
            for (Path root : List.of(ROOT, beforeRoot)) {
                if (!Files.isRegularFile(root.resolve(jar)) && !(jar.startsWith("felix-service/") && root != ROOT
                        && Files.isRegularFile(root.resolve("felix-service/target/felix-service.jar")))) {
                    throw new IllegalStateException("no " + root.resolve(jar) + ": run mvn install first (the bench runs the packaged jars)");
                }
            }
        }
        Map<String, Path> variants = Map.of("before", before, "after", after);
        Map<String, Path> roots = Map.of("before", beforeRoot, "after", ROOT);
        List<Cycle> cycles = new ArrayList<>();
        for (String scale : scales) {
            for (int r = 1; r <= rounds; r++) {
                List<String> order = new ArrayList<>(which);
                if (r % 2 == 0) {
                    java.util.Collections.reverse(order);
                }
                for (String v : order) {
                    Cycle c = cycle(scale, v, r, variants.get(v), roots.get(v), settle, prefix);
                    cycles.add(c);
                    print(List.of(c));
                }
            }
        }
        System.out.printf("%n== all cycles (before: %s, after: %s)%n", ROOT.relativize(before), ROOT.relativize(after));
        print(cycles);
        System.exit(0);
    }

    private static void print(List<Cycle> cycles) {
        System.out.printf("%-7s %-7s %-3s %-16s %-9s %8s %8s %9s %9s %8s %8s %8s  %s%n", "scale", "flags", "rnd", "load",
                "service", "RSS MiB", "of files", "heap MiB", "after GC", "threads", "ready s", "CPU s", "JVM options");
        for (Cycle c : cycles) {
            long sum = 0;
            for (Figures f : c.services()) {
                System.out.printf(Locale.ROOT, "%-7s %-7s %-3d %-16s %-9s %8.1f %8.1f %9.1f %9.1f %8d %8.2f %8.2f  %s%n", c.scale(),
                        c.variant(), c.round(), c.load(), f.service(), f.rssKiB() / 1024.0, f.rssFileKiB() / 1024.0, f.heapUsedKiB() / 1024.0,
                        f.heapAfterGcKiB() / 1024.0, f.threads(), f.readyMs() / 1000.0, f.readyCpuMs() / 1000.0,
                        f.flags().isEmpty() ? "(none)" : f.flags());
                if (f.service().equals("felix") || f.service().equals("confd") || f.service().equals("cni")) {
                    sum += f.rssKiB();
                }
            }
            System.out.printf(Locale.ROOT, "%-7s %-7s %-3d felix + confd + CNI daemon: %.1f MiB RSS%n", c.scale(),
                    c.variant(), c.round(), sum / 1024.0);
        }
    }

    /** A service this bench started itself (the cluster-wide ones, as {@code ./calico} does). */
    private record Started(String name, Process process, BooleanSupplier ready) {
    }

    private static Cycle cycle(String scale, String variant, int round, Path flagsFile, Path root, int settle, String prefix)
            throws Exception {
        String load = loadAverage();
        System.out.printf("%n== %s scale, %s flags (%s), jars of %s, round %d, load %s%n", scale, variant, ROOT.relativize(flagsFile),
                root, round, load);
        Path run = Files.createTempDirectory("ft-run-");
        Map<String, List<String>> flags = readFlags(flagsFile);
        List<Started> started = new ArrayList<>();
        Map<String, Long> pids = new LinkedHashMap<>();
        Map<String, Long> readyMs = new LinkedHashMap<>();
        Map<String, Long> readyCpuMs = new LinkedHashMap<>();
        boolean[] measured = {false};
        try (BenchStore.Etcd store = BenchStore.Etcd.start()) {
            // The flags file's env line is every JVM's environment (./calico exports it), the launcher's too.
            Map<String, String> datastore = new LinkedHashMap<>(Map.of("DATASTORE_TYPE", "etcdv3", "ETCD_ENDPOINTS",
                    store.etcd().endpoint().toString()));
            datastore.putAll(environment(flags));
            int typhaPort = freePort(), typhaHealth = freePort(), typhaAdmin = freePort();
            int goldmanePort = freePort(), goldmaneHealth = freePort(), goldmaneAdmin = freePort();
            int whiskerPort = freePort(), whiskerHealth = freePort();
            int felixHealth = freePort(), felixAdmin = freePort(), felixMetrics = freePort();
            int confdHealth = freePort(), confdAdmin = freePort(), cniHttp = freePort();
            List<String> launcherArgs = List.of("--run-dir", run.toString(), "--root", root.toString(), "--nodes", "1",
                    "--prefix", prefix, "--underlay", "172.31.250", "--encapsulation", "none", "--dataplane", "nftables",
                    "--typha", "127.0.0.1:" + typhaPort, "--goldmane", "127.0.0.1:" + goldmanePort,
                    "--kubeconfig", run.resolve("no.kubeconfig").toString(),
                    "--felix-health-port", "" + felixHealth, "--felix-admin-port", "" + felixAdmin,
                    "--felix-metrics-port", "" + felixMetrics, "--confd-health-port", "" + confdHealth,
                    "--confd-admin-port", "" + confdAdmin, "--cni-http-port", "" + cniHttp, "--port-stride", "100",
                    "--jvm-flags", flagsFile.toString());
            try {
                launcher(root, "startup", launcherArgs, datastore, run);
                write(store, scale);

                // As ./calico: goldmane, typha, the nodes, whisker; each waited for before the next.
                Map<String, String> goldmaneEnv = new LinkedHashMap<>(environment(flags));
                goldmaneEnv.putAll(Map.of("PORT", "" + goldmanePort, "HOST", "127.0.0.1",
                        "HEALTH_HOST", "127.0.0.1", "HEALTH_PORT", "" + goldmaneHealth, "ADMIN_PORT", "" + goldmaneAdmin,
                        "SNAPSHOT_DIR", run.resolve("goldmane").toString(), "AGGREGATION_WINDOW", "5s"));
                awaitStarted(start(root, "goldmane", flagsFile, "goldmane-service/target/goldmane-service-exec.jar", goldmaneEnv, run,
                        () -> http(goldmaneHealth, "/readiness"), started), pids, readyMs, readyCpuMs);
                Map<String, String> typhaEnv = new LinkedHashMap<>(datastore);
                typhaEnv.putAll(Map.of("TYPHA_DATASTORETYPE", "etcdv3", "TYPHA_ETCDENDPOINTS", datastore.get("ETCD_ENDPOINTS"),
                        "TYPHA_SERVERPORT", "" + typhaPort, "TYPHA_HEALTHPORT", "" + typhaHealth, "TYPHA_ADMINPORT", "" + typhaAdmin));
                awaitStarted(start(root, "typha", flagsFile, "typha-service/target/typha-service-exec.jar", typhaEnv, run,
                        () -> http(typhaHealth, "/readiness"), started), pids, readyMs, readyCpuMs);

                nodesUp(root, launcherArgs, datastore, run, Map.of(
                        "felix", () -> http(felixHealth, "/readiness"),
                        "cni", () -> http(cniHttp, "/ipam/v1/usage"),
                        "confd", () -> http(confdHealth, "/readiness")), pids, readyMs, readyCpuMs);

                Path token = run.resolve("whisker-token");
                Files.writeString(token, "ft-bench-token");
                Map<String, String> whiskerEnv = new LinkedHashMap<>(environment(flags));
                whiskerEnv.putAll(Map.of("PORT", "" + whiskerPort,
                        "HOST", "127.0.0.1", "GOLDMANE_HOST", "127.0.0.1:" + goldmanePort, "HEALTH_HOST", "127.0.0.1",
                        "HEALTH_PORT", "" + whiskerHealth, "WHISKER_AUTH_MODE", "token", "WHISKER_AUTH_TOKEN_FILE", token.toString()));
                awaitStarted(start(root, "whisker", flagsFile, "whisker-backend/target/whisker-backend-exec.jar", whiskerEnv,
                        run, () -> http(whiskerHealth, "/readiness"), started), pids, readyMs, readyCpuMs);

                // Settled: as the figures, measured a while after start, not mid-catch-up (the window
                // is the measurement's definition: --settle seconds after the last service was ready).
                long allReady = System.nanoTime();
                long settleNanos = Duration.ofSeconds(settle).toNanos();
                Await.until(settle + " s since every service was ready", Duration.ofSeconds(settle + 30L),
                        () -> System.nanoTime() - allReady >= settleNanos);
                List<Figures> figures = new ArrayList<>();
                for (Map.Entry<String, Long> e : pids.entrySet()) {
                    long pid = e.getValue();
                    figures.add(new Figures(e.getKey(), status(pid, "VmRSS"), status(pid, "RssFile"), heapUsedKiB(pid), 0,
                            (int) status(pid, "Threads"),
                            readyMs.get(e.getKey()), readyCpuMs.get(e.getKey()), jvmOptions(pid)));
                }
                for (Map.Entry<String, Long> e : pids.entrySet()) {
                    if (jvmOptions(e.getValue()).contains("NativeMemoryTracking")) {
                        nativeMemory(e.getKey(), e.getValue());
                    }
                }
                List<Figures> withGc = new ArrayList<>();
                for (Figures f : figures) {
                    long pid = pids.get(f.service());
                    jcmd(pid, "GC.run");
                    withGc.add(new Figures(f.service(), f.rssKiB(), f.rssFileKiB(), f.heapUsedKiB(), heapUsedKiB(pid), f.threads(), f.readyMs(),
                            f.readyCpuMs(), f.flags()));
                }
                withGc.sort(Comparator.comparing(Figures::service));
                measured[0] = true;
                return new Cycle(scale, variant, round, load, withGc);
            } finally {
                launcher(root, "down", launcherArgs, datastore, run);
                for (Started s : started) {
                    s.process().toHandle().descendants().forEach(ProcessHandle::destroy);
                    s.process().destroy();
                    if (!s.process().waitFor(15, java.util.concurrent.TimeUnit.SECONDS)) {
                        s.process().destroyForcibly();
                    }
                }
            }
        } finally {
            // Kept when the cycle failed: its logs say why.
            if (measured[0]) {
                deleteTree(run);
            } else {
                System.out.println("cycle failed; its run dir (logs) is kept: " + run);
            }
        }
    }

    /** Writes the scale's resources: PolicyScaleBench's whole set, or its first few for the demo. */
    private static void write(BenchStore.Etcd store, String scale) throws Exception {
        PolicyScaleBench.Scale s = new PolicyScaleBench.Scale(1);
        List<Resource> all;
        if (scale.equals("policy")) {
            all = PolicyScaleBench.resources(s, NODE, i -> "remote-" + (i % 10));
        } else if (scale.equals("demo")) {
            all = new ArrayList<>();
            for (int t = 0; t < PolicyScaleBench.TIERS; t++) {
                all.add(new Tier(ObjectMeta.named("t" + t), new TierSpec(100.0 + t, null)));
            }
            for (int i = 0; i < 4; i++) {
                all.add(new Profile(ObjectMeta.named("kns.ns" + i), new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()),
                        Map.of("pcns.projectcalico.org/name", "ns" + i))));
                all.add(PolicyScaleBench.endpoint(s, i, NODE, "10.80.0." + (i + 1)));
                all.add(PolicyScaleBench.namespaced(s, i, 0));
            }
            all.add(PolicyScaleBench.global(s, 0));
            all.add(PolicyScaleBench.global(s, 1));
        } else {
            throw new IllegalArgumentException("--scales: '" + scale + "' is not demo or policy");
        }
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            // Tiers and profiles first: policies name their tier.
            for (Resource r : all) {
                if (r instanceof Tier) {
                    store.write(r);
                }
            }
            for (Resource r : all) {
                if (!(r instanceof Tier)) {
                    done.add(pool.submit(() -> store.write(r)));
                }
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        System.out.printf("wrote %d resources in %d ms%n", all.size(), (System.nanoTime() - t0) / 1_000_000);
    }

    private static Started start(Path root, String name, Path flagsFile, String jar, Map<String, String> env, Path run,
                                 BooleanSupplier ready, List<Started> started) throws IOException, InterruptedException {
        List<String> cmd = javaCommand(root, name, root.resolve(jar), flagsFile, env, run);
        Files.createDirectories(run.resolve("logs"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(run.resolve("logs").resolve(name + ".log").toFile());
        pb.environment().putAll(env);
        Started s = new Started(name, pb.start(), ready);
        started.add(s);
        return s;
    }

    /**
     * {@return the command that starts {@code jar} as {@code ./calico} starts it}: the launcher's
     * {@code java-command} (the flags file's options and, for a service of its {@code appcds} line,
     * the class archive, built first in {@code env} when missing; the building is not timed).
     */
    private static List<String> javaCommand(Path root, String name, Path jar, Path flagsFile, Map<String, String> env, Path run)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("java", "-jar", root.resolve("launcher/target/launcher.jar").toString(),
                "java-command", "--root", root.toString(), "--jvm-flags", flagsFile.toString(), name, jar.toString())
                .redirectError(ProcessBuilder.Redirect.appendTo(run.resolve("logs").resolve("java-command.log").toFile()));
        Files.createDirectories(run.resolve("logs"));
        pb.environment().putAll(env);
        Process p = pb.start();
        List<String> cmd = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        if (p.waitFor() != 0 || cmd.isEmpty()) {
            throw new IllegalStateException("launcher java-command " + name + " failed: see " + run.resolve("logs/java-command.log"));
        }
        return cmd;
    }

    private static void awaitStarted(Started s, Map<String, Long> pids, Map<String, Long> readyMs, Map<String, Long> readyCpuMs)
            throws Exception {
        long pid = s.process().pid();
        pids.put(s.name(), pid);
        Await.until(s.name() + " ready", Duration.ofSeconds(180), () -> {
            if (!s.process().isAlive()) {
                throw new IllegalStateException(s.name() + " exited during start-up");
            }
            return s.ready().getAsBoolean();
        });
        recordReady(s.name(), pid, readyMs, readyCpuMs);
    }

    /** {@code launcher up} in the background, each node service's readiness polled meanwhile. */
    private static void nodesUp(Path root, List<String> args, Map<String, String> env, Path run, Map<String, BooleanSupplier> ready,
                                Map<String, Long> pids, Map<String, Long> readyMs, Map<String, Long> readyCpuMs) throws Exception {
        Process up = launcherProcess(root, "up", args, env, run);
        Await.until("node services ready", Duration.ofSeconds(200), () -> {
            for (Map.Entry<String, BooleanSupplier> e : ready.entrySet()) {
                if (readyMs.containsKey(e.getKey())) {
                    continue;
                }
                Long pid = pids.computeIfAbsent(e.getKey(), k -> pidFile(run.resolve(k + "-" + NODE + ".pid")));
                if (pid == null) {
                    pids.remove(e.getKey());
                } else if (e.getValue().getAsBoolean()) {
                    recordReady(e.getKey(), pid, readyMs, readyCpuMs);
                }
            }
            if (!up.isAlive() && up.exitValue() != 0) {
                throw new IllegalStateException("launcher up failed (exit " + up.exitValue() + "): see " + run.resolve("logs"));
            }
            return readyMs.keySet().containsAll(ready.keySet());
        });
        if (up.waitFor() != 0) {
            throw new IllegalStateException("launcher up failed: see " + run.resolve("logs/launcher-up.log"));
        }
    }

    /** The service's age and CPU time when it was first seen ready. */
    private static void recordReady(String name, long pid, Map<String, Long> readyMs, Map<String, Long> readyCpuMs) {
        try {
            readyMs.put(name, ageMs(pid));
            readyCpuMs.put(name, cpuMs(pid));
        } catch (IOException e) {
            throw new UncheckedIOException("reading /proc/" + pid, e);
        }
        System.out.printf("%s ready %.2f s after its process started (%.2f s of CPU)%n", name, readyMs.get(name) / 1000.0,
                readyCpuMs.get(name) / 1000.0);
    }

    private static void launcher(Path root, String command, List<String> args, Map<String, String> env, Path run) throws Exception {
        Process p = launcherProcess(root, command, args, env, run);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("launcher " + command + " failed: " + Files.readString(run.resolve("logs/launcher-" + command + ".log")));
        }
    }

    private static Process launcherProcess(Path root, String command, List<String> args, Map<String, String> env, Path run) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("java", "-jar", root.resolve("launcher/target/launcher.jar").toString(), command));
        cmd.addAll(args);
        Files.createDirectories(run.resolve("logs"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(run.resolve("logs/launcher-" + command + ".log").toFile()));
        pb.environment().putAll(env);
        return pb.start();
    }

    private static Long pidFile(Path file) {
        try {
            String line = Files.readString(file).strip();
            return Long.parseLong(line.substring(0, line.indexOf(' ')));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** {@return the process's age now, in ms} ({@code /proc/uptime} minus its start in clock ticks; 10 ms steps). */
    private static long ageMs(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long startTicks = Long.parseLong(f[19]); // field 22 (starttime); f[0] is field 3
        double uptime = Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
        return Math.round(uptime * 1000 - startTicks * 10.0);
    }

    /** {@return the CPU time the process has used} (user + system, {@code /proc/<pid>/stat} fields 14 and 15). */
    private static long cpuMs(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10;
    }

    /** {@return a {@code /proc/<pid>/status} figure} (kB for sizes). */
    private static long status(long pid, String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no " + field + " in /proc/" + pid + "/status");
    }

    /** {@return the Java heap in use} (the generations' "used", from {@code jcmd GC.heap_info}). */
    private static long heapUsedKiB(long pid) throws Exception {
        long kib = 0;
        for (String line : jcmd(pid, "GC.heap_info").lines().toList()) {
            if (line.contains("Metaspace") || line.contains("class space")) {
                continue;
            }
            Matcher m = HEAP_USED.matcher(line);
            if (m.find()) {
                kib += Long.parseLong(m.group(1));
            }
        }
        return kib;
    }

    private static final Pattern NMT_LINE = Pattern.compile("^-\\s+(.+?) \\(reserved=\\d+KB, committed=(\\d+)KB\\)");

    /** Prints where the JVM's committed memory is ({@code -XX:NativeMemoryTracking=summary} in its options). */
    private static void nativeMemory(String service, long pid) throws Exception {
        StringBuilder b = new StringBuilder(service + " committed (NMT):");
        for (String line : jcmd(pid, "VM.native_memory summary").lines().toList()) {
            Matcher m = NMT_LINE.matcher(line.trim());
            if (m.find() && Long.parseLong(m.group(2)) >= 1024) {
                b.append(String.format(" %s %d MiB;", m.group(1).trim(), Long.parseLong(m.group(2)) / 1024));
            }
        }
        System.out.println(b);
    }

    private static String jcmd(long pid, String command) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(pid)));
        cmd.addAll(List.of(command.split(" ")));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    /** {@return the JVM options on the process's command line} (between {@code java} and {@code -jar}). */
    private static String jvmOptions(long pid) throws IOException {
        String[] argv = new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8).split("\0");
        List<String> opts = new ArrayList<>();
        for (int i = 1; i < argv.length && !argv[i].equals("-jar"); i++) {
            opts.add(argv[i]);
        }
        return String.join(" ", opts);
    }

    /** {@return the flags file's {@code env} line as variables}. */
    private static Map<String, String> environment(Map<String, List<String>> flags) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String word : flags.getOrDefault("env", List.of())) {
            env.put(word.substring(0, word.indexOf('=')), word.substring(word.indexOf('=') + 1));
        }
        return env;
    }

    private static Map<String, List<String>> readFlags(Path file) throws IOException {
        Map<String, List<String>> map = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            String[] w = line.replaceAll("#.*", "").trim().split("\\s+");
            if (w.length > 0 && !w[0].isEmpty()) {
                map.put(w[0], List.of(w).subList(1, w.length));
            }
        }
        return map;
    }

    static boolean http(int port, String path) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(3))
                    .GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static String loadAverage() throws IOException {
        return String.join(" ", List.of(Files.readString(Path.of("/proc/loadavg")).split(" ")).subList(0, 3));
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
