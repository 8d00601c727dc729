package calico.felix.calc;

import static calico.felix.calc.Res.allowFrom;
import static calico.felix.calc.Res.gnp;
import static calico.felix.calc.Res.labels;
import static calico.felix.calc.Res.tier;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.api.selector.Selector;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.WatcherSyncer;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole path felix will run: resources written to a real etcd, read back by the syncer,
 * fed to the calculation graph on the syncer's thread, applied to the protocol-checking model
 * dataplane. Proves the graph is correct on the syncer's real stream (snapshot, in-sync, deltas).
 */
class SyncerToGraphTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static final String ME = "node-1";
    private static final Duration WAIT = Duration.ofSeconds(20);

    private Datastore store;
    private WatcherSyncer syncer;
    private final DataplaneState state = new DataplaneState();

    @BeforeEach
    void start() {
        EtcdAdmin.wipe(ETCD.endpoint());
        store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
    }

    @AfterEach
    void stop() {
        if (syncer != null) {
            syncer.close();
        }
        store.close();
    }

    private void startFelix() {
        CalculationGraph graph = CalculationGraph.create(ME, Map.of(), batch -> {
            synchronized (state) {
                state.apply(batch);
            }
        });
        syncer = new WatcherSyncer(store, SyncerType.FELIX.kinds(), new SyncerCallbacks() {
            @Override
            public void onStatusUpdated(SyncerStatus status) {
                graph.onStatus(status);
            }

            @Override
            public void onUpdates(List<Update> updates) {
                graph.onUpdates(updates);
            }
        });
        syncer.start();
    }

    @Test
    void theGraphFollowsTheDatastoreThroughTheSyncer() {
        store.create(tier("default", null, null));
        Resource local = store.create(wep("ns1", "web", ME, "10.0.0.1", labels("app", "web")));
        store.create(wep("ns1", "db", "node-2", "10.0.0.2", labels("app", "db")));
        store.create(gnp("allow-db", "default", 10.0, "app == 'web'", List.of(allowFrom("app == 'db'")), List.of()));

        startFelix();
        String dbSet = dbSetId();
        awaitState("in sync with the snapshot", s -> s.inSync && s.ipSets.containsKey(dbSet));
        synchronized (state) {
            String id = local.metadata().namespace() + "/" + local.metadata().name();
            assertThat(state.workloads).containsOnlyKeys(id);
            assertThat(state.workloads.get(id).ingress()).singleElement()
                    .satisfies(t -> assertThat(t.policies()).extracting(PolicyId::name).containsExactly("allow-db"));
            assertThat(state.members(dbSet)).containsExactly("10.0.0.2/32");
        }

        // Deltas after in-sync: a remote endpoint leaves the set, another joins it.
        WorkloadEndpoint dbNow = (WorkloadEndpoint) store.list(ResourceKind.WORKLOAD_ENDPOINT, "ns1", "app == 'db'")
                .items().get(0);
        store.update(new WorkloadEndpoint(dbNow.metadata().withLabels(labels("app", "other")), dbNow.spec()));
        store.create(wep("ns1", "db2", "node-3", "10.0.0.3", labels("app", "db")));
        awaitState("remote membership change", s -> s.members(dbSet).equals(List.of("10.0.0.3/32")));

        // Deleting the policy removes it and, after it, its IP set.
        store.delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_POLICY, "allow-db"), null);
        awaitState("policy and set removed", s -> s.policies.isEmpty() && !s.ipSets.containsKey(dbSet));
    }

    private static String dbSetId() {
        // The graph names an IP set after the canonical selector it stands for.
        return Selector.parse("app == 'db'").uniqueId();
    }

    private void awaitState(String what, Predicate<DataplaneState> condition) {
        record Seen(boolean met, String state) {
            @Override
            public String toString() {
                return state;
            }
        }
        Await.until(what, WAIT, () -> {
            synchronized (state) {
                return new Seen(condition.test(state), "ipSets=" + state.ipSets.keySet() + " policies="
                        + state.policies.keySet() + " workloads=" + state.workloads.keySet());
            }
        }, Seen::met);
    }

    /** A Kubernetes-style endpoint whose name the datastore derives from its identifiers. */
    private static WorkloadEndpoint wep(String ns, String pod, String node, String ip, Map<String, String> labels) {
        return new WorkloadEndpoint(ObjectMeta.namespaced(ns, null).withLabels(labels),
                new WorkloadEndpointSpec("k8s", null, node, null, pod, "eth0", null, List.of(ip + "/32"), null, null,
                        null, List.of(), "cali" + pod, null, null, null));
    }
}
