package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.EntityRule;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.api.selector.Selector;
import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.Names;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The whole kernel dataplane against real namespaces: a "host" namespace that the
 * {@link KernelDataplane} enters itself (its thread setns()'s, its iptables tools run under
 * {@code ip netns exec}), two workload namespaces on veths wired only as the CNI plugin would
 * (address and default route inside the workload; nothing on the host side). Routes and
 * interface sysctls on the host side, and the filter rules, come from the dataplane fed by a real
 * calculation graph; Java TCP connects between the workloads decide reachability. The machine's
 * own namespace is never touched.
 */
class KernelDataplaneTest {

    private static final java.time.Duration CONNECT_TIMEOUT = java.time.Duration.ofSeconds(1);

    private static final String NODE = "node1";
    private static final String A_IP = "10.65.0.1";
    private static final String B_IP = "10.65.0.2";
    private static final String A_IF = "cali1234abcd";
    private static final String B_IF = "cali5678abcd";

    private final List<NetNs> namespaces = new ArrayList<>();
    private final List<List<DataplaneUpdate>> pending = new ArrayList<>();
    private NetNs host;
    private KernelDataplane dataplane;
    private CalculationGraph graph;
    private long revision;

    @AfterEach
    void tearDown() {
        if (dataplane != null) {
            dataplane.close();
        }
        namespaces.forEach(NetNs::close);
    }

    @Test
    void programsRoutesSysctlsAndPolicyInItsNamespace() throws IOException {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        IptablesBackend backend = wire();
        NetNs a = namespaces.get(1);
        NetNs b = namespaces.get(2);
        assertThat(host.exec("ip", "route", "show", "proto", "80")).as("no felix routes yet").isBlank();
        assertThat(host.sysctl("ipv4/conf/" + A_IF + "/proxy_arp")).isEqualTo("0");
        assertThat(host.sysctl("ipv4/ip_forward")).as("a new namespace does not forward").isEqualTo("0");

        dataplane = new KernelDataplane(host.name());
        graph = CalculationGraph.create(NODE, pending::add);

        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket b8080 = b.call(() -> new ServerSocket(8080, 50, bAddr))) {
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("no routes on the host yet").isFalse();

            // (1) Allow-all profile: the dataplane programs routes and sysctls; traffic flows.
            put(tier("default", 1000.0), allowAllProfile("kns.test"),
                    wep("a", A_IP, A_IF, "a"), wep("b", B_IP, B_IF, "b"));
            graph.onStatus(SyncerStatus.IN_SYNC);
            flush();
            assertThat(dataplane.errors()).isEmpty();
            assertThat(dataplane.inSync()).isTrue();
            String routes = host.exec("ip", "route", "show", "proto", "80");
            assertThat(routes).contains(A_IP + " dev " + A_IF).contains(B_IP + " dev " + B_IF);
            for (String iface : List.of(A_IF, B_IF)) {
                assertThat(host.sysctl("ipv4/conf/" + iface + "/proxy_arp")).isEqualTo("1");
                assertThat(host.sysctl("ipv4/conf/" + iface + "/forwarding")).isEqualTo("1");
            }
            assertThat(host.sysctl("ipv4/ip_forward")).as("set by the dataplane").isEqualTo("1");
            assertThat(host.sysctl("ipv6/conf/all/forwarding")).as("ipv6Support defaults to true").isEqualTo("1");
            assertThat(dataplane.backend()).isEqualTo("iptables-" + backend.name().toLowerCase(java.util.Locale.ROOT));
            assertThat(host.exec("ip", "netns", "exec", host.name(), backend.saveBinary(IpVersion.V4), "-t", "filter"))
                    .contains("-A FORWARD -j cali-FORWARD");
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("profile allows a->b").isTrue();

            // (2) A policy selecting b with no rules: the tier's default denies ingress to b.
            put(gnp("deny-b", "app == 'b'"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("default deny on b").isFalse();

            // Nothing drifted: a refresh repairs nothing. A stranger's rule is repaired.
            assertThat(dataplane.refreshNow()).isZero();
            host.exec("iptables-" + (backend == IptablesBackend.NFT ? "nft" : "legacy"),
                    "-D", "FORWARD", "-j", "cali-FORWARD");
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("jump deleted by a stranger").isTrue();
            assertThat(dataplane.refreshNow()).isPositive();
            assertThat(dataplane.repairs()).isPositive();
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("jump restored").isFalse();

            // (3) No errors along the way, and the default refresh interval came from the config.
            assertThat(dataplane.errors()).isEmpty();
            assertThat(dataplane.refreshInterval()).hasSeconds(180);
        }
    }

    @Test
    void aFailedBatchIsRecordedNotThrownAndTheNextBatchResyncs() throws IOException {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        IptablesBackend backend = wire();
        NetNs a = namespaces.get(1);
        NetNs b = namespaces.get(2);
        dataplane = new KernelDataplane(host.name());
        graph = CalculationGraph.create(NODE, pending::add);
        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket b8080 = b.call(() -> new ServerSocket(8080, 50, bAddr))) {
            put(tier("default", 1000.0), allowAllProfile("kns.test"),
                    wep("a", A_IP, A_IF, "a"), wep("b", B_IP, B_IF, "b"));
            graph.onStatus(SyncerStatus.IN_SYNC);
            flush();
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).isTrue();
            assertThat(dataplane.errors()).isEmpty();

            // A stranger holds the name of the IP set the next policy needs, with another family:
            // programming fails. apply() must return normally and record it.
            String set = Names.ipSetV4(Selector.parse("app == 'a'").uniqueId());
            host.exec("ipset", "create", set, "hash:net", "family", "inet6");
            put(gnp("deny-b", "app == 'b'"), allowFrom("only-a", "app == 'b'", "app == 'a'"));
            assertThat(dataplane.errors()).hasSize(1);
            assertThat(dataplane.errors().get(0)).contains("failed");

            // The stranger goes away: the next batch (about something else: a workload whose
            // interface does not exist yet) resyncs everything.
            host.exec("ipset", "destroy", set);
            put(wep("c", "10.65.0.3", "cali9999abcd", "c"));
            assertThat(dataplane.errors()).as("recovered: nothing unresolved").isEmpty();
            assertThat(dataplane.recentErrors()).singleElement().asString().contains("failed");
            assertThat(dataplane.status().failures()).isEqualTo(1);
            assertThat(host.exec("ipset", "list", set)).contains("10.65.0.1");
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("a allowed by the resynced policy").isTrue();
            put(wep("a", A_IP, A_IF, "not-a"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("a relabelled: default deny").isFalse();
            assertThat(dataplane.errors()).isEmpty();
            assertThat(dataplane.recentErrors()).hasSize(1);
        }
    }

    /** Host and workload namespaces; {@return the iptables backend the host namespace uses}. */
    private IptablesBackend wire() {
        host = ns("kdh");
        NetNs a = ns("kda");
        NetNs b = ns("kdb");
        List<String> prefix = List.of("ip", "netns", "exec", host.name());
        IptablesBackend backend = IptablesBackend.detect(prefix);
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/" + backend.restoreBinary(IpVersion.V4))),
                "backend installed");
        // Host-wide wiring a node has anyway: an uplink so proxy ARP answers. (The dataplane
        // itself turns on net.ipv4.ip_forward.)
        host.uplink();
        wireWorkload(a, A_IF, A_IP);
        wireWorkload(b, B_IF, B_IP);
        return backend;
    }

