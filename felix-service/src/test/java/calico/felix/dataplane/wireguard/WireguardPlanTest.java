package calico.felix.dataplane.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.wireguard.WireguardKey;
import calico.dataplane.wireguard.WireguardPeer;
import calico.felix.calc.DataplaneUpdate.HostMetadataUpdate;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.WireguardEndpointUpdate;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link WireguardPlan}: peers and table routes from the model, no kernel. */
class WireguardPlanTest {

    static final WireguardKey A = WireguardKey.generatePrivate().publicKey();
    static final WireguardKey B = WireguardKey.generatePrivate().publicKey();
    static final WireguardKey C = WireguardKey.generatePrivate().publicKey();

    final Map<String, HostMetadataUpdate> hosts = new HashMap<>();
    final Map<String, WireguardEndpointUpdate> endpoints = new HashMap<>();
    final Map<String, RouteUpdate> routes = new HashMap<>();

    void node(String name, String ip, WireguardKey key, String wgAddr) {
        hosts.put(name, new HostMetadataUpdate(name, ip, null, Map.of()));
        if (key != null || wgAddr != null) {
            endpoints.put(name, new WireguardEndpointUpdate(name, key == null ? null : key.base64(), wgAddr));
        }
    }

    void route(String dst, RouteType type, String node) {
        routes.put(dst, new RouteUpdate(dst, type, node, hosts.get(node).ipv4Address(), null, "pool", false));
    }

    WireguardPlan plan() {
        return WireguardPlan.compute("a", A, 51820, 0, hosts, endpoints, routes);
    }

    static List<IpPrefix> prefixes(String... p) {
        return Arrays.stream(p).map(IpPrefix::parse).collect(Collectors.toList());
    }

    @Test
    void onePeerPerOtherNodeWithItsWorkloadsBlocksAndInterfaceAddress() {
        node("a", "10.0.0.1", A, "10.244.0.1");
        node("b", "10.0.0.2", B, "10.244.1.1");
        route("10.244.0.5/32", RouteType.LOCAL_WORKLOAD, "a");
        route("10.244.1.0/26", RouteType.REMOTE_BLOCK, "b");
        route("10.244.1.7/32", RouteType.REMOTE_WORKLOAD, "b");
        route("10.0.0.2/32", RouteType.REMOTE_HOST, "b");
        route("fd00:1::/122", RouteType.REMOTE_WORKLOAD, "b");

        WireguardPlan p = plan();

        assertThat(p.peers()).containsOnlyKeys("b");
        WireguardPeer b = p.peers().get("b");
        assertThat(b.publicKey()).isEqualTo(B);
        assertThat(b.endpoint().getAddress().getHostAddress()).isEqualTo("10.0.0.2");
        assertThat(b.endpoint().getPort()).isEqualTo(51820);
        assertThat(b.allowedIps()).containsExactlyInAnyOrderElementsOf(prefixes("10.244.1.0/26", "10.244.1.7/32", "10.244.1.1/32"));
        assertThat(p.routes()).containsExactlyInAnyOrderElementsOf(b.allowedIps());
    }

    @Test
    void nodesWithoutKeyOrAddressOrWithASharedKeyGetNoPeer() {
        node("a", "10.0.0.1", A, null);
        node("b", "10.0.0.2", null, "10.244.1.1");   // no key yet
        node("c", null, C, null);                    // no node address
        node("d", "10.0.0.4", B, null);              // B shared by d and e
        node("e", "10.0.0.5", B, null);
        node("f", "10.0.0.6", A, null);              // our own key
        route("10.244.1.0/26", RouteType.REMOTE_BLOCK, "b");
        route("10.244.4.0/26", RouteType.REMOTE_WORKLOAD, "d");

        WireguardPlan p = plan();

        assertThat(p.peers()).isEmpty();
        assertThat(p.routes()).isEmpty();
    }

    @Test
    void aRemovedNodeTakesItsPeerAndRoutes() {
        node("a", "10.0.0.1", A, null);
        node("b", "10.0.0.2", B, null);
        node("c", "10.0.0.3", C, null);
        route("10.244.1.0/26", RouteType.REMOTE_BLOCK, "b");
        route("10.244.2.0/26", RouteType.REMOTE_WORKLOAD, "c");
        assertThat(plan().peers()).containsOnlyKeys("b", "c");

        endpoints.remove("c");
        hosts.remove("c");
        routes.remove("10.244.2.0/26");

        assertThat(plan().peers()).containsOnlyKeys("b");
        assertThat(plan().routes()).containsExactlyElementsOf(prefixes("10.244.1.0/26"));
    }

