package calico.cni;

import calico.cni.daemon.CniDaemon;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.EtcdServer;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * ADD and DEL latency as the runtime sees it: N pods (default 200), one call at a time, through
 * the C thin client and the daemon (calico-ipam on a real etcd); then a few calls with one JVM
 * per call ({@code java calico.cni.Main}) for comparison. Prints p50/p99 in milliseconds.
 *
 * <pre>bench/run.sh cni-plugin calico.cni.CniBench [pods] [jvmCalls]</pre>
 */
public final class CniBench {
    private CniBench() {
    }

    public static void main(String[] args) throws Exception {
        int pods = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int jvmCalls = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        try (EtcdServer etcd = EtcdServer.startOnTmpfs(); CniHarness h = new CniHarness(etcd.endpoint())) {
            h.pool("bench", "10.206.0.0/16", 26);
            Path client = ThinClient.build();
            Path dir = Files.createTempDirectory("cni-bench");
            Path socket = dir.resolve("cni.sock");
            CniDaemon daemon = h.host.call(() -> CniDaemon.start(socket, -1, CniHarness.NODE, null));
            try {
                String conf = h.calicoConf("1.0.0", "10.206.0.0/16");
                List<NetNs> ns = new ArrayList<>();
                List<String> ids = new ArrayList<>();
                for (int i = 0; i < pods; i++) {
                    ns.add(h.pod());
                    ids.add(CniHarness.containerId());
                }
                // Warm-up: the daemon's first call loads classes and connects to etcd.
                runThin(client, socket, "ADD", ids.get(0), ns.get(0), "p0", conf);
                runThin(client, socket, "DEL", ids.get(0), ns.get(0), "p0", conf);
                long[] add = new long[pods];
                long[] del = new long[pods];
                for (int i = 0; i < pods; i++) {
                    add[i] = runThin(client, socket, "ADD", ids.get(i), ns.get(i), "p" + i, conf);
                }
                for (int i = 0; i < pods; i++) {
                    del[i] = runThin(client, socket, "DEL", ids.get(i), ns.get(i), "p" + i, conf);
                }
                print("thin client + daemon ADD", add);
                print("thin client + daemon DEL", del);

                long[] jvmAdd = new long[jvmCalls];
                long[] jvmDel = new long[jvmCalls];
                for (int i = 0; i < jvmCalls; i++) {
                    String cid = CniHarness.containerId();
                    String pod = "jvm" + i;
                    try {
                        jvmAdd[i] = runJvm("ADD", cid, ns.get(i), pod, conf);
                    } finally {
                        jvmDel[i] = runJvm("DEL", cid, ns.get(i), pod, conf);
                    }
                }
                print("JVM per call ADD", jvmAdd);
                print("JVM per call DEL", jvmDel);
                long[] version = new long[jvmCalls];
                for (int i = 0; i < jvmCalls; i++) {
                    long t0 = System.nanoTime();
                    exec(List.of(javaBin(), "-cp", System.getProperty("java.class.path"), "calico.cni.Main"),
                            Map.of("CNI_COMMAND", "VERSION"), "{}", null);
                    version[i] = System.nanoTime() - t0;
                }
                print("JVM per call VERSION (start-up alone)", version);
            } finally {
                daemon.close();
            }
        }
    }

    private static long runThin(Path client, Path socket, String cmd, String cid, NetNs pod, String name, String conf)
            throws Exception {
        Map<String, String> env = new HashMap<>(CniHarness.env(cmd, cid, CniHarness.netns(pod), "bench", name));
        env.put("CALICO_CNI_SOCKET", socket.toString());
        long t0 = System.nanoTime();
        CniResponse r = ThinClient.run(client, env, conf);
        long t = System.nanoTime() - t0;
        if (r.exitCode() != 0) {
            throw new IllegalStateException(cmd + " " + name + ": " + r.stdout());
        }
        return t;
    }

    /**
     * One plugin JVM. It runs in this machine's namespace, where the test etcd listens, so its
     * host-side veth is created here; each ADD is followed at once by its DEL, which deletes it.
     */
    private static long runJvm(String cmd, String cid, NetNs pod, String name, String conf) throws Exception {
        Map<String, String> env = CniHarness.env(cmd, cid, CniHarness.netns(pod), "bench", name);
        List<String> command = List.of(javaBin(), "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC", "-Xshare:auto", "-cp", System.getProperty("java.class.path"), "calico.cni.Main");
        long t0 = System.nanoTime();
        exec(command, env, conf, cmd + " " + name);
        return System.nanoTime() - t0;
    }

    private static void exec(List<String> command, Map<String, String> env, String stdin, String what) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0 && what != null) {
            throw new IllegalStateException(what + ": " + out);
        }
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void print(String what, long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        System.out.printf("%-40s n=%d p50=%.1f ms p99=%.1f ms max=%.1f ms%n", what, s.length,
                s[s.length / 2] / 1e6, s[Math.min(s.length - 1, (int) Math.ceil(s.length * 0.99) - 1)] / 1e6,
                s[s.length - 1] / 1e6);
    }
}
