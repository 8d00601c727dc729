package calico.libcalico.datastore.etcd;

import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.NetworkSet;
import calico.api.model.NetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.testing.EtcdServer;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.WatchOption;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
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
import java.util.stream.Collectors;

/**
 * Write throughput and watch delivery latency of {@link EtcdDatastore} against a real local etcd
 * that this benchmark starts itself.
 *
 * <pre>bench/run.sh libcalico calico.libcalico.datastore.etcd.EtcdBench [--tmpfs] [count] [options]</pre>
 *
 * <p>By default etcd's data is on the real disk under {@code java.io.tmpdir} (every write is an
 * fsync); {@code --tmpfs} puts it on {@code /dev/shm} to show the client-side ceiling.
 * Watch latency is measured from just before {@code create()} is called to the moment the
 * watch listener receives the {@code Added} event.
 *
 * <p>Options that shape the watch-latency run like felix's PolicyScaleBench:
 * <ul>
 *   <li>{@code --kind wep}: write WorkloadEndpoints across 50 namespaces (watched across all of
 *       them) instead of NetworkSets in one namespace;</li>
 *   <li>{@code --writers N}: writer threads of the second latency run (default 4);</li>
 *   <li>{@code --peer}: a second client, as felix: a timed watch on the written kind plus the idle ones;</li>
 *   <li>{@code --idle N}: N watches on other kinds that see no writes (felix has about 20);</li>
 *   <li>{@code --progress MS}: the progress-request interval of both clients (default 5000);</li>
 *   <li>{@code --latency-only}: skip the create and list measurements;</li>
 *   <li>{@code --bare}: also time the same events on a plain jetcd watch (the control: jetcd's defaults).</li>
 * </ul>
 */
public final class EtcdBench {

    private static final int NAMESPACES = 50;

