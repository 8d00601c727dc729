package calico.felix.dataplane.wireguard;

import calico.api.codec.ResourceCodec;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.dataplane.testing.NetNs;
import calico.dataplane.wireguard.UserspaceWireguard;
import calico.dataplane.wireguard.WireguardBackend;
import calico.dataplane.wireguard.WireguardState;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.DataplaneObserver;
import calico.felix.dataplane.KernelDataplane;
import calico.felix.dataplane.KernelPolicyDrivers;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Two felix-like nodes on a {@link TwoNodeUnderlay}: each a kernel dataplane in its node
 * namespace fed by its own calculation graph, both given the same resources (as two felixes
 * read one datastore). {@link #startWithWireguard} writes each node's published key into its
 * Node, as felix's publisher does, so the peers come from Node resources.
 */
final class GraphNodes implements AutoCloseable {

    /** One node: its namespace, its graph, its dataplane and the key it published last. */
    static final class Side implements AutoCloseable {
        final String name;
        final NetNs ns;
        final AtomicReference<String> published = new AtomicReference<>("none yet");
        private final List<List<DataplaneUpdate>> pending = new ArrayList<>();
        final CalculationGraph graph;
        final KernelDataplane dataplane;

        Side(String name, NetNs ns) {
            this.name = name;
            this.ns = ns;
            this.graph = CalculationGraph.create(name, pending::add);
            this.dataplane = new KernelDataplane(ns.name(), new KernelPolicyDrivers(KernelDataplane.commandPrefix(ns.name())),
                    DataplaneObserver.NONE, new WireguardHost(name, TwoNodeUnderlay.socketDir(ns), published::set));
        }

        void feed(List<Update> updates) {
            graph.onUpdates(updates);
            flush();
        }

        void flush() {
            graph.flush();
            List<List<DataplaneUpdate>> batches = new ArrayList<>(pending);
            pending.clear();
            batches.forEach(dataplane::apply);
            if (!dataplane.awaitApplied(Duration.ofSeconds(60))) {
                throw new AssertionError(name + ": the dataplane did not apply the batches within 60 s");
            }
        }

        /** {@return the WireGuard device as read back from wireguard-go}, null when there is none */
        WireguardState device() {
            return ns.call(() -> {
                try (WireguardBackend wg = new UserspaceWireguard(KernelDataplane.commandPrefix(ns.name()),
                        TwoNodeUnderlay.socketDir(ns))) {
                    return wg.read(TwoNodeUnderlay.DEVICE).orElse(null);
                }
            });
        }

        @Override
        public void close() {
            dataplane.close();
        }
    }

    final TwoNodeUnderlay net;
    final Side a;
    final Side b;
    Node nodeA;
    Node nodeB;
    private long revision;

    GraphNodes(String prefix, String underlay, String pods) {
        net = new TwoNodeUnderlay(prefix, underlay, pods);
        Side sa = null;
        try {
            sa = new Side("node-a", net.nodeA);
            a = sa;
            b = new Side("node-b", net.nodeB);
        } catch (RuntimeException e) {
            if (sa != null) {
                sa.close();
            }
            net.close();
            throw e;
        }
    }

    static FelixConfiguration felixConfig(Map<String, ?> spec) {
        FelixConfigurationSpec s = ResourceCodec.get().jsonMapper().convertValue(spec, FelixConfigurationSpec.class);
        return new FelixConfiguration(ObjectMeta.named("default"), s);
    }

    List<Update> set(Resource... resources) {
        return Arrays.stream(resources).map(r -> Update.of(UpdateType.UPDATED, r, ++revision)).toList();
    }

    long nextRevision() {
        return ++revision;
    }

    void both(List<Update> updates) {
        a.feed(updates);
        b.feed(updates);
    }

    /** Both nodes on the same resources, WireGuard on; each node's key then written into its Node. */
    void startWithWireguard() {
        startWithWireguard(Map.of());
    }

    /** As {@link #startWithWireguard()}, with more FelixConfiguration fields. */
    void startWithWireguard(Map<String, Object> moreConfig) {
        Map<String, Object> config = new java.util.HashMap<>(moreConfig);
        config.put("wireguardEnabled", true);
        nodeA = TwoNodeUnderlay.node("node-a", net.nodeIp(1), net.wireguardIp(0), null);
        nodeB = TwoNodeUnderlay.node("node-b", net.nodeIp(2), net.wireguardIp(1), null);
        both(set(felixConfig(config),
                new IPPool(ObjectMeta.named("pool"), IPPoolSpec.ofCidr(net.pods + ".0.0/16")),
                new Profile(ObjectMeta.named("kns.test"), new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of())),
                nodeA, nodeB, TwoNodeUnderlay.wep("pod-a", "node-a", net.podIp(0), "calipoda"),
                TwoNodeUnderlay.wep("pod-b", "node-b", net.podIp(1), "calipodb")));
        for (Side s : new Side[] {a, b}) {
            s.graph.onStatus(SyncerStatus.IN_SYNC);
            s.flush();
        }
        publishKeys();
    }

    /** Writes each node's last published key into its Node, as felix's publisher does. */
    void publishKeys() {
        nodeA = nodeA.withStatus(new NodeStatus(a.published.get(), null, null));
        nodeB = nodeB.withStatus(new NodeStatus(b.published.get(), null, null));
        both(set(nodeA, nodeB));
    }

    @Override
    public void close() {
        a.close();
        b.close();
        net.close();
    }
}
