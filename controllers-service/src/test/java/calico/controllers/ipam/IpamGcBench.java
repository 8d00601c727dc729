package calico.controllers.ipam;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.controllers.node.ClusterNodes;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.EtcdServer;
import calico.libcalico.testing.ForwardingDatastore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

/**
 * Issue 24's GC benchmarks against a real local etcd on tmpfs: one GC run that releases
 * {@code count} leaked handles (pods gone, nodes live; default 10,000), then one run after a node
 * holding 1,000 addresses is deleted. Prints time and datastore calls by verb and kind, and the pod
 * reads (one GET per released pod: the last look). Never asserted.
 *
 * <pre>bench/run.sh controllers-service calico.controllers.ipam.IpamGcBench [count]</pre>
 */
public final class IpamGcBench {

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        try (EtcdServer etcd = EtcdServer.startOnTmpfs();
             EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(etcd.endpoint()))) {
            store.create(new IPPool(ObjectMeta.named("bench"), new IPPoolSpec("10.64.0.0/16", null, null, null, null, null,
                    26, null, null, null, null)));
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            long t0 = System.nanoTime();
            assign(ipam, "leak", n, 100);
            System.out.printf("%,d leaked handles on %d nodes written in %.1f s%n", n, n / 100, (System.nanoTime() - t0) / 1e9);
            Map<String, Map<String, String>> nodes = new TreeMap<>();
            IntStream.range(0, n / 100 + 1).forEach(i -> nodes.put("node-" + i, Map.of()));
            run("GC of " + n + " leaked handles", store, new ClusterNodes(nodes, Map.of()));

            assign(ipam, "gone", 1_000, 1_000);
            nodes.remove("node-0");
            run("node-0 deleted: its 1,000 addresses", store, new ClusterNodes(nodes, Map.of()));
        }
    }

    private static void assign(IpamClient ipam, String prefix, int n, int perNode) {
        IntStream.range(0, n).parallel().forEach(i -> ipam.autoAssign(new AutoAssignRequest("k8s-pod-network." + prefix + i,
                "node-" + (i / perNode), 1, 0, List.of(), List.of(), Map.of("node", "node-" + (i / perNode),
                "namespace", "bench", "pod", prefix + i), IntendedUse.WORKLOAD)));
    }

    private static void run(String what, Datastore store, ClusterNodes nodes) {
        Counting counting = new Counting(store);
        AtomicLong podReads = new AtomicLong();
        Pods none = new Pods() {
            @Override
            public Map<String, PodView> all() {
                return Map.of();
            }

            @Override
            public Optional<PodView> get(String namespace, String name) {
                podReads.incrementAndGet();
                return Optional.empty();
            }
        };
        IpamGarbageCollector gc = new IpamGarbageCollector(counting, new IpamClient(counting, IpamOptions.defaults()), none,
                Clock.systemUTC());
        long t0 = System.nanoTime();
        GcResult r = gc.reconcile(nodes, Optional.of(Duration.ZERO), GcState.empty());
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("%s: %,d handles released, %d nodes' affinities, in %.1f s (%.0f handles/s); pod GETs %,d; "
                + "datastore calls %s%n", what, r.releasedHandles().size(), r.releasedNodes().size(), s,
                r.releasedHandles().size() / s, podReads.get(), new TreeMap<>(counting.calls));
    }

    /** Counts the datastore calls by verb and kind. */
    private static final class Counting extends ForwardingDatastore {
        final Map<String, AtomicLong> calls = new ConcurrentHashMap<>();

        Counting(Datastore d) {
            super(d);
        }

        private void count(String verb, ResourceKind kind) {
            calls.computeIfAbsent(verb + " " + kind.plural(), k -> new AtomicLong()).incrementAndGet();
        }

        @Override
        public Optional<Resource> get(ResourceKey key) {
            count("get", key.kind());
            return super.get(key);
        }

        @Override
        public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
            count("list", kind);
            return super.list(kind, namespace, labelSelector);
        }

        @Override
        public Resource update(Resource resource) {
            count("update", resource.resourceKind());
            return super.update(resource);
        }

        @Override
        public Resource delete(ResourceKey key, String resourceVersion) {
            count("delete", key.kind());
            return super.delete(key, resourceVersion);
        }

        @Override
        public Resource create(Resource resource) {
            count("create", resource.resourceKind());
            return super.create(resource);
        }
    }
}
