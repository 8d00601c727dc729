package calico.libcalico.ipam;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * IPAM against a real local etcd that this benchmark starts: single-allocation (and release)
 * latency, then allocations per second under contention from 4 threads (on 4 nodes, and on one
 * node, so all of them fight over the same block) and from 4 separate JVMs (two per node).
 *
 * <pre>bench/run.sh libcalico calico.libcalico.ipam.IpamBench [--tmpfs] [count]</pre>
 *
 * {@code count} (default 1000) is the number of allocations per contended run and of the
 * latency run. Figures are printed, never asserted.
 */
public final class IpamBench {

    private static final int WORKERS = 4;

    public static void main(String[] args) throws Exception {
        boolean tmpfs = Arrays.asList(args).contains("--tmpfs");
        int n = Arrays.stream(args).filter(a -> a.matches("\\d+")).map(Integer::parseInt).findFirst().orElse(1000);
        try (EtcdServer etcd = tmpfs ? EtcdServer.startOnTmpfs() : EtcdServer.start(Path.of(System.getProperty("java.io.tmpdir")));
             EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(etcd.endpoint()))) {
            System.out.printf("etcd %s, data on %s, %d allocations per run, %d cores%n", etcd.endpoint(),
                    tmpfs ? "tmpfs" : "disk", n, Runtime.getRuntime().availableProcessors());
            store.create(new IPPool(ObjectMeta.named("bench"),
                    new IPPoolSpec("10.64.0.0/16", null, null, null, null, null, 26, null, null, null, null)));
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());

            sequential(ipam, "warm", 200, 1); // JIT, connections, first block claims
            // 100 pods a node (Kubernetes allows 110): two /26 blocks each, as on a real node.
            long[] assign = sequential(ipam, "lat", n, Math.max(1, n / 100));
            print("autoAssign, 1 client, 100 per node", assign);
            long[] release = new long[n];
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                ipam.releaseByHandle("k8s-pod-network.lat-" + i);
                release[i] = System.nanoTime() - t0;
            }
            print("releaseByHandle, 1 client", release);

            long[] crowded = sequential(ipam, "crowded", 1000, 1);
            print("autoAssign, 1 client, 1,000 on one node", crowded);
            threads(ipam, "4 threads, 4 nodes", List.of("t0", "t1", "t2", "t3"), n);
            threads(ipam, "4 threads, 1 node (one block at a time)", List.of("s", "s", "s", "s"), n);

            Path logs = Files.createTempDirectory("ipam-bench");
            long t0 = System.nanoTime();
            List<WorkerProcesses.Outcome> outcomes = WorkerProcesses.run(etcd.endpoint(),
                    List.of("pa", "pa", "pb", "pb"), n / WORKERS, logs);
            double seconds = (System.nanoTime() - t0) / 1e9;
            long[] micros = outcomes.stream().flatMap(o -> o.allocations().stream()).mapToLong(a -> a.micros() * 1000).toArray();
            System.out.printf("%-44s %8.0f allocations/s (%d in %.1f s incl. JVM start)%n", "4 processes, 2 nodes",
                    micros.length / seconds, micros.length, seconds);
            print("  per allocation inside the processes", micros);
            IpamCheckReport check = ipam.check();
            System.out.printf("check afterwards: %d blocks, %d handles, %d addresses, %d problems%n",
                    check.blocks(), check.handles(), check.allocations(), check.problems().size());
        }
    }

    private static long[] sequential(IpamClient ipam, String prefix, int n, int nodes) {
        long[] t = new long[n];
        for (int i = 0; i < n; i++) {
            String node = prefix + (i * nodes / n);
            long t0 = System.nanoTime();
            ipam.autoAssign(AutoAssignRequest.ipv4("k8s-pod-network." + prefix + "-" + i, node));
            t[i] = System.nanoTime() - t0;
        }
        return t;
    }

    private static void threads(IpamClient ipam, String label, List<String> nodes, int total) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(nodes.size());
        try {
            List<Future<long[]>> results = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int w = 0; w < nodes.size(); w++) {
                String node = nodes.get(w);
                String prefix = label.replaceAll("[^a-z0-9]", "") + "-" + w;
                results.add(pool.submit(() -> {
                    long[] t = new long[total / nodes.size()];
                    for (int i = 0; i < t.length; i++) {
                        long s = System.nanoTime();
                        ipam.autoAssign(new AutoAssignRequest("k8s-pod-network." + prefix + "-" + i, node, 1, 0, List.of(),
                                List.of(), Map.of(), IntendedUse.WORKLOAD));
                        t[i] = System.nanoTime() - s;
                    }
                    return t;
                }));
            }
            List<long[]> all = new ArrayList<>();
            for (Future<long[]> f : results) {
                all.add(f.get());
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            long[] merged = all.stream().flatMapToLong(Arrays::stream).toArray();
            System.out.printf("%-44s %8.0f allocations/s (%d in %.1f s)%n", label, merged.length / seconds, merged.length, seconds);
            print("  per allocation", merged);
        } finally {
            pool.shutdownNow();
        }
    }

    private static void print(String label, long[] nanos) {
        long[] s = nanos.clone();
        Arrays.sort(s);
        System.out.printf("%-44s p50 %6.2f ms   p99 %6.2f ms   max %7.2f ms%n", label,
                s[s.length / 2] / 1e6, s[(int) Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] / 1e6, s[s.length - 1] / 1e6);
    }
}
