package calico.felix.dataplane.routes;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.net.Cidr;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.VtepUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.routes.RemoteRoutes.Kind;
import calico.felix.dataplane.routes.RemoteRoutes.Planned;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The rendering of routes to other nodes in every mode, from a model fed the graph's update
 * variants: this node {@code a} (192.168.0.1 in 192.168.0.0/24), {@code b} in the same subnet,
 * {@code c} in another; blocks 10.244.{0,1,2}.0/26 affine to a, b, c.
 */
class RemoteRoutesTest {

    private static final Optional<Cidr> SUBNET = Optional.of(Cidr.parse("192.168.0.0/24"));

    /** The cluster above with pool modes {@code ipipMode}/{@code vxlanMode} (also {@link RemoteRouteManagerKernelTest}'s). */
    static List<DataplaneUpdate> cluster(String ipipMode, String vxlanMode) {
        List<DataplaneUpdate> u = new ArrayList<>();
        u.add(new IpPoolUpdate("p", "10.244.0.0/16", false, ipipMode, vxlanMode, false));
        u.add(new RouteUpdate("192.168.0.1/32", RouteType.LOCAL_HOST, "a", "192.168.0.1", null, null, false));
        u.add(new VtepUpdate("a", "66:00:00:00:00:0a", "10.244.0.0", "192.168.0.1", null, null, null));
        u.add(new VtepUpdate("b", "66:00:00:00:00:0b", "10.244.1.0", "192.168.0.2", null, null, null));
        u.add(new VtepUpdate("c", "66:00:00:00:00:0c", "10.244.2.0", "192.168.1.3", null, null, null));
        u.add(new RouteUpdate("10.244.0.0/26", RouteType.LOCAL_BLOCK, "a", "192.168.0.1", null, "p", false));
        u.add(new RouteUpdate("10.244.1.0/26", RouteType.REMOTE_BLOCK, "b", "192.168.0.2", null, "p", false));
        u.add(new RouteUpdate("10.244.2.0/26", RouteType.REMOTE_BLOCK, "c", "192.168.1.3", null, "p", false));
        // b's workload inside b's block (covered), and c's workload borrowing an address of b's block
        u.add(new RouteUpdate("10.244.1.5/32", RouteType.REMOTE_WORKLOAD, "b", "192.168.0.2", null, "p", false));
        u.add(new RouteUpdate("10.244.1.9/32", RouteType.REMOTE_WORKLOAD, "c", "192.168.1.3", null, "p", false));
        // a's own workload: never a remote route
        u.add(new RouteUpdate("10.244.0.3/32", RouteType.LOCAL_WORKLOAD, "a", "192.168.0.1", "cali1", "p", false));
        return u;
    }

    private static final Optional<Cidr> SUBNET_V6 = Optional.of(Cidr.parse("fd00:1::/64"));

    /**
     * The same cluster dual-stack: {@link #cluster} plus IPv6 addresses (a fd00:1::1 and b fd00:1::2
     * in fd00:1::/64, c fd00:2::3 in another subnet), pool {@code p6} fd00:244::/48 with
     * {@code vxlanMode} {@code vxlanModeV6} and blocks fd00:244::{0,40,80}/122 affine to a, b, c, whose
     * first addresses are the IPv6 tunnel addresses (also {@link RemoteRouteManagerKernelTest}'s).
     */
    static List<DataplaneUpdate> dualStack(String ipipMode, String vxlanMode, String vxlanModeV6) {
        List<DataplaneUpdate> u = new ArrayList<>(cluster(ipipMode, vxlanMode));
        u.removeIf(x -> x instanceof VtepUpdate);
        u.add(new IpPoolUpdate("p6", "fd00:244::/48", false, "Never", vxlanModeV6, false));
        u.add(new RouteUpdate("fd00:1::1/128", RouteType.LOCAL_HOST, "a", "fd00:1::1", null, null, false));
        u.add(new VtepUpdate("a", "66:00:00:00:00:0a", "10.244.0.0", "192.168.0.1", "66:00:00:00:06:0a", "fd00:244::",
                "fd00:1::1"));
        u.add(new VtepUpdate("b", "66:00:00:00:00:0b", "10.244.1.0", "192.168.0.2", "66:00:00:00:06:0b", "fd00:244::40",
                "fd00:1::2"));
        u.add(new VtepUpdate("c", "66:00:00:00:00:0c", "10.244.2.0", "192.168.1.3", "66:00:00:00:06:0c", "fd00:244::80",
                "fd00:2::3"));
        u.add(new RouteUpdate("fd00:244::/122", RouteType.LOCAL_BLOCK, "a", "fd00:1::1", null, "p6", false));
        u.add(new RouteUpdate("fd00:244::40/122", RouteType.REMOTE_BLOCK, "b", "fd00:1::2", null, "p6", false));
        u.add(new RouteUpdate("fd00:244::80/122", RouteType.REMOTE_BLOCK, "c", "fd00:2::3", null, "p6", false));
        u.add(new RouteUpdate("fd00:244::45/128", RouteType.REMOTE_WORKLOAD, "b", "fd00:1::2", null, "p6", false));
        u.add(new RouteUpdate("fd00:244::49/128", RouteType.REMOTE_WORKLOAD, "c", "fd00:2::3", null, "p6", false));
        u.add(new RouteUpdate("fd00:244::3/128", RouteType.LOCAL_WORKLOAD, "a", "fd00:1::1", "cali1", "p6", false));
        return u;
    }

