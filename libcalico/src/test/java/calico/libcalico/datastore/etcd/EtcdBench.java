package calico.libcalico.datastore.etcd;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.NetworkSet;
import calico.api.model.NetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.testing.EtcdServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Write throughput and watch delivery latency of {@link EtcdDatastore} against a real local etcd
 * that this benchmark starts itself.
 *
 * <pre>bench/run.sh libcalico calico.libcalico.datastore.etcd.EtcdBench [--tmpfs] [count]</pre>
 *
 * <p>By default etcd's data is on the real disk under {@code java.io.tmpdir} (every write is an
 * fsync); {@code --tmpfs} puts it on {@code /dev/shm} to show the client-side ceiling.
 * Watch latency is measured from just before {@code create()} is called to the moment the
 * watch listener receives the {@code Added} event.
 */
public final class EtcdBench {

    private static final int WRITERS = 4;

    public static void main(String[] args) throws Exception {
        boolean tmpfs = Arrays.asList(args).contains("--tmpfs");
        int n = Arrays.stream(args).filter(a -> a.matches("\\d+")).map(Integer::parseInt).findFirst().orElse(10_000);
        try (EtcdServer etcd = tmpfs ? EtcdServer.startOnTmpfs() : EtcdServer.start(Path.of(System.getProperty("java.io.tmpdir")));
             EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(etcd.endpoint()))) {
            System.out.printf("etcd %s, data on %s, %d resources per run, %d cores%n", etcd.endpoint(),
                    tmpfs ? "tmpfs (/dev/shm)" : "disk (" + System.getProperty("java.io.tmpdir") + ")", n,
                    Runtime.getRuntime().availableProcessors());
            long t0 = System.nanoTime();
            store.currentRevision();
            System.out.printf("first call (connect):          %6.1f ms%n", (System.nanoTime() - t0) / 1e6);

            writes(store, "warmup", 500, 1);
            report("create, 1 writer", writes(store, "seq", n, 1), n);
            report("create, " + WRITERS + " writers", writes(store, "con", n, WRITERS), n);

            for (String round : List.of("cold", "warm")) {
                long l0 = System.nanoTime();
                int listed = store.list(ResourceKind.GLOBAL_NETWORK_SET).items().size();
                System.out.printf("list %d GlobalNetworkSets (%s): %6.1f ms%n", listed, round, (System.nanoTime() - l0) / 1e6);
            }

            watchLatency(store, n, 1);
            watchLatency(store, n, WRITERS);
        }
    }

    private static long writes(EtcdDatastore store, String prefix, int n, int writers) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        AtomicInteger next = new AtomicInteger();
        long start = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            fs.add(pool.submit(() -> {
                for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                    store.create(new GlobalNetworkSet(ObjectMeta.named(String.format("%s-%06d", prefix, i))
                            .withLabels(Map.of("bench", prefix)), new GlobalNetworkSetSpec(List.of("10.0.0.0/8"))));
                }
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        long elapsed = System.nanoTime() - start;
        pool.shutdown();
        return elapsed;
    }

    private static void report(String what, long nanos, int n) {
        System.out.printf("%-30s %8.0f writes/s  (%d in %.2f s)%n", what + ":", n / (nanos / 1e9), n, nanos / 1e9);
    }

    private static void watchLatency(EtcdDatastore store, int n, int writers) throws Exception {
        String ns = "lat" + writers;
        Map<String, Long> started = new ConcurrentHashMap<>();
        long[] latencies = new long[n];
        AtomicInteger seen = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(n);
        try (Watch w = store.watch(ResourceKind.NETWORK_SET, ns, store.currentRevision(), event -> {
            if (event instanceof WatchEvent.Added a) {
                long now = System.nanoTime();
                Long t = started.get(a.resource().metadata().name());
                latencies[seen.getAndIncrement()] = now - t;
                done.countDown();
            }
        })) {
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            AtomicInteger next = new AtomicInteger();
            long begin = System.nanoTime();
            for (int k = 0; k < writers; k++) {
                pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                        String name = String.format("s-%06d", i);
                        started.put(name, System.nanoTime());
                        store.create(new NetworkSet(ObjectMeta.namespaced(ns, name), new NetworkSetSpec(List.of("10.1.0.0/16"))));
                    }
                    return null;
                });
            }
            if (!done.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("only " + seen.get() + " of " + n + " events arrived");
            }
            long total = System.nanoTime() - begin;
            pool.shutdown();
            long[] sorted = latencies.clone();
            Arrays.sort(sorted);
            System.out.printf("watch latency, %d writer(s):    p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (%d events, %.0f events/s)%n",
                    writers, pct(sorted, 50), pct(sorted, 99), sorted[n - 1] / 1e6, n, n / (total / 1e9));
        }
    }

    private static double pct(long[] sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, i)] / 1e6;
    }
}