    private record Options(boolean tmpfs, int n, boolean wep, int writers, boolean peer, int idle,
                           Duration progress, boolean latencyOnly, boolean bare) {

        static Options parse(String[] args) {
            List<String> a = Arrays.asList(args);
            return new Options(a.contains("--tmpfs"),
                    a.stream().filter(s -> s.matches("\\d+")).findFirst().map(Integer::parseInt).orElse(10_000),
                    "wep".equals(value(a, "--kind", "networkset")),
                    Integer.parseInt(value(a, "--writers", "4")),
                    a.contains("--peer"),
                    Integer.parseInt(value(a, "--idle", "0")),
                    Duration.ofMillis(Long.parseLong(value(a, "--progress", "5000"))),
                    a.contains("--latency-only"),
                    a.contains("--bare"));
        }

        private static String value(List<String> args, String flag, String fallback) {
            int i = args.indexOf(flag);
            return i >= 0 && i + 1 < args.size() ? args.get(i + 1) : fallback;
        }
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        int n = o.n();
        try (EtcdServer etcd = o.tmpfs() ? EtcdServer.startOnTmpfs() : EtcdServer.start(Path.of(System.getProperty("java.io.tmpdir")));
             EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(etcd.endpoint()).withProgressInterval(o.progress()))) {
            System.out.printf("etcd %s, data on %s, %d resources per run, %d cores; %s%n", etcd.endpoint(),
                    o.tmpfs() ? "tmpfs (/dev/shm)" : "disk (" + System.getProperty("java.io.tmpdir") + ")", n,
                    Runtime.getRuntime().availableProcessors(), o);
            long t0 = System.nanoTime();
            store.currentRevision();
            System.out.printf("first call (connect):          %6.1f ms%n", (System.nanoTime() - t0) / 1e6);

            writes(store, "warmup", 500, 1);
            if (!o.latencyOnly()) {
                report("create, 1 writer", writes(store, "seq", n, 1), n);
                report("create, " + o.writers() + " writers", writes(store, "con", n, o.writers()), n);

                for (String round : List.of("cold", "warm")) {
                    long l0 = System.nanoTime();
                    int listed = store.list(ResourceKind.GLOBAL_NETWORK_SET).items().size();
                    System.out.printf("list %d GlobalNetworkSets (%s): %6.1f ms%n", listed, round, (System.nanoTime() - l0) / 1e6);
                }
            }

            try (EtcdDatastore peer = o.peer()
                    ? new EtcdDatastore(EtcdConfig.of(etcd.endpoint()).withProgressInterval(o.progress())) : null) {
                EtcdDatastore watcher = peer == null ? store : peer;
                List<Watch> idle = new ArrayList<>();
                List<ResourceKind> others = Arrays.stream(ResourceKind.values())
                        .filter(k -> k != ResourceKind.NETWORK_SET && k != ResourceKind.WORKLOAD_ENDPOINT).toList();
                for (int i = 0; i < o.idle(); i++) {
                    idle.add(watcher.watch(others.get(i % others.size()), null, 0, e -> { }));
                }
                try {
                    watchLatency(store, peer, o, 1, "a");
                    watchLatency(store, peer, o, o.writers(), "b");
                } finally {
                    idle.forEach(Watch::close);
                }
            }
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

    /** Resource {@code i} of a latency run: a NetworkSet in one namespace, or a WorkloadEndpoint like felix's bench. */
    private static Resource resource(Options o, String run, int i) {
        String name = String.format("%s-%06d", run, i);
        if (!o.wep()) {
            return new NetworkSet(ObjectMeta.namespaced("lat", name), new NetworkSetSpec(List.of("10.1.0.0/16")));
        }
        String ns = "ns" + i % NAMESPACES;
        String node = "node-" + i % 10;
        // The shape of PolicyScaleBench's endpoints: five labels, a profile, two named ports.
        Map<String, String> labels = Map.of("app", "app" + i % 100, "role", "r" + i % 4, "version", "v" + i % 3,
                "projectcalico.org/namespace", ns, "projectcalico.org/orchestrator", "k8s");
        return new WorkloadEndpoint(new ObjectMeta(WorkloadEndpointNames.forPod(node, name), ns, null, null, null,
                null, null, null, labels, null, null, null),
                new WorkloadEndpointSpec("k8s", null, node, null, name, "eth0", null,
                        List.of("10.90." + i / 250 + "." + (i % 250 + 1) + "/32"), null, null,
                        null, List.of("kns." + ns), WorkloadEndpointNames.interfaceName(ns, name), null,
                        List.of(new WorkloadEndpointSpec.EndpointPort("http", Protocol.TCP, 8080, null, null),
                                new WorkloadEndpointSpec.EndpointPort("metrics", Protocol.TCP, 9090, null, null)),
                        null));
    }

    /** Writes {@code n} resources and times their {@code Added} events on the writers' client (and on {@code peer}'s, as felix's). */
    private static void watchLatency(EtcdDatastore store, EtcdDatastore peer, Options o, int writers, String run) throws Exception {
        int n = o.n();
        ResourceKind kind = o.wep() ? ResourceKind.WORKLOAD_ENDPOINT : ResourceKind.NETWORK_SET;
        Map<String, Long> started = new ConcurrentHashMap<>();
        Latencies ours = new Latencies(n);
        Latencies peers = new Latencies(n);
        long from = store.currentRevision();
        try (Watch p = peer == null ? null : peer.watch(kind, null, from, event -> {
                 if (event instanceof WatchEvent.Added a) {
                     peers.add(System.nanoTime() - started.get(a.resource().metadata().name()));
                 }
             });
             BareJetcdWatch bare = o.bare() ? BareJetcdWatch.open(store.config(), kind, from, started, n) : null;
             Watch w = store.watch(kind, null, from, event -> {
                 if (event instanceof WatchEvent.Added a) {
                     ours.add(System.nanoTime() - started.get(a.resource().metadata().name()));
                 }
             })) {
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            AtomicInteger next = new AtomicInteger();
            List<Future<?>> fs = new ArrayList<>();
            long begin = System.nanoTime();
            for (int k = 0; k < writers; k++) {
                fs.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                        Resource r = resource(o, run, i);
                        started.put(r.metadata().name(), System.nanoTime());
                        store.create(r);
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
            long written = System.nanoTime() - begin;
            int atLastWrite = ours.count();
            ours.await();
            long total = System.nanoTime() - begin;
            pool.shutdown();
            System.out.printf("watch latency, %d writer(s):    %s  (%d %s, %.0f writes/s, %.0f events/s;"
                            + " %d delivered at the last write, the last %.0f ms after it)%n",
                    writers, ours.summary(), n, kind.plural(), n / (written / 1e9), n / (total / 1e9),
                    atLastWrite, (total - written) / 1e6);
            if (p != null) {
                peers.await();
                System.out.printf("  the peer's watch (a second client, as felix): %s%n", peers.summary());
            }
            if (bare != null) {
                bare.latencies().await();
                System.out.printf("  bare jetcd watch, same events: %s%n", bare.latencies().summary());
            }
            System.out.printf("  etcd: %s%n", etcdWatchMetrics(store));
        }
    }

    /** Latencies of one watch, in arrival order; {@link #await} waits for all {@code n}. */
    private static final class Latencies {
        private final long[] nanos;
        private final AtomicInteger seen = new AtomicInteger();
        private final CountDownLatch done;

        Latencies(int n) {
            nanos = new long[n];
            done = new CountDownLatch(n);
        }

        void add(long latency) {
            int i = seen.getAndIncrement();
            if (i < nanos.length) {
                nanos[i] = latency;
                done.countDown();
            }
        }

        int count() {
            return seen.get();
        }

        void await() throws InterruptedException {
            if (!done.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("only " + seen.get() + " of " + nanos.length + " events arrived");
            }
        }

        String summary() {
            long[] sorted = nanos.clone();
            Arrays.sort(sorted);
            return String.format("p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms", pct(sorted, 50), pct(sorted, 99),
                    sorted[sorted.length - 1] / 1e6);
        }
    }

    /**
     * The control: the same prefix watched through a plain jetcd client with its defaults, no
     * decoding and no delivery thread.
     */
    private record BareJetcdWatch(Client client, io.etcd.jetcd.Watch.Watcher watcher, Latencies latencies)
            implements AutoCloseable {

        static BareJetcdWatch open(EtcdConfig config, ResourceKind kind, long from, Map<String, Long> started, int n) {
            Latencies latencies = new Latencies(n);
            Client client = Client.builder().endpoints(config.endpoints().toArray(URI[]::new)).build();
            WatchOption option = WatchOption.builder().isPrefix(true).withPrevKV(true).withRevision(from + 1).build();
            io.etcd.jetcd.Watch.Watcher watcher = client.getWatchClient().watch(EtcdKeys.prefix(kind, null), option, response -> {
                long now = System.nanoTime();
                for (io.etcd.jetcd.watch.WatchEvent e : response.getEvents()) {
                    String key = e.getKeyValue().getKey().toString();
                    latencies.add(now - started.get(key.substring(key.lastIndexOf('/') + 1)));
                }
            });
            return new BareJetcdWatch(client, watcher, latencies);
        }

        @Override
        public void close() {
            watcher.close();
            client.close();
        }
    }

    /**
     * etcd's own view of its watchers: {@code slow_watcher_total} counts watchers whose stream the
     * client did not drain (etcd then falls back to 100 ms catch-up batches); 0 means etcd kept up.
     */
    private static String etcdWatchMetrics(EtcdDatastore store) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(store.config().endpoints().get(0).resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body().lines()
                .filter(l -> l.startsWith("etcd_debugging_mvcc_slow_watcher_total") || l.startsWith("etcd_debugging_mvcc_watcher_total")
                        || l.startsWith("etcd_debugging_mvcc_watch_stream_total"))
                .map(l -> l.substring("etcd_debugging_mvcc_".length()))
                .collect(Collectors.joining(", "));
    }

    private static double pct(long[] sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, i)] / 1e6;
    }
}
