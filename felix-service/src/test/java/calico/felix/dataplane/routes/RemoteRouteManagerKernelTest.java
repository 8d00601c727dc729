package calico.felix.dataplane.routes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.Sysctls;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.mtu.Mtus;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RemoteRouteManager} against a real kernel, in a node namespace ({@code rt-rrm-*}) whose
 * underlay interface {@code ul0} holds 192.168.0.1/24: what it programs reads back with {@code ip}
 * and {@code bridge}; model changes take away exactly what they should; resync repairs strangers'
 * edits and leaves strangers' routes alone; {@link RouteManager} and this manager leave each other's
 * proto-80 routes alone. Packets across nodes: {@code e2e.MultiNodeRoutesTest}.
 */
class RemoteRouteManagerKernelTest {

    private NetNs host;
    private NetlinkThread inHost;
    private Netlink netlink;
    private final DataplaneModel model = new DataplaneModel();
    private RemoteRouteManager manager;

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        host = NetNs.create("rt-rrm");
        host.exec("ip", "link", "add", "ul0", "type", "veth", "peer", "name", "ul1");
        host.exec("ip", "link", "set", "ul0", "up");
        host.exec("ip", "link", "set", "ul1", "up");
        host.exec("ip", "addr", "add", "192.168.0.1/24", "dev", "ul0");
        inHost = new NetlinkThread(host);
        netlink = inHost.netlink();
        // The MTU KernelDataplane hands over: Mtus for ul0's 1500 (vxlanMTU when set, else 1500 - 50).
        manager = new RemoteRouteManager(netlink, model, IpFamily.V4, () -> Mtus.of(1500, Mtus.Enabled.NONE,
                new Mtus.Configured(0, model.config().vxlanMtu(), 0, 0, 0)).vxlan(), () -> Mtus.of(1500,
                Mtus.Enabled.NONE, new Mtus.Configured(model.config().ipipMtu(), 0, 0, 0, 0)).ipip());
    }

    @AfterEach
    void tearDown() {
        if (inHost != null) {
            inHost.close();
        }
        if (host != null) {
            host.close();
        }
    }

    private static IpPoolUpdate pool(String ipip, String vxlan) {
        return new IpPoolUpdate("p", "10.244.0.0/16", false, ipip, vxlan, false);
    }

    private void apply(DataplaneUpdate... updates) {
        model.apply(List.of(updates));
    }

    /** {@link RemoteRoutesTest#cluster} without its workload routes, with {@code config}, in sync. */
    private void cluster(Map<String, String> config, String ipip, String vxlan) {
        List<DataplaneUpdate> u = new ArrayList<>();
        u.add(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(config)));
        RemoteRoutesTest.cluster(ipip, vxlan).stream()
                .filter(x -> !(x instanceof RouteUpdate r && r.dst().endsWith("/32") && r.type() != RouteType.LOCAL_HOST))
                .forEach(u::add);
        u.add(new DataplaneUpdate.InSync());
        model.apply(u);
    }

    private RemoteRouteManager.Stats update() {
        return inHost.call(manager::update);
    }

    private RemoteRouteManager.Stats resync() {
        return inHost.call(manager::resync);
    }

    private String routes() {
        return host.exec("ip", "-4", "route", "show", "proto", "80").strip();
    }

    private String neighbours() {
        return host.tryExec("ip", "-4", "neigh", "show", "dev", "vxlan.calico").output().strip();
    }

    private String fdb() {
        return host.tryExec("bridge", "fdb", "show", "dev", "vxlan.calico").output().strip();
    }

    @Test
    void programsVxlanAndFollowsNodeAndPoolChanges() {
        cluster(Map.of(), "Never", "Always");
        resync();

        assertThat(host.exec("ip", "-d", "link", "show", "vxlan.calico")).contains("mtu 1450").contains("66:00:00:00:00:0a")
                .contains("vxlan id 4096").contains("local 192.168.0.1").contains("dev ul0").contains("dstport 4789")
                .contains("nolearning").contains("state UNKNOWN");
        assertThat(host.exec("ip", "-4", "-o", "addr", "show", "dev", "vxlan.calico")).contains("10.244.0.0/32");
        assertThat(neighbours()).contains("10.244.1.0 lladdr 66:00:00:00:00:0b PERMANENT")
                .contains("10.244.2.0 lladdr 66:00:00:00:00:0c PERMANENT");
        assertThat(fdb()).contains("66:00:00:00:00:0b dst 192.168.0.2 self permanent")
                .contains("66:00:00:00:00:0c dst 192.168.1.3 self permanent");
        assertThat(routes()).contains("blackhole 10.244.0.0/26")
                .contains("10.244.1.0/26 via 10.244.1.0 dev vxlan.calico onlink")
                .contains("10.244.2.0/26 via 10.244.2.0 dev vxlan.calico onlink");

        // Nothing changed: nothing written.
        assertThat(update()).isEqualTo(new RemoteRouteManager.Stats(0, 0, 0, 0, 0, 0, false, false));
        assertThat(resync()).isEqualTo(new RemoteRouteManager.Stats(0, 0, 0, 0, 0, 0, false, false));

        // RouteManager's resync keeps our gateway and blackhole routes (its share is device routes).
        inHost.call(() -> new RouteManager(netlink, new Sysctls(), model).resync());
        assertThat(routes()).contains("blackhole 10.244.0.0/26").contains("10.244.1.0/26 via 10.244.1.0");

        // Node c goes: its VTEP entries and its route go; b's stay.
        apply(new DataplaneUpdate.RouteRemove("10.244.2.0/26"), new DataplaneUpdate.VtepRemove("c"));
        RemoteRouteManager.Stats st = update();
        assertThat(st.routesDeleted()).isEqualTo(1);
        assertThat(routes()).doesNotContain("10.244.2.0").contains("10.244.1.0/26 via 10.244.1.0");
        assertThat(neighbours()).doesNotContain("10.244.2.0").contains("10.244.1.0");
        assertThat(fdb()).doesNotContain("66:00:00:00:00:0c").contains("66:00:00:00:00:0b");

        // CrossSubnet: b shares our subnet, so a plain route via its address; the device stays.
        apply(pool("Never", "CrossSubnet"));
        update();
        assertThat(routes()).contains("10.244.1.0/26 via 192.168.0.2 dev ul0").doesNotContain("dev vxlan.calico");
        assertThat(host.tryExec("ip", "link", "show", "vxlan.calico").status()).isZero();

        // The pool switched to Never: the device, its entries and its routes go; our blackhole stays (BIRD's turn).
        apply(pool("Never", "Always"));
        update();
        apply(pool("Never", "Never"));
        st = update();
        assertThat(st.deviceDeleted()).isTrue();
        assertThat(host.tryExec("ip", "link", "show", "vxlan.calico").status()).isNotZero();
        assertThat(routes()).isEqualTo("blackhole 10.244.0.0/26");
    }

    @Test
    void resyncRepairsStrangersEditsAndSettingsChangesRebuildTheDevice() {
        cluster(Map.of(), "Never", "Always");
        resync();
        int index = inHost.call(() -> netlink.linkIndex("vxlan.calico"));

        // Strangers: a deleted neighbour, FDB entry and route come back; a stale proto-80 gateway route goes; a
        // proto-static route stays.
        host.exec("ip", "neigh", "del", "10.244.1.0", "dev", "vxlan.calico");
        host.exec("bridge", "fdb", "del", "66:00:00:00:00:0b", "dev", "vxlan.calico", "dst", "192.168.0.2", "self");
        host.exec("ip", "route", "del", "10.244.2.0/26");
        host.exec("ip", "route", "add", "10.99.0.0/24", "via", "192.168.0.9", "proto", "80");
        host.exec("ip", "route", "add", "10.98.0.0/24", "via", "192.168.0.9", "proto", "static");
        RemoteRouteManager.Stats st = resync();
        assertThat(st.neighboursSet()).isEqualTo(1);
        assertThat(st.fdbSet()).isEqualTo(1);
        assertThat(st.routesAdded()).isEqualTo(1);
        assertThat(st.routesDeleted()).isEqualTo(1);
        assertThat(neighbours()).contains("10.244.1.0 lladdr 66:00:00:00:00:0b PERMANENT");
        assertThat(fdb()).contains("66:00:00:00:00:0b dst 192.168.0.2 self permanent");
        assertThat(routes()).contains("10.244.2.0/26 via 10.244.2.0").doesNotContain("10.99.0.0");
        assertThat(host.exec("ip", "-4", "route", "show", "proto", "static")).contains("10.98.0.0/24");

        // vxlanMTU changes the MTU in place; a new VNI re-creates the device (and everything on it).
        cluster(Map.of("vxlanMTU", "1400"), "Never", "Always");
        update();
        assertThat(host.exec("ip", "link", "show", "vxlan.calico")).contains("mtu 1400");
        assertThat(inHost.call(() -> netlink.linkIndex("vxlan.calico"))).isEqualTo(index);
        cluster(Map.of("vxlanVNI", "4097"), "Never", "Always");
        st = update();
        assertThat(st.deviceCreated()).isTrue();
        assertThat(host.exec("ip", "-d", "link", "show", "vxlan.calico")).contains("vxlan id 4097").contains("mtu 1450");
        assertThat(neighbours()).contains("10.244.1.0 lladdr 66:00:00:00:00:0b PERMANENT");
        assertThat(fdb()).contains("66:00:00:00:00:0b dst 192.168.0.2 self permanent");
        assertThat(routes()).contains("10.244.1.0/26 via 10.244.1.0 dev vxlan.calico onlink");
    }

    @Test
    void ipv6VxlanIsTheSameManagerForTheOtherFamilyAndLeavesIpv4Alone() {
        host.exec("ip", "addr", "add", "fd00:1::1/64", "dev", "ul0", "nodad");
        RemoteRouteManager v6 = new RemoteRouteManager(netlink, model, IpFamily.V6, () -> Mtus.of(1500,
                Mtus.Enabled.NONE, new Mtus.Configured(0, 0, model.config().vxlanMtuV6(), 0, 0)).vxlanV6());
        List<DataplaneUpdate> u = new ArrayList<>();
        u.add(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of())));
        u.addAll(RemoteRoutesTest.dualStack("Never", "Always", "Always"));
        u.add(new DataplaneUpdate.InSync());
        model.apply(u);
        resync();
        inHost.call(v6::resync);

        assertThat(host.exec("ip", "-d", "link", "show", "vxlan-v6.calico")).contains("mtu 1430")
                .contains("66:00:00:00:06:0a").contains("vxlan id 4096").contains("local fd00:1::1").contains("dev ul0")
                .contains("dstport 4789").contains("nolearning");
        assertThat(host.exec("ip", "-6", "-o", "addr", "show", "dev", "vxlan-v6.calico")).contains("fd00:244::/128")
                .as("the kernel's link-local address stays").contains("fe80::");
        assertThat(host.exec("ip", "-6", "neigh", "show", "dev", "vxlan-v6.calico"))
                .contains("fd00:244::40 lladdr 66:00:00:00:06:0b PERMANENT")
                .contains("fd00:244::80 lladdr 66:00:00:00:06:0c PERMANENT");
        assertThat(host.exec("bridge", "fdb", "show", "dev", "vxlan-v6.calico"))
                .contains("66:00:00:00:06:0b dst fd00:1::2 self permanent")
                .contains("66:00:00:00:06:0c dst fd00:2::3 self permanent");
        String routes6 = host.exec("ip", "-6", "route", "show", "proto", "80");
        assertThat(routes6).contains("blackhole fd00:244::/122")
                .containsPattern("fd00:244::40/122 via fd00:244::40 dev vxlan-v6.calico .*onlink")
                .containsPattern("fd00:244::80/122 via fd00:244::80 dev vxlan-v6.calico .*onlink")
                .containsPattern("fd00:244::49 via fd00:244::80 dev vxlan-v6.calico .*onlink")
                .doesNotContain("10.244.");
        // The IPv4 side is as it was without IPv6; each family's resync leaves the other's share alone.
        assertThat(routes()).contains("10.244.1.0/26 via 10.244.1.0 dev vxlan.calico onlink").doesNotContain("fd00");
        String routes4 = routes();
        assertThat(inHost.call(v6::update)).isEqualTo(new RemoteRouteManager.Stats(0, 0, 0, 0, 0, 0, false, false));
        assertThat(inHost.call(v6::resync)).isEqualTo(new RemoteRouteManager.Stats(0, 0, 0, 0, 0, 0, false, false));
        assertThat(resync()).isEqualTo(new RemoteRouteManager.Stats(0, 0, 0, 0, 0, 0, false, false));
        assertThat(routes()).isEqualTo(routes4);
        assertThat(host.exec("ip", "-6", "route", "show", "proto", "80")).isEqualTo(routes6);

        // A stranger deletes an IPv6 route: the v6 resync puts it back.
        host.exec("ip", "-6", "route", "del", "fd00:244::80/122");
        assertThat(inHost.call(v6::resync).routesAdded()).isEqualTo(1);
        assertThat(host.exec("ip", "-6", "route", "show", "proto", "80")).contains("fd00:244::80/122 via fd00:244::80");

        // The IPv6 pool stops VXLAN: vxlan-v6.calico goes with its routes, the IPv6 blackhole stays; IPv4 untouched.
        apply(new IpPoolUpdate("p6", "fd00:244::/48", false, "Never", "Never", false));
        RemoteRouteManager.Stats st = inHost.call(v6::update);
        assertThat(st.deviceDeleted()).isTrue();
        assertThat(host.tryExec("ip", "link", "show", "vxlan-v6.calico").status()).isNotZero();
        assertThat(host.exec("ip", "-6", "route", "show", "proto", "80").strip()).startsWith("blackhole fd00:244::/122")
                .doesNotContain("via");
        assertThat(update()).isEqualTo(new RemoteRouteManager.Stats(0, 0, 0, 0, 0, 0, false, false));
        assertThat(routes()).isEqualTo(routes4);
    }

    @Test
    void ipipRoutesGoThroughTunl0WhereTheKernelHasIpip() {
        NetNs.Result probe = host.tryExec("ip", "link", "add", "rtprobe0", "type", "ipip", "remote", "192.168.0.2");
        assumeTrue(probe.status() == 0, "this kernel has no ipip module (`ip link add x type ipip` fails: "
                + probe.output().strip() + "); IPIP rendering is covered by RemoteRoutesTest");
        cluster(Map.of(), "Always", "Never");
        apply(new DataplaneUpdate.IpipTunnelAddressUpdate("a", "10.244.0.1"));
        resync();
        assertThat(routes()).contains("10.244.1.0/26 via 192.168.0.2 dev tunl0 onlink")
                .contains("10.244.2.0/26 via 192.168.1.3 dev tunl0 onlink");
        assertThat(host.tryExec("ip", "link", "show", "vxlan.calico").status()).isNotZero();
        // tunl0: up, MTU 1500 - 20, this node's tunnel address; ipipMTU changes it in place.
        assertThat(host.exec("ip", "-4", "-o", "addr", "show", "dev", "tunl0")).contains("10.244.0.1/32");
        assertThat(host.exec("ip", "link", "show", "tunl0")).contains("mtu 1480").contains(",UP");
        cluster(Map.of("ipipMTU", "1400"), "Always", "Never");
        update();
        assertThat(host.exec("ip", "link", "show", "tunl0")).contains("mtu 1400");
        // IPIP off: no address left on tunl0.
        cluster(Map.of(), "Never", "Never");
        update();
        assertThat(host.exec("ip", "-4", "-o", "addr", "show", "dev", "tunl0")).doesNotContain("10.244.0.1");
    }
}
