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
