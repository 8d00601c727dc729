package calico.apiserver.bench;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.apiserver.datastore.SharedApiServer;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.apiserver.ApiServerDatastore;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
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

/**
 * Figures for libcalico/design/apiserver-datastore.md (printed, never asserted): the
 * {@code apiserver} backend against a real apiserver-service on the memory datastore, over
 * HTTPS on loopback: create/get/CAS-update rates with 4 client threads, a full list, watch
 * latency (write returned → event delivered), and IPAM autoAssign through it.
 *
 * <pre>bench/run.sh apiserver-service calico.apiserver.bench.ApiServerDatastoreBench [resources]</pre>
 */
public final class ApiServerDatastoreBench {

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
        int threads = 4;
        SharedApiServer server = SharedApiServer.get();
        try (ApiServerDatastore store = server.newDatastore()) {
            for (int i = 0; i < 50; i++) { // warm-up: TLS, JIT
                store.delete(store.create(set("warm-" + i)).key(), null);
            }
            rate("create", n, threads, i -> store.create(set("s-" + i)));
            rate("get", n, threads, i -> store.get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "s-" + i)));
            rate("update (get + CAS put)", n, threads, i -> {
                Resource cur = store.get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "s-" + i)).orElseThrow();
                return store.update(cur.withMetadata(cur.metadata().withLabels(Map.of("v", "2"))));
            });
            for (int run = 0; run < 3; run++) {
                long t0 = System.nanoTime();
                int size = store.list(ResourceKind.GLOBAL_NETWORK_SET).items().size();
                System.out.printf("list of %d: %.1f ms%n", size, (System.nanoTime() - t0) / 1e6);
            }
            watchLatency(store, 200);
            store.create(new IPPool(ObjectMeta.named("bench"), new IPPoolSpec("10.200.0.0/16", null, null, null, null,
                    null, 26, null, null, null, null)));
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            rate("IPAM autoAssign (2 nodes)", 400, threads,
                    i -> ipam.autoAssign(AutoAssignRequest.ipv4("h-" + i, "node-" + (i % 2))));
        }
        System.exit(0);
    }

    interface Op {
        Object run(int i) throws Exception;
    }

    private static void rate(String what, int n, int threads, Op op) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long t0 = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            fs.add(pool.submit(() -> {
                for (int i = id; i < n; i += threads) {
                    op.run(i);
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(10, TimeUnit.MINUTES);
        }
        double s = (System.nanoTime() - t0) / 1e9;
        pool.shutdown();
        System.out.printf("%s, %d clients: %d in %.2f s = %.0f/s%n", what, threads, n, s, n / s);
    }

    private static void watchLatency(ApiServerDatastore store, int events) throws Exception {
        Map<String, Long> sent = new ConcurrentHashMap<>();
        long[] lat = new long[events];
        CountDownLatch done = new CountDownLatch(events);
        int[] seen = {0};
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), e -> {
            if (e instanceof WatchEvent.Added a && a.resource().metadata().name().startsWith("w-")) {
                long now = System.nanoTime();
                Long t = sent.get(a.resource().metadata().name());
                if (t != null && seen[0] < events) {
                    lat[seen[0]++] = now - t;
                    done.countDown();
                }
            }
        })) {
            for (int i = 0; i < events; i++) {
                String name = "w-" + i;
                sent.put(name, System.nanoTime());
                store.create(set(name));
                Thread.sleep(5);
            }
            done.await(60, TimeUnit.SECONDS);
        }
        long[] got = Arrays.copyOf(lat, seen[0]);
        Arrays.sort(got);
        System.out.printf("watch latency (write call start → listener), %d events: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n",
                got.length, got[got.length / 2] / 1e6, got[(int) (got.length * 0.99)] / 1e6, got[got.length - 1] / 1e6);
    }

    private static GlobalNetworkSet set(String name) {
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(List.of("10.0.0.0/8")));
    }
}