    private static RemoteRoutes.Plan planV6(List<DataplaneUpdate> updates, Map<String, String> config) {
        return RemoteRoutes.plan(model(updates, config), IpFamily.V6, SUBNET_V6);
    }

    @Test
    void ipv6VxlanPlansTheV6DeviceRoutesAndEntriesFromTheV6HalvesOnly() {
        RemoteRoutes.Plan p = planV6(dualStack("Never", "Never", "Always"), Map.of());
        assertThat(p.vxlan()).contains(new RemoteRoutes.VxlanDevice(4096, 4789, "fd00:1::1", "66:00:00:00:06:0a",
                "fd00:244::"));
        assertThat(p.ipip()).isFalse();
        assertThat(p.routes()).containsOnly(
                Map.entry("fd00:244::/122", new Planned("fd00:244::/122", Kind.BLACKHOLE, null)),
                Map.entry("fd00:244::40/122", new Planned("fd00:244::40/122", Kind.VXLAN, "fd00:244::40")),
                Map.entry("fd00:244::80/122", new Planned("fd00:244::80/122", Kind.VXLAN, "fd00:244::80")),
                Map.entry("fd00:244::49/128", new Planned("fd00:244::49/128", Kind.VXLAN, "fd00:244::80")));
        assertThat(p.neighbours()).containsOnly(Map.entry("fd00:244::40", "66:00:00:00:06:0b"),
                Map.entry("fd00:244::80", "66:00:00:00:06:0c"));
        assertThat(p.fdb()).containsOnly(Map.entry("66:00:00:00:06:0b", "fd00:1::2"),
                Map.entry("66:00:00:00:06:0c", "fd00:2::3"));
        assertThat(RemoteRoutes.vxlanDevice(IpFamily.V6)).isEqualTo("vxlan-v6.calico");
        // The IPv4 plan of the same model: IPv6 VXLAN opens no IPv4 device and routes no IPv6 destination.
        RemoteRoutes.Plan v4 = RemoteRoutes.plan(model(dualStack("Never", "Never", "Always"), Map.of()), SUBNET);
        assertThat(v4.vxlan()).isEmpty();
        assertThat(v4.routes()).containsOnlyKeys("10.244.0.0/26");
    }

    @Test
    void eachFamilysPlanIsTheSameWithOrWithoutTheOtherFamily() {
        RemoteRoutes.Plan v4Alone = RemoteRoutes.plan(model(cluster("Never", "Always"), Map.of()), SUBNET);
        RemoteRoutes.Plan v4Dual = RemoteRoutes.plan(model(dualStack("Never", "Always", "Always"), Map.of()), SUBNET);
        assertThat(v4Dual).isEqualTo(v4Alone);
        List<DataplaneUpdate> v6Only = new ArrayList<>(dualStack("Never", "Always", "Always"));
        v6Only.removeIf(x -> x instanceof RouteUpdate r && IpFamily.of(r.dst()) == IpFamily.V4
                || x instanceof IpPoolUpdate pool && pool.name().equals("p"));
        assertThat(planV6(v6Only, Map.of())).isEqualTo(planV6(dualStack("Never", "Always", "Always"), Map.of()));
    }

