package calico.felix.dataplane.routes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.Sysctls;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The route manager reads the dataplane's one {@link DataplaneModel}, so it routes exactly the
 * endpoints the model holds: one the model skipped as a protocol violation (a profile it lacks) is
 * not routed until the model takes it. A manager reading the dataplane's model never folds a batch
 * itself; an unusable endpoint is refused once, without losing the rest of the batch. Real kernel,
 * in a host namespace ({@code rmh-*}) with one workload veth ({@code rmw-*}); the manager's side
 * of the routes and sysctls: {@link RouteManagerKernelTest}.
 */
class RouteManagerModelTest {

    private static final String IF = "calim1b2c3d4e5f";
    private static final String IP = "10.66.0.1";
    private static final List<String> NONE = List.of();

    private NetNs host;
    private NetNs workload;
    private NetlinkThread inHost;
    private Netlink netlink;

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        host = NetNs.create("rmh");
        workload = NetNs.create("rmw");
        host.uplink();
        host.veth(IF, workload, "eth0");
        inHost = new NetlinkThread(host);
        netlink = inHost.netlink();
    }

    @AfterEach
    void tearDown() {
        if (inHost != null) {
            inHost.close();
        }
        if (workload != null) {
            workload.close();
        }
        if (host != null) {
            host.close();
        }
    }

    private static DataplaneUpdate.WorkloadEndpointUpdate wep(String id, String iface, String net, String profile) {
        return new DataplaneUpdate.WorkloadEndpointUpdate(id, iface, null, List.of(net), NONE, List.of(profile),
                List.of(), List.of());
    }

    private static DataplaneUpdate profile(String name) {
        return new DataplaneUpdate.ActiveProfileUpdate(name, new CompiledPolicy(List.of(), List.of(), false));
    }

    /** {@return the kernel's routes with Calico's protocol, as {@code ip} prints them} */
    private String ourRoutes() {
        return host.exec("ip", "-4", "route", "show", "proto", "80").strip();
    }

    @Test
    void anEndpointTheModelSkippedIsNotRoutedUntilTheModelTakesIt() {
        DataplaneModel model = new DataplaneModel();
        RouteManager routes = inHost.call(() -> new RouteManager(netlink, new Sysctls(), model));

        // The endpoint names a profile the model lacks: a protocol violation, skipped by the model.
        model.apply(List.of(wep("dev/a", IF, IP + "/32", "kns.dev")));
        inHost.call(routes::update);
        assertThat(model.violations()).isEqualTo(1);
        assertThat(model.workloads()).isEmpty();
        assertThat(inHost.call(routes::programmedRoutes)).isEmpty();
        assertThat(inHost.call(routes::pendingInterfaces)).isEmpty();
        assertThat(ourRoutes()).isEmpty();

        // The profile arrives and the endpoint is sent again: the model holds it, so it is routed.
        model.apply(List.of(profile("kns.dev"), wep("dev/a", IF, IP + "/32", "kns.dev")));
        RouteManager.Stats s = inHost.call(routes::update);
        assertThat(s.routesAdded()).isEqualTo(1);
        assertThat(inHost.call(routes::programmedRoutes)).containsOnlyKeys(IP + "/32");
        assertThat(ourRoutes()).startsWith(IP + " dev " + IF);

        // Nothing changed in the model: the next update touches nothing.
        s = inHost.call(routes::update);
        assertThat(s.routesAdded() + s.routesDeleted() + s.interfacesConfigured()).isZero();

        // A manager reading the dataplane's model does not fold batches: the model's owner does.
        assertThatThrownBy(() -> inHost.call(() -> routes.apply(List.of(new DataplaneUpdate.WorkloadEndpointRemove(
                "dev/a"))))).isInstanceOf(IllegalStateException.class).hasMessageContaining("update()");
        assertThat(model.workloads()).containsOnlyKeys("dev/a");

        // The owner folds the remove in: the route goes.
        model.apply(List.of(new DataplaneUpdate.WorkloadEndpointRemove("dev/a")));
        s = inHost.call(routes::update);
        assertThat(s.routesDeleted()).isEqualTo(1);
        assertThat(ourRoutes()).isEmpty();
    }

    @Test
    void anUnusableEndpointIsRefusedOnceAndTheRestOfTheBatchIsRouted() {
        RouteManager routes = inHost.call(() -> new RouteManager(netlink, new Sysctls()));
        List<DataplaneUpdate> batch = List.of(profile("kns.dev"), wep("dev/a", IF, IP + "/32", "kns.dev"),
                wep("dev/b", "bad/name", "10.66.0.2/32", "kns.dev"));
        assertThatThrownBy(() -> inHost.call(() -> routes.apply(batch)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dev/b")
                .hasMessageContaining("interfaceName").hasMessageNotContaining("dev/a");
        assertThat(inHost.call(routes::programmedRoutes)).containsOnlyKeys(IP + "/32");
        assertThat(ourRoutes()).startsWith(IP + " dev " + IF);

        // Said once: the next batch does not fail for it again; a new version of it is looked at anew.
        RouteManager.Stats s = inHost.call(() -> routes.apply(List.of()));
        assertThat(s.failures()).isZero();
        assertThatThrownBy(() -> inHost.call(() -> routes.apply(List.of(wep("dev/b", "bad/name2", "10.66.0.2/32",
                "kns.dev"))))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dev/b");
        assertThat(inHost.call(routes::programmedRoutes)).containsOnlyKeys(IP + "/32");
    }
}