    private void put(Resource... resources) {
        graph.onUpdates(Arrays.stream(resources).map(r -> Update.of(UpdateType.NEW, r, ++revision)).toList());
        flush();
    }

    private void flush() {
        graph.flush();
        List<List<DataplaneUpdate>> batches = new ArrayList<>(pending);
        pending.clear();
        batches.forEach(dataplane::apply);
        assertThat(dataplane.awaitApplied(java.time.Duration.ofSeconds(60))).as("batches applied").isTrue();
    }

    /** What the CNI plugin does: only the workload side. The host side is the dataplane's job. */
    private void wireWorkload(NetNs w, String hostIf, String ip) {
        host.veth(hostIf, w, "eth0");
        w.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        w.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }

    private static WorkloadEndpoint wep(String name, String ip, String iface, String app) {
        return new WorkloadEndpoint(ObjectMeta.namespaced("test", name).withLabels(Map.of("app", app)),
                new WorkloadEndpointSpec("k8s", null, NODE, null, name, "eth0", null, List.of(ip + "/32"), null,
                        null, null, List.of("kns.test"), iface, "ee:ee:ee:ee:ee:ee", List.of(), null));
    }

    private static Tier tier(String name, Double order) {
        return new Tier(ObjectMeta.named(name), new TierSpec(order, null));
    }

    private static Profile allowAllProfile(String name) {
        return new Profile(ObjectMeta.named(name),
                new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of()));
    }

    private static GlobalNetworkPolicy allowFrom(String name, String selector, String source) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec("default", 0.5,
                List.of(Rule.allow().withSource(EntityRule.empty().withSelector(source))), List.of(), selector,
                List.of(PolicyType.Ingress), null, null, null, null, null, null));
    }

    private static GlobalNetworkPolicy gnp(String name, String selector) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec("default", 1.0, List.of(),
                List.of(), selector, List.of(PolicyType.Ingress), null, null, null, null, null, null));
    }
}