    @Test
    void ipv6CrossSubnetComparesWithTheV6SubnetAndVxlanEnabledFalseTurnsV6Off() {
        RemoteRoutes.Plan cross = planV6(dualStack("Never", "Never", "CrossSubnet"), Map.of());
        assertThat(cross.routes().get("fd00:244::40/122"))
                .isEqualTo(new Planned("fd00:244::40/122", Kind.DIRECT, "fd00:1::2"));
        assertThat(cross.routes().get("fd00:244::80/122"))
                .isEqualTo(new Planned("fd00:244::80/122", Kind.VXLAN, "fd00:244::80"));
        RemoteRoutes.Plan off = planV6(dualStack("Never", "Never", "Always"), Map.of("vxlanEnabled", "false"));
        assertThat(off.vxlan()).isEmpty();
        assertThat(off.routes()).containsOnlyKeys("fd00:244::/122");
        assertThat(planV6(dualStack("Never", "Never", "Always"), Map.of("ipv6Support", "false")))
                .as("ipv6Support false: no IPv6 plan").isEqualTo(RemoteRoutes.Plan.empty());
        // A node whose Node has no IPv6 address has no IPv6 plan at all.
        List<DataplaneUpdate> noSelfV6 = new ArrayList<>(dualStack("Never", "Never", "Always"));
        noSelfV6.removeIf(x -> x instanceof RouteUpdate r && r.type() == RouteType.LOCAL_HOST && r.dst().contains(":"));
        assertThat(planV6(noSelfV6, Map.of())).isEqualTo(RemoteRoutes.Plan.empty());
    }