    @Test
    void keepaliveAndPortComeFromTheSettings() {
        node("a", "10.0.0.1", A, null);
        node("b", "10.0.0.2", B, null);
        WireguardPeer b = WireguardPlan.compute("a", A, 4242, 25, hosts, endpoints, routes).peers().get("b");
        assertThat(b.endpoint().getPort()).isEqualTo(4242);
        assertThat(b.keepaliveSeconds()).isEqualTo(25);
    }

    @Test
    void theFirewallMarkIsTheFifthBitOfTheMarkMaskAsCalicoAllocatesIt() {
        assertThat(WireguardManager.firewallMark(0xffff0000L)).isEqualTo(0x100000);
        assertThat(WireguardManager.firewallMark(0x000f0f00L)).isEqualTo(0x010000);
        assertThatThrownBy(() -> WireguardManager.firewallMark(0xf0000L)).hasMessageContaining("fifth mark bit");
    }

    @Test
    void theIpv6PlanPeersAtIpv6NodeAddressesWithIpv6AllowedIpsOnly() {
        hosts.put("a", new HostMetadataUpdate("a", "10.0.0.1", "fd00::1", Map.of()));
        hosts.put("b", new HostMetadataUpdate("b", "10.0.0.2", "fd00::2", Map.of()));
        hosts.put("c", new HostMetadataUpdate("c", "10.0.0.3", null, Map.of())); // no IPv6 address: no IPv6 peer
        routes.put("10.244.1.7/32", new RouteUpdate("10.244.1.7/32", RouteType.REMOTE_WORKLOAD, "b", "10.0.0.2", null,
                "pool", false));
        routes.put("fd00:244:0:1::7/128", new RouteUpdate("fd00:244:0:1::7/128", RouteType.REMOTE_WORKLOAD, "b",
                "fd00::2", null, "pool6", false));
        Map<String, WireguardPlan.Endpoint> v6 = Map.of(
                "a", new WireguardPlan.Endpoint(A.base64(), null),
                "b", new WireguardPlan.Endpoint(B.base64(), "fd00:244:0:1::1"),
                "c", new WireguardPlan.Endpoint(C.base64(), null));

        WireguardPlan p = WireguardPlan.compute(calico.felix.dataplane.rules.IpFamily.V6, "a", A, 51821, 0, false, hosts, v6,
                routes);

        assertThat(p.nodes()).containsExactly("b");
        WireguardPeer b = p.peers().get("b");
        assertThat(b.endpoint().toString()).endsWith("[fd00:0:0:0:0:0:0:2]:51821");
        assertThat(b.allowedIps()).extracting(Object::toString)
                .containsExactlyInAnyOrder("fd00:244:0:1:0:0:0:7/128", "fd00:244:0:1:0:0:0:1/128");
        assertThat(p.routes()).isEqualTo(b.allowedIps());
    }

    @Test
    void hostEncryptionMakesEachPeersNodeAddressAnAllowedIpAndATableRoute() {
        node("a", "10.0.0.1", A, null);
        node("b", "10.0.0.2", B, null);
        route("10.244.1.7/32", RouteType.REMOTE_WORKLOAD, "b");
        Map<String, WireguardPlan.Endpoint> v4 = Map.of("a", new WireguardPlan.Endpoint(A.base64(), null),
                "b", new WireguardPlan.Endpoint(B.base64(), null));

        WireguardPlan off = WireguardPlan.compute(calico.felix.dataplane.rules.IpFamily.V4, "a", A, 51820, 0, false,
                hosts, v4, routes);
        WireguardPlan on = WireguardPlan.compute(calico.felix.dataplane.rules.IpFamily.V4, "a", A, 51820, 0, true,
                hosts, v4, routes);

        assertThat(off.peers().get("b").allowedIps()).extracting(Object::toString).containsExactly("10.244.1.7/32");
        assertThat(on.peers().get("b").allowedIps()).extracting(Object::toString)
                .containsExactlyInAnyOrder("10.244.1.7/32", "10.0.0.2/32");
        assertThat(on.routes()).extracting(Object::toString).contains("10.0.0.2/32");
    }
}
