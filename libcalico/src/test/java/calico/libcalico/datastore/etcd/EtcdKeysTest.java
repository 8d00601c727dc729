package calico.libcalico.datastore.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class EtcdKeysTest {

    @Test
    void usesCalicosLayoutForBothScopes() {
        assertThat(EtcdKeys.path(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_POLICY, "default.deny")))
                .isEqualTo("/calico/resources/v3/projectcalico.org/globalnetworkpolicies/default.deny");
        assertThat(EtcdKeys.path(ResourceKey.of(ResourceKind.NETWORK_POLICY, "prod", "allow-dns")))
                .isEqualTo("/calico/resources/v3/projectcalico.org/networkpolicies/prod/allow-dns");
    }

    @Test
    void parseInvertsPathForEveryKind() {
        for (ResourceKind kind : ResourceKind.values()) {
            // The IPAM kinds' keys are made of what their names stand for (CIDR, node; see EtcdIpamLayoutTest).
            String name = switch (kind) {
                case IPAM_BLOCK -> "10-0-0-64-26";
                case BLOCK_AFFINITY -> "n.a-me-10-0-0-64-26";
                case IPAM_CONFIGURATION -> "default";
                default -> "n.a-me";
            };
            ResourceKey key = kind.namespaced() ? ResourceKey.of(kind, "ns-1", name) : ResourceKey.of(kind, name);
            assertThat(EtcdKeys.parse(EtcdKeys.key(key))).as(kind.kind()).contains(key);
        }
    }

    @Test
    void prefixesEndInASlashSoNamespacesDoNotOverlap() {
        assertThat(str(EtcdKeys.prefix(ResourceKind.NETWORK_SET, "a")))
                .isEqualTo("/calico/resources/v3/projectcalico.org/networksets/a/");
        assertThat(str(EtcdKeys.prefix(ResourceKind.NETWORK_SET, null)))
                .isEqualTo(str(EtcdKeys.prefix(ResourceKind.NETWORK_SET, "")))
                .isEqualTo("/calico/resources/v3/projectcalico.org/networksets/");
        assertThat(str(EtcdKeys.prefix(ResourceKind.TIER, "ignored")))
                .isEqualTo("/calico/resources/v3/projectcalico.org/tiers/");
    }

    @Test
    void keysThatAreNotV3ResourcesDoNotParse() {
        for (String k : new String[] {
                "/calico/v1/config/foo",
                "/calico/resources/v3/projectcalico.org/unknownkinds/x",
                "/calico/resources/v3/projectcalico.org/networksets/only-ns",
                "/calico/resources/v3/projectcalico.org/tiers/a/b",
                "/calico/resources/v3/projectcalico.org/tiers/"}) {
            assertThat(EtcdKeys.parse(EtcdKeys.bytes(k))).as(k).isEmpty();
        }
    }

    private static String str(io.etcd.jetcd.ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }
}