    private static DataplaneModel model(List<DataplaneUpdate> updates, Map<String, String> config) {
        DataplaneModel m = new DataplaneModel();
        List<DataplaneUpdate> all = new ArrayList<>();
        all.add(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(config)));
        all.addAll(updates);
        m.apply(all);
        return m;
    }

    private static RemoteRoutes.Plan plan(String ipip, String vxlan, Map<String, String> config) {
        return RemoteRoutes.plan(model(cluster(ipip, vxlan), config), SUBNET);
    }

    @Test
    void vxlanAlwaysEncapsulatesEveryRemoteBlockAndBorrowedAddressAndBlackholesOurBlocks() {
        RemoteRoutes.Plan p = plan("Never", "Always", Map.of());
        assertThat(p.vxlan()).contains(new RemoteRoutes.VxlanDevice(4096, 4789, "192.168.0.1", "66:00:00:00:00:0a", "10.244.0.0"));
        assertThat(p.ipip()).isFalse();
        assertThat(p.routes()).containsOnly(
                Map.entry("10.244.0.0/26", new Planned("10.244.0.0/26", Kind.BLACKHOLE, null)),
                Map.entry("10.244.1.0/26", new Planned("10.244.1.0/26", Kind.VXLAN, "10.244.1.0")),
                Map.entry("10.244.2.0/26", new Planned("10.244.2.0/26", Kind.VXLAN, "10.244.2.0")),
                Map.entry("10.244.1.9/32", new Planned("10.244.1.9/32", Kind.VXLAN, "10.244.2.0")));
        assertThat(p.neighbours()).containsOnly(Map.entry("10.244.1.0", "66:00:00:00:00:0b"),
                Map.entry("10.244.2.0", "66:00:00:00:00:0c"));
        assertThat(p.fdb()).containsOnly(Map.entry("66:00:00:00:00:0b", "192.168.0.2"),
                Map.entry("66:00:00:00:00:0c", "192.168.1.3"));
    }

    @Test
    void vxlanSettingsComeFromFelixConfiguration() {
        RemoteRoutes.Plan p = plan("Never", "Always", Map.of("vxlanVNI", "4097", "vxlanPort", "8472"));
        assertThat(p.vxlan().orElseThrow().vni()).isEqualTo(4097);
        assertThat(p.vxlan().orElseThrow().port()).isEqualTo(8472);
    }

    @Test
    void crossSubnetEncapsulatesOnlyTowardsOtherSubnets() {
        RemoteRoutes.Plan p = plan("Never", "CrossSubnet", Map.of());
        assertThat(p.routes().get("10.244.1.0/26")).isEqualTo(new Planned("10.244.1.0/26", Kind.DIRECT, "192.168.0.2"));
        assertThat(p.routes().get("10.244.2.0/26")).isEqualTo(new Planned("10.244.2.0/26", Kind.VXLAN, "10.244.2.0"));
        assertThat(p.vxlan()).isPresent();
        // Without knowing our subnet no node is "same subnet": everything is encapsulated.
        RemoteRoutes.Plan unknown = RemoteRoutes.plan(model(cluster("Never", "CrossSubnet"), Map.of()), Optional.empty());
        assertThat(unknown.routes().get("10.244.1.0/26").kind()).isEqualTo(Kind.VXLAN);
    }

    @Test
    void ipipAlwaysAndCrossSubnetRenderTunl0RoutesViaTheNodeAddress() {
        RemoteRoutes.Plan always = plan("Always", "Never", Map.of());
        assertThat(always.ipip()).isTrue();
        assertThat(always.vxlan()).isEmpty();
        assertThat(always.neighbours()).isEmpty();
        assertThat(always.routes()).containsOnly(
                Map.entry("10.244.0.0/26", new Planned("10.244.0.0/26", Kind.BLACKHOLE, null)),
                Map.entry("10.244.1.0/26", new Planned("10.244.1.0/26", Kind.IPIP, "192.168.0.2")),
                Map.entry("10.244.2.0/26", new Planned("10.244.2.0/26", Kind.IPIP, "192.168.1.3")),
                Map.entry("10.244.1.9/32", new Planned("10.244.1.9/32", Kind.IPIP, "192.168.1.3")));
        RemoteRoutes.Plan cross = plan("CrossSubnet", "Never", Map.of());
        assertThat(cross.routes().get("10.244.1.0/26").kind()).isEqualTo(Kind.DIRECT);
        assertThat(cross.routes().get("10.244.2.0/26")).isEqualTo(new Planned("10.244.2.0/26", Kind.IPIP, "192.168.1.3"));
    }

    @Test
    void ipipPlansThisNodesTunnelAddressForTunl0OnlyWhileIpipIsOn() {
        List<DataplaneUpdate> u = new ArrayList<>(cluster("Always", "Never"));
        u.add(new DataplaneUpdate.IpipTunnelAddressUpdate("a", "10.244.0.1"));
        assertThat(RemoteRoutes.plan(model(u, Map.of()), SUBNET).ipipAddress()).contains("10.244.0.1");
        assertThat(RemoteRoutes.plan(model(u, Map.of("ipipEnabled", "false")), SUBNET).ipipAddress()).isEmpty();
        assertThat(RemoteRoutes.plan(model(cluster("Always", "Never"), Map.of()), SUBNET).ipipAddress())
                .as("the Node has no IPIP tunnel address (yet)").isEmpty();
        List<DataplaneUpdate> vxlan = new ArrayList<>(cluster("Never", "Always"));
        vxlan.add(new DataplaneUpdate.IpipTunnelAddressUpdate("a", "10.244.0.1"));
        assertThat(RemoteRoutes.plan(model(vxlan, Map.of()), SUBNET).ipipAddress()).as("IPIP off").isEmpty();
        assertThat(RemoteRoutes.reads(new DataplaneUpdate.IpipTunnelAddressRemove("a"))).isTrue();
    }

    @Test
    void tunl0GetsExactlyTheTunnelAddressTheIpipMtuAndUpWhileIpipIsOn() {
        List<DataplaneUpdate> u = new ArrayList<>(cluster("Always", "Never"));
        u.add(new DataplaneUpdate.IpipTunnelAddressUpdate("a", "10.244.0.1"));
        RemoteRoutes.Plan on = RemoteRoutes.plan(model(u, Map.of()), SUBNET);
        // A fresh tunl0 (the ipip module's: down, MTU 1480, no address): up, the address, ipipMTU.
        assertThat(RemoteRoutes.tunl0(on, List.of(), 1480, false, 1480)).isEqualTo(new RemoteRoutes.Tunl0Changes(
                List.of("10.244.0.1/32"), List.of(), java.util.OptionalInt.empty(), true));
        // ipipMTU 1400; a stale address (an older allocation) goes, the right one stays.
        assertThat(RemoteRoutes.tunl0(on, List.of("10.244.0.9/32", "10.244.0.1/32"), 1480, true, 1400))
                .isEqualTo(new RemoteRoutes.Tunl0Changes(List.of(), List.of("10.244.0.9/32"),
                        java.util.OptionalInt.of(1400), false));
        assertThat(RemoteRoutes.tunl0(on, List.of("10.244.0.1/32"), 1480, true, 1480).none()).isTrue();
        // The address released: none left. IPIP off: no address left, MTU and state untouched.
        RemoteRoutes.Plan noAddress = RemoteRoutes.plan(model(cluster("Always", "Never"), Map.of()), SUBNET);
        assertThat(RemoteRoutes.tunl0(noAddress, List.of("10.244.0.1/32"), 1480, true, 1480).delete())
                .containsExactly("10.244.0.1/32");
        RemoteRoutes.Plan off = RemoteRoutes.plan(model(u, Map.of("ipipEnabled", "false")), SUBNET);
        assertThat(RemoteRoutes.tunl0(off, List.of("10.244.0.1/32"), 1480, false, 1400)).isEqualTo(
                new RemoteRoutes.Tunl0Changes(List.of(), List.of("10.244.0.1/32"), java.util.OptionalInt.empty(), false));
    }

    @Test
    void theTunl0MtuIsIpipMtuElseTheHostMtuLess20() {
        assertThat(calico.felix.dataplane.mtu.Mtus.of(1500, calico.felix.dataplane.mtu.Mtus.Enabled.NONE,
                calico.felix.dataplane.mtu.Mtus.Configured.NONE).ipip()).isEqualTo(1480);
        assertThat(calico.felix.dataplane.mtu.Mtus.of(9000, calico.felix.dataplane.mtu.Mtus.Enabled.NONE,
                new calico.felix.dataplane.mtu.Mtus.Configured(1400, 0, 0, 0, 0)).ipip()).isEqualTo(1400);
    }

    @Test
    void noEncapsulationLeavesRemoteRoutesToBirdAndBlackholesOurBlocks() {
        RemoteRoutes.Plan p = plan("Never", "Never", Map.of());
        assertThat(p.vxlan()).isEmpty();
        assertThat(p.ipip()).isFalse();
        assertThat(p.routes()).containsOnlyKeys("10.244.0.0/26");
        assertThat(p.routes().get("10.244.0.0/26").kind()).isEqualTo(Kind.BLACKHOLE);
    }

    @Test
    void explicitEnabledSettingsOverrideThePools() {
        // vxlanEnabled false: no device, and so no VXLAN routes even for an Always pool.
        RemoteRoutes.Plan off = plan("Never", "Always", Map.of("vxlanEnabled", "false"));
        assertThat(off.vxlan()).isEmpty();
        assertThat(off.routes()).containsOnlyKeys("10.244.0.0/26");
        // vxlanEnabled true with Never pools: the device and its entries exist, no route uses them.
        RemoteRoutes.Plan on = plan("Never", "Never", Map.of("vxlanEnabled", "true"));
        assertThat(on.vxlan()).isPresent();
        assertThat(on.neighbours()).hasSize(2);
        assertThat(on.routes()).containsOnlyKeys("10.244.0.0/26");
        // ipipEnabled false: an IPIP pool's routes are not programmed.
        assertThat(plan("Always", "Never", Map.of("ipipEnabled", "false")).routes()).containsOnlyKeys("10.244.0.0/26");
    }

    @Test
    void workloadIpsRoutesEachRemoteWorkloadAndNoBlocks() {
        RemoteRoutes.Plan p = plan("Never", "Always", Map.of("routeSource", "WorkloadIPs"));
        assertThat(p.routes()).containsOnly(
                Map.entry("10.244.1.5/32", new Planned("10.244.1.5/32", Kind.VXLAN, "10.244.1.0")),
                Map.entry("10.244.1.9/32", new Planned("10.244.1.9/32", Kind.VXLAN, "10.244.2.0")));
    }

    @Test
    void nothingWithoutOurOwnAddressOrTheRemoteVtepOrAPool() {
        List<DataplaneUpdate> noSelf = new ArrayList<>(cluster("Never", "Always"));
        noSelf.remove(1);
        assertThat(RemoteRoutes.plan(model(noSelf, Map.of()), SUBNET).routes()).isEmpty();

        List<DataplaneUpdate> noVtepC = new ArrayList<>(cluster("Never", "Always"));
        noVtepC.removeIf(u -> u instanceof VtepUpdate v && v.node().equals("c"));
        RemoteRoutes.Plan p = RemoteRoutes.plan(model(noVtepC, Map.of()), SUBNET);
        assertThat(p.routes()).containsOnlyKeys("10.244.0.0/26", "10.244.1.0/26");
        assertThat(p.fdb()).containsOnlyKeys("66:00:00:00:00:0b");

        List<DataplaneUpdate> noPool = new ArrayList<>(cluster("Never", "Always"));
        noPool.remove(0);
        assertThat(RemoteRoutes.plan(model(noPool, Map.of()), SUBNET).routes()).isEmpty();
    }
}
