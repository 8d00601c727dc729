package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import calico.dataplane.testing.NetNs;
import calico.dataplane.wireguard.UserspaceWireguard;
import calico.felix.dataplane.wireguard.TwoNodeUnderlay;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole felix, twice, on one etcd: two node namespaces on a veth underlay, a pod on each,
 * FelixConfiguration {@code wireguardEnabled: true}. Each felix makes its device (wireguard-go),
 * publishes its public key into its own Node's status in etcd, reads the other's from the
 * watch, and peers with it: pod to pod then crosses the tunnel. Nothing but felix writes the keys.
 */
class WireguardFelixE2ETest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private final List<FelixProcess> felixes = new ArrayList<>();
    private TwoNodeUnderlay net;

    @AfterEach
    void cleanUp() {
        felixes.forEach(FelixProcess::close);
        if (net != null) {
            net.close();
        }
    }

    private static Optional<String> publishedKey(Datastore store, String node) {
        return store.get(ResourceKey.of(ResourceKind.NODE, node)).map(Node.class::cast).map(Node::status)
                .map(NodeStatus::wireguardPublicKey);
    }

    @Test
    void twoFelixesPublishTheirKeysAndPeerThroughTheDatastore() {
        assumeTrue(UserspaceWireguard.installed(), "wireguard-go is not installed (scripts/lib/install-deps.sh)");
        net = new TwoNodeUnderlay("wg-e", "10.98.0", "10.245");
        NetNs na = net.nodeA;
        NetNs nb = net.nodeB;

        TestDatastore.Etcd etcd = new TestDatastore.Etcd(ETCD);
        etcd.reset();
        try (Datastore store = etcd.open()) {
            Writes.clusterReady(store);
            FelixConfigurationSpec spec = ResourceCodec.get().jsonMapper()
                    .convertValue(Map.of("wireguardEnabled", true), FelixConfigurationSpec.class);
            store.create(new FelixConfiguration(ObjectMeta.named("default"), spec));
            store.create(new IPPool(ObjectMeta.named("pool"), IPPoolSpec.ofCidr("10.245.0.0/16")));
            store.create(new Profile(ObjectMeta.named("kns.test"),
                    new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of())));
            store.create(TwoNodeUnderlay.node("nodea", "10.98.0.1", "10.245.0.1", null));
            store.create(TwoNodeUnderlay.node("nodeb", "10.98.0.2", "10.245.1.1", null));
            store.create(TwoNodeUnderlay.wep("poda", "nodea", "10.245.0.5", "calipoda"));
            store.create(TwoNodeUnderlay.wep("podb", "nodeb", "10.245.1.5", "calipodb"));

            felixes.add(new FelixProcess("nodea", etcd.felixArgs(), na.name(), Backend.NFTABLES, "info"));
            felixes.add(new FelixProcess("nodeb", etcd.felixArgs(), nb.name(), Backend.NFTABLES, "info"));
            felixes.forEach(f -> f.awaitReady(Duration.ofSeconds(60)));

            String keyA = Await.value("nodea's key in etcd", Duration.ofSeconds(30), () -> publishedKey(store, "nodea"));
            String keyB = Await.value("nodeb's key in etcd", Duration.ofSeconds(30), () -> publishedKey(store, "nodeb"));
            assertThat(keyA).hasSize(44).isNotEqualTo(keyB);

            assertThat(Await.within(Duration.ofSeconds(30), () -> net.podA.pings("10.245.1.5", Duration.ofSeconds(1))))
                    .as("pod A reaches pod B through WireGuard").isTrue();
            assertThat(na.exec("ip", "route", "show", "table", "1")).contains("10.245.1.5 dev wireguard.cali");
            assertThat(net.podB.pings("10.245.0.5", Duration.ofSeconds(5))).isTrue();
        }
    }
}
