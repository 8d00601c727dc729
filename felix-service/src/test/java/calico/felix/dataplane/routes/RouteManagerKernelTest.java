package calico.felix.dataplane.routes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.netlink.LinkUpdate;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.Sysctls;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The route manager against a real kernel, inside namespaces only: a "host" namespace with
 * workload namespaces on veths wired as the CNI plugin does (host side {@code cali…}, workload
 * side {@code eth0} with a /32 and {@code default via 169.254.1.1 dev eth0 onlink}). A real
 * calculation graph for the host node turns v3 resources into batches; the manager, its
 * {@link Netlink} and {@link Sysctls} all run on one thread inside the host namespace. Checks
 * read the kernel with {@code ip -j} and send real TCP between the workloads.
 */
class RouteManagerKernelTest {

    private static final java.time.Duration CONNECT_TIMEOUT = java.time.Duration.ofSeconds(1);

    private static final String NODE = "node1";
    private static final String A_IP = "10.65.0.1";
    private static final String A_IP6 = "fd00:65::1";
    private static final String B_IP = "10.65.0.2";
    private static final String A_IF = "calia1b2c3d4e5f";
    private static final String B_IF = "calib1b2c3d4e5f";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<NetNs> namespaces = new ArrayList<>();
    private final List<List<DataplaneUpdate>> batches = new ArrayList<>();
    private final List<List<DataplaneUpdate>> history = new ArrayList<>();
    private NetNs host;
    private NetNs a;
    private NetNs b;
    private NetlinkThread inHost;
    private Netlink netlink;
    private RouteManager manager;
    private CalculationGraph graph;
    private long revision;

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        host = ns("rth");
        a = ns("rta");
        b = ns("rtb");
        host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        // Proxy ARP answers only for addresses routed out of another interface: give the host an uplink.
        host.uplink();
        inHost = new NetlinkThread(host);
        netlink = inHost.netlink();
        manager = new RouteManager(netlink, new Sysctls());
        graph = CalculationGraph.create(NODE, batches::add);
    }

    @AfterEach
    void tearDown() {
        if (inHost != null) {
            inHost.close();
        }
        namespaces.forEach(NetNs::close);
    }

    @Test
    void programsWorkloadRoutesSysctlsAndTrafficFollows() throws IOException {
        graph.onStatus(SyncerStatus.IN_SYNC); // a felix in sync: its resyncs remove what is stale
        wireWorkload(a, A_IF, A_IP);
        // b's endpoint arrives before its veth exists.
        put(allowAllProfile(), wep("a", A_IF, A_IP + "/32", A_IP6 + "/128"), wep("b", B_IF, B_IP + "/32"));

        assertThat(ourRoutes("-4")).containsExactly(Map.entry(A_IP, A_IF));
        assertThat(ourRoutes("-6")).containsExactly(Map.entry(A_IP6, A_IF));
        JsonNode route = routes("-4", "proto", "80").get(0);
        assertThat(route.path("scope").asText()).isEqualTo("link");
        assertThat(route.has("gateway")).isFalse();
        assertThat(inHost.call(manager::pendingInterfaces)).containsExactly(B_IF);
        assertThat(host.sysctl("ipv4/conf/" + A_IF + "/proxy_arp")).isEqualTo("1");
        assertThat(host.sysctl("ipv4/neigh/" + A_IF + "/proxy_delay")).isEqualTo("0");
        assertThat(host.sysctl("ipv4/conf/" + A_IF + "/forwarding")).isEqualTo("1");
        assertThat(host.sysctl("ipv4/conf/" + A_IF + "/rp_filter")).isEqualTo("1");
        assertThat(host.sysctl("ipv6/conf/" + A_IF + "/forwarding")).isEqualTo("1");

        // The veth appears (down on the host side: the manager sets it up); resync picks it up.
        wireWorkload(b, B_IF, B_IP);
        host.exec("ip", "link", "set", B_IF, "down");
        RouteManager.Stats s = inHost.call(manager::resync);
        assertThat(s.routesAdded()).isEqualTo(1);
        assertThat(s.pendingInterfaces()).isZero();
        assertThat(ourRoutes("-4")).containsExactly(Map.entry(A_IP, A_IF), Map.entry(B_IP, B_IF));
        assertThat(host.exec("ip", "-j", "link", "show", B_IF)).contains("\"UP\"");

        InetAddress aAddr = InetAddress.getByName(A_IP);
        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket b8080 = b.call(() -> new ServerSocket(8080, 50, bAddr));
                ServerSocket a8080 = a.call(() -> new ServerSocket(8080, 50, aAddr))) {
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("a -> b").isTrue();
            assertThat(b.tcpConnects(A_IP, 8080, CONNECT_TIMEOUT)).as("b -> a").isTrue();

            // Nothing changed: a resync neither adds nor deletes.
            s = inHost.call(manager::resync);
            assertThat(s.routesAdded() + s.routesDeleted() + s.interfacesConfigured()).isZero();

            // removeExternalRoutes (Calico's default: true): a stranger's route (another protocol) through a
            // workload interface goes, and so does a stale one with our protocol; one through another interface stays.
            host.exec("ip", "route", "add", "10.99.0.1/32", "dev", A_IF, "proto", "static");
            host.exec("ip", "route", "add", "10.99.0.2/32", "dev", A_IF, "proto", "80");
            host.exec("ip", "route", "add", "10.99.0.3/32", "dev", "up0", "proto", "static");
            s = inHost.call(manager::resync);
            assertThat(s.routesDeleted()).isEqualTo(2);
            assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP, B_IP);
            assertThat(routes("-4", "proto", "static")).extracting(n -> n.path("dst").asText())
                    .containsExactly("10.99.0.3");

            // Removing the endpoint removes its route and traffic to it fails.
            graph.onUpdates(List.of(Update.deleted(wep("b", B_IF, B_IP + "/32").key(), ++revision)));
            flush();
            assertThat(ourRoutes("-4")).containsExactly(Map.entry(A_IP, A_IF));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("b's route removed").isFalse();

            // And back.
            put(wep("b", B_IF, B_IP + "/32"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("b re-added").isTrue();
        }
    }

    @Test
    void interfaceVanishingAndReturningAndAddressChanges() {
        wireWorkload(a, A_IF, A_IP);
        wireWorkload(b, B_IF, B_IP);
        put(allowAllProfile(), wep("a", A_IF, A_IP + "/32"), wep("b", B_IF, B_IP + "/32"));
        assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP, B_IP);

        // The veth goes (the workload namespace is torn down): its route goes with it.
        host.exec("ip", "link", "del", B_IF);
        assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP);
        inHost.call(manager::resync);
        assertThat(inHost.call(manager::pendingInterfaces)).containsExactly(B_IF);

        // It comes back (a new link, new index): the next apply re-adds and reconfigures.
        wireWorkload(b, B_IF, B_IP);
        RouteManager.Stats s = inHost.call(() -> manager.apply(List.of()));
        assertThat(s.routesAdded()).isEqualTo(1);
        assertThat(s.interfacesConfigured()).isEqualTo(1);
        assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP, B_IP);
        assertThat(host.sysctl("ipv4/conf/" + B_IF + "/proxy_arp")).isEqualTo("1");
        assertThat(inHost.call(manager::pendingInterfaces)).isEmpty();

        // The same thing unnoticed by apply (deleted and re-created between calls): resync sees the new index.
        host.exec("ip", "link", "del", B_IF);
        wireWorkload(b, B_IF, B_IP);
        assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP);
        s = inHost.call(manager::resync);
        assertThat(s.routesAdded()).isEqualTo(1);
        assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP, B_IP);

        // A restarted manager (no memory) replaying the same state deletes nothing it should keep.
        host.exec("ip", "route", "add", "10.99.0.2/32", "dev", A_IF, "proto", "80");
        RouteManager restarted = inHost.call(() -> new RouteManager(netlink, new Sysctls()));
        // The whole snapshot in one batch ending in InSync: straight to resync, which finds the
        // kernel's routes before it has configured any interface.
        List<DataplaneUpdate> snapshot = new ArrayList<>();
        history.forEach(snapshot::addAll);
        snapshot.add(new DataplaneUpdate.InSync());
        RouteManager.Stats r = inHost.call(() -> restarted.apply(snapshot));
        assertThat(r.routesDeleted()).as("only the stale route").isEqualTo(1);
        assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP, B_IP);
        assertThat(inHost.call(restarted::programmedRoutes)).containsOnlyKeys(A_IP + "/32", B_IP + "/32");
        manager = restarted;

        // The endpoint's address changes: the old route goes, the new one comes.
        put(wep("a", A_IF, "10.65.0.3/32"));
        assertThat(ourRoutes("-4")).containsOnly(Map.entry("10.65.0.3", A_IF), Map.entry(B_IP, B_IF));

        // The endpoint moves to another interface (b's address now on a's veth: a stale
        // claim on one net by two endpoints resolves to the first by id).
        put(wep("a", B_IF, "10.65.0.3/32"));
        assertThat(ourRoutes("-4")).containsOnly(Map.entry("10.65.0.3", B_IF), Map.entry(B_IP, B_IF));
        // a's interface is no longer needed: nothing of ours remains on it.
        assertThat(routes("-4", "dev", A_IF, "proto", "80")).isEmpty();
    }

    /**
     * Issue 29: a felix restarted while typha is down never gets in sync; its periodic refresh
     * resyncs a manager that knows no endpoint. The pods' routes the previous felix programmed, and
     * even stale or strangers' ones, stay until the model is in sync; then only the stale ones go.
     */
    @Test
    void aResyncBeforeInSyncDeletesNothing() {
        wireWorkload(a, A_IF, A_IP);
        host.exec("ip", "route", "add", A_IP + "/32", "dev", A_IF, "scope", "link", "proto", "80");
        host.exec("ip", "route", "add", "10.99.0.1/32", "dev", A_IF, "proto", "static");
        host.exec("ip", "route", "add", "10.99.0.2/32", "dev", A_IF, "proto", "80");

        RouteManager.Stats s = inHost.call(manager::resync);
        assertThat(s.routesDeleted()).as("nothing deleted before in sync").isZero();
        assertThat(ourRoutes("-4")).containsOnlyKeys(A_IP, "10.99.0.2");
        assertThat(routes("-4", "proto", "static")).hasSize(1);

        put(allowAllProfile(), wep("a", A_IF, A_IP + "/32"));
        graph.onStatus(SyncerStatus.IN_SYNC);
        flush();
        assertThat(ourRoutes("-4")).as("in sync: the stale route goes, the pod's stays")
                .containsExactly(Map.entry(A_IP, A_IF));
        assertThat(routes("-4", "proto", "static")).isEmpty();
    }

    @Test
    void badEndpointFailsTheBatchNamingTheField() {
        List<String> none = List.of();
        DataplaneUpdate bad = new DataplaneUpdate.WorkloadEndpointUpdate("test/x", "", "ee:ee:ee:ee:ee:ee",
                List.of("10.65.0.9/32"), none, none, List.of(), List.of());
        assertThatThrownBy(() -> inHost.call(() -> manager.apply(List.of(bad))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("test/x")
                .hasMessageContaining("interfaceName");
        DataplaneUpdate badNet = new DataplaneUpdate.WorkloadEndpointUpdate("test/y", A_IF, null,
                List.of("fd00::1/128"), none, none, List.of(), List.of());
        assertThatThrownBy(() -> inHost.call(() -> manager.apply(List.of(badNet))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ipv4Nets");
        assertThat(inHost.call(manager::pendingInterfaces)).isEmpty();
        assertThat(inHost.call(manager::programmedRoutes)).isEmpty();
    }

    // ------------------------------------------------------------------ helpers

    @Test
    void linkUpdatesProgramAndForgetAtOnce() {
        put(allowAllProfile(), wep("b", B_IF, B_IP + "/32"));
        assertThat(inHost.call(manager::pendingInterfaces)).containsExactly(B_IF);

        // Interfaces no endpoint needs are ignored.
        RouteManager.Stats s = inHost.call(() -> manager.onLinkUpdate(new LinkUpdate("up0", 2, true, false)));
        assertThat(s.routesAdded() + s.interfacesConfigured()).isZero();

        // The veth appears (down on the host side): configured and routed from the announcement alone.
        wireWorkload(b, B_IF, B_IP);
        host.exec("ip", "link", "set", B_IF, "down");
        int index = inHost.call(() -> netlink.linkIndex(B_IF));
        s = inHost.call(() -> manager.onLinkUpdate(new LinkUpdate(B_IF, index, false, false)));
        assertThat(s.interfacesConfigured()).isEqualTo(1);
        assertThat(s.routesAdded()).isEqualTo(1);
        assertThat(ourRoutes("-4")).containsExactly(Map.entry(B_IP, B_IF));
        assertThat(inHost.call(manager::pendingInterfaces)).isEmpty();

        // A deletion announcement for an older link of the same name changes nothing.
        s = inHost.call(() -> manager.onLinkUpdate(new LinkUpdate(B_IF, index + 1000, false, true)));
        assertThat(inHost.call(manager::pendingInterfaces)).isEmpty();

        // Set down by someone: the kernel drops the route; the up announcement brings it back.
        host.exec("ip", "link", "set", B_IF, "down");
        inHost.call(() -> manager.onLinkUpdate(new LinkUpdate(B_IF, index, false, false)));
        assertThat(ourRoutes("-4")).isEmpty();
        host.exec("ip", "link", "set", B_IF, "up");
        s = inHost.call(() -> manager.onLinkUpdate(new LinkUpdate(B_IF, index, true, false)));
        assertThat(s.routesAdded()).isEqualTo(1);
        assertThat(ourRoutes("-4")).containsExactly(Map.entry(B_IP, B_IF));

        // Deleted: pending again.
        host.exec("ip", "link", "del", B_IF);
        inHost.call(() -> manager.onLinkUpdate(new LinkUpdate(B_IF, index, false, true)));
        assertThat(inHost.call(manager::pendingInterfaces)).containsExactly(B_IF);
    }

    @Test
    void manyPendingInterfacesAreLookedUpInOneDumpAndStillPickedUpByTheNextApply() {
        // More pending interfaces than one apply looks up one by one: the apply dumps the links.
        List<Resource> weps = new ArrayList<>(List.of(allowAllProfile()));
        for (int i = 0; i <= RouteManager.LOOKUPS_BEFORE_DUMP; i++) {
            weps.add(wep("p" + i, "calipend" + i, "10.65.1." + (i + 1) + "/32"));
        }
        weps.add(wep("b", B_IF, B_IP + "/32"));
        put(weps.toArray(Resource[]::new));
        assertThat(inHost.call(manager::pendingInterfaces)).hasSize(RouteManager.LOOKUPS_BEFORE_DUMP + 2);

        // b's veth appears with no announcement; an apply that touches no endpoint still finds it.
        wireWorkload(b, B_IF, B_IP);
        RouteManager.Stats s = inHost.call(() -> manager.apply(List.of()));
        assertThat(s.interfacesConfigured()).isEqualTo(1);
        assertThat(s.routesAdded()).isEqualTo(1);
        assertThat(ourRoutes("-4")).containsExactly(Map.entry(B_IP, B_IF));
        assertThat(inHost.call(manager::pendingInterfaces)).hasSize(RouteManager.LOOKUPS_BEFORE_DUMP + 1)
                .doesNotContain(B_IF);
    }

    /**
     * {@code interfacePrefix} is a list ({@code cali,tap}): an endpoint on any listed prefix is a
     * workload interface and gets its route; one on another interface is not felix's to route.
     * Narrowing the list takes the route of the prefix that left it away.
     */
    @Test
    void routesTheInterfacesOfEveryPrefixAndNoOthers() {
        String tapIf = "tapb1b2c3d4e5f";
        String otherIf = "vethc1b2c3d4e5";
        String cIp = "10.65.0.3";
        NetNs c = ns("rtc");
        wireWorkload(a, A_IF, A_IP);
        wireWorkload(b, tapIf, B_IP);
        wireWorkload(c, otherIf, cIp);
        put(interfacePrefix("cali,tap"), allowAllProfile(), wep("a", A_IF, A_IP + "/32"),
                wep("b", tapIf, B_IP + "/32"), wep("c", otherIf, cIp + "/32"));
        graph.onStatus(SyncerStatus.IN_SYNC);
        flush();

        assertThat(ourRoutes("-4")).as("cali and tap are workload interfaces, veth is not")
                .containsExactly(Map.entry(A_IP, A_IF), Map.entry(B_IP, tapIf));

        put(interfacePrefix("cali"));
        assertThat(ourRoutes("-4")).containsExactly(Map.entry(A_IP, A_IF));

        // removeExternalRoutes: false leaves a stranger's route through a workload interface alone; true removes it.
        put(felixConfig("{interfacePrefix: cali, removeExternalRoutes: false}"));
        host.exec("ip", "route", "add", "10.99.0.1/32", "dev", A_IF, "proto", "static");
        assertThat(inHost.call(manager::resync).routesDeleted()).isZero();
        assertThat(routes("-4", "proto", "static")).extracting(n -> n.path("dst").asText()).containsExactly("10.99.0.1");
        put(felixConfig("{interfacePrefix: cali, removeExternalRoutes: true}"));
        assertThat(inHost.call(manager::resync).routesDeleted()).isEqualTo(1);
        assertThat(routes("-4", "proto", "static")).isEmpty();
        assertThat(ourRoutes("-4")).as("felix's own route stays").containsExactly(Map.entry(A_IP, A_IF));
    }

    private static Resource felixConfig(String spec) {
        return ResourceCodec.get().parse("apiVersion: projectcalico.org/v3\nkind: FelixConfiguration\n"
                + "metadata: {name: default}\nspec: " + spec + "\n");
    }

    private static Resource interfacePrefix(String prefixes) {
        return ResourceCodec.get().parse("apiVersion: projectcalico.org/v3\nkind: FelixConfiguration\n"
                + "metadata: {name: default}\nspec: {interfacePrefix: \"" + prefixes + "\"}\n");
    }

    private void put(Resource... resources) {
        graph.onUpdates(Arrays.stream(resources).map(r -> Update.of(UpdateType.NEW, r, ++revision)).toList());
        flush();
    }

    private void flush() {
        graph.flush();
        List<List<DataplaneUpdate>> out = new ArrayList<>(batches);
        batches.clear();
        for (List<DataplaneUpdate> batch : out) {
            history.add(batch);
            inHost.call(() -> manager.apply(batch));
        }
    }

    /** What the CNI plugin does; the host-side route and sysctls are the manager's job. */
    private void wireWorkload(NetNs w, String hostIf, String ip) {
        host.veth(hostIf, w, "eth0");
        w.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        w.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
    }

    private static WorkloadEndpoint wep(String name, String iface, String... nets) {
        return new WorkloadEndpoint(ObjectMeta.namespaced("test", name).withLabels(Map.of("app", name)),
                new WorkloadEndpointSpec("k8s", null, NODE, null, name, "eth0", null, List.of(nets), null,
                        null, null, List.of("kns.test"), iface, "ee:ee:ee:ee:ee:ee", List.of(), null));
    }

    private static Profile allowAllProfile() {
        return new Profile(ObjectMeta.named("kns.test"),
                new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of()));
    }

    /** Destination to device of the host's routes with our protocol. */
    private Map<String, String> ourRoutes(String family) {
        Map<String, String> out = new TreeMap<>();
        for (JsonNode r : routes(family, "proto", "80")) {
            out.put(r.path("dst").asText(), r.path("dev").asText());
        }
        return out;
    }

    private List<JsonNode> routes(String family, String... filter) {
        List<String> cmd = new ArrayList<>(List.of("ip", "-j", family, "route", "show", "table", "main"));
        cmd.addAll(List.of(filter));
        try {
            List<JsonNode> out = new ArrayList<>();
            JSON.readTree(host.exec(cmd.toArray(String[]::new))).forEach(out::add);
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }
}
