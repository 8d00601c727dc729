package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.testing.NetNs;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * VXLAN devices, forwarding (FDB) entries, permanent neighbours and onlink routes through
 * {@link Netlink} alone, between two namespaces joined by a veth (the underlay): real packets
 * cross only once all four are programmed, and each part reads back as written.
 */
class VxlanNetlinkTest {
    static final String PREFIX = "rt-vxl";
    private static final String MAC_A = "66:00:00:00:00:0a";
    private static final String MAC_B = "66:00:00:00:00:0b";

    private NetNs a;
    private NetNs b;

    @BeforeEach
    void namespaces() {
        a = NetNs.create(PREFIX);
        b = NetNs.create(PREFIX);
        a.veth("ul0", b, "ul0");
        a.exec("ip", "addr", "add", "172.31.0.1/24", "dev", "ul0");
        b.exec("ip", "addr", "add", "172.31.0.2/24", "dev", "ul0");
    }

    @AfterEach
    void delete() {
        a.close();
        b.close();
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(NetNsLeftovers.named(PREFIX)).isEmpty();
    }

    /** Programs node {@code ns}'s side: its VTEP {@code tunnel}, the peer's VTEP and a route to the peer's block. */
    private static void program(NetNs ns, String underlay, String mac, String tunnel, String peerUnderlay, String peerMac,
                                String peerTunnel, String peerBlock) {
        ns.run(() -> {
            try (Netlink nl = new Netlink()) {
                int parent = nl.linkIndex("ul0");
                nl.addVxlan(new Vxlan("vxlan.calico", 4096, 4789, parent, Optional.of(ip(underlay)), Optional.of(mac), 1450));
                int dev = nl.linkIndex("vxlan.calico");
                nl.addAddress(dev, IpPrefix.parse(tunnel + "/32"));
                nl.setLinkUp("vxlan.calico", true);
                nl.setPermanentNeighbour(dev, ip(peerTunnel), peerMac);
                nl.setFdb(dev, peerMac, ip(peerUnderlay));
                nl.replaceRoute(Route.via(IpPrefix.parse(peerBlock), ip(peerTunnel), dev).withOnlink().withProtocol(80));
            }
        });
    }

    private static InetAddress ip(String text) {
        return IpPrefix.parse(text + "/32").address();
    }

    @Test
    void vxlanDeviceNeighbourFdbAndOnlinkRouteCarryPackets() {
        program(a, "172.31.0.1", MAC_A, "10.244.0.1", "172.31.0.2", MAC_B, "10.244.1.1", "10.244.1.0/26");
        program(b, "172.31.0.2", MAC_B, "10.244.1.1", "172.31.0.1", MAC_A, "10.244.0.1", "10.244.0.0/26");

        // Read back through netlink: device settings, neighbour, FDB entry, route.
        a.run(() -> {
            try (Netlink nl = new Netlink()) {
                Vxlan v = nl.vxlan("vxlan.calico").orElseThrow();
                assertThat(v.vni()).isEqualTo(4096);
                assertThat(v.port()).isEqualTo(4789);
                assertThat(v.parentIndex()).isEqualTo(nl.linkIndex("ul0"));
                assertThat(v.local()).contains(ip("172.31.0.1"));
                assertThat(v.mac()).contains(MAC_A);
                assertThat(v.mtu()).isEqualTo(1450);
                assertThat(nl.vxlan("ul0")).isEmpty(); // a veth is not a VXLAN device
                assertThat(nl.vxlan("nosuch0")).isEmpty();
                int dev = nl.linkIndex("vxlan.calico");
                assertThat(nl.fdb(dev)).containsExactly(new FdbEntry(dev, MAC_B, ip("172.31.0.2"), Neighbour.NUD_PERMANENT));
                assertThat(nl.neighbours(dev)).anySatisfy(n -> {
                    assertThat(n.address()).isEqualTo(ip("10.244.1.1"));
                    assertThat(n.mac()).contains(MAC_B);
                    assertThat(n.permanent()).isTrue();
                });
                assertThat(nl.routes()).anySatisfy(r -> {
                    assertThat(r.destination()).isEqualTo(IpPrefix.parse("10.244.1.0/26"));
                    assertThat(r.gateway()).contains(ip("10.244.1.1"));
                    assertThat(r.onlink()).isTrue();
                    assertThat(r.protocol()).isEqualTo(80);
                });
            }
        });
        // The kernel's own tools agree.
        assertThat(a.exec("ip", "-d", "link", "show", "vxlan.calico")).contains("vxlan id 4096").contains("dstport 4789")
                .contains("nolearning").contains("local 172.31.0.1");
        assertThat(a.exec("bridge", "fdb", "show", "dev", "vxlan.calico")).contains(MAC_B + " dst 172.31.0.2 self permanent");

        // A real packet: ping from a's tunnel address to b's, encapsulated over the underlay.
        assertThat(a.pings("10.244.1.1", Duration.ofSeconds(5))).isTrue(); // source: vxlan.calico's own 10.244.0.1

        // Without the FDB entry the frame has nowhere to go.
        a.run(() -> {
            try (Netlink nl = new Netlink()) {
                int dev = nl.linkIndex("vxlan.calico");
                nl.deleteFdb(dev, MAC_B, ip("172.31.0.2"));
                assertThat(nl.fdb(dev)).isEmpty();
                assertThatThrownBy(() -> nl.deleteFdb(dev, MAC_B, ip("172.31.0.2")))
                        .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.notFound()).isTrue());
            }
        });
        assertThat(a.pings("10.244.1.1", Duration.ofSeconds(1))).isFalse();

        // Deleting the device takes its neighbours, FDB entries and routes with it.
        a.run(() -> {
            try (Netlink nl = new Netlink()) {
                assertThat(nl.deleteLink("vxlan.calico")).isTrue();
                assertThat(nl.deleteLink("vxlan.calico")).isFalse();
                assertThat(nl.link("vxlan.calico")).isEmpty();
                assertThat(nl.routes()).noneSatisfy(r -> assertThat(r.destination()).isEqualTo(IpPrefix.parse("10.244.1.0/26")));
            }
        });
    }

    @Test
    void aSecondDeviceOfTheSameNameIsRefusedAndBadSettingsNameTheField() {
        a.run(() -> {
            try (Netlink nl = new Netlink()) {
                nl.addVxlan(new Vxlan("vxlan.calico", 4096, 4789, 0, Optional.empty(), Optional.empty(), 0));
                assertThatThrownBy(() -> nl.addVxlan(new Vxlan("vxlan.calico", 7, 4789, 0, Optional.empty(), Optional.empty(), 0)))
                        .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.alreadyExists()).isTrue());
                assertThat(nl.vxlan("vxlan.calico").orElseThrow().vni()).isEqualTo(4096);
            }
        });
        assertThatThrownBy(() -> new Vxlan("v", 0, 4789, 0, Optional.empty(), Optional.empty(), 0)).hasMessageContaining("vni");
        assertThatThrownBy(() -> new Vxlan("v", 1, 70000, 0, Optional.empty(), Optional.empty(), 0)).hasMessageContaining("port");
        assertThatThrownBy(() -> new Vxlan("v", 1, 4789, 0, Optional.empty(), Optional.of("zz"), 0)).hasMessageContaining("mac");
    }
}
