package calico.felix.dataplane.iptables;

import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver;
import static calico.felix.dataplane.testing.Fixtures.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.EntityRule;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Real packets through the driver: a "host" namespace with two workload namespaces on veths
 * wired as felix/the CNI plugin would (host side {@code cali…} with proxy ARP and a /32 route,
 * workload side {@code eth0} with a /32 and a default route via 169.254.1.1). A calculation
 * graph for the host node is fed v3 resources; its batches go to an {@link IptablesDataplane}
 * programming the host namespace. Java TCP connects from one workload to a listener in the
 * other decide reachability. Only the test's own namespaces are touched.
 */
class IptablesDataplanePacketTest {

    private static final java.time.Duration CONNECT_TIMEOUT = java.time.Duration.ofSeconds(1);
    /** Negative probes: a blocked SYN within 300 ms on a veth is as good as never. */
    private static final java.time.Duration NO = java.time.Duration.ofMillis(300);

    private static final String NODE = "node1";
    private static final String A_IP = "10.65.0.1";
    private static final String B_IP = "10.65.0.2";
    private static final String A_IP6 = "fd00:65::1";
    private static final String B_IP6 = "fd00:65::2";
    private static final String A_IF = "cali1234abcd";
    private static final String B_IF = "cali5678abcd";

    private final List<NetNs> namespaces = new ArrayList<>();
    private NetNs host;
    private NetNs a;
    private NetNs b;
    private final List<List<DataplaneUpdate>> pending = new ArrayList<>();
    private CalculationGraph graph;
    private IptablesDataplane dataplane;
    private long revision;

    @AfterEach
    void tearDown() {
        namespaces.forEach(NetNs::close);
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void policiesDecideWhichWorkloadsCanConnect(IptablesBackend backend) throws IOException {
        start(backend);

        InetAddress aAddr = InetAddress.getByName(A_IP);
        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket b8080 = b.call(() -> new ServerSocket(8080, 50, bAddr));
                ServerSocket b8081 = b.call(() -> new ServerSocket(8081, 50, bAddr));
                ServerSocket a8080 = a.call(() -> new ServerSocket(8080, 50, aAddr))) {
            // Before any rules: the wiring itself works.
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("plain routing").isTrue();

            // Profiles allow everything, no policy: allowed both ways.
            put(tier("default", 1000.0), allowAllProfile("kns.test"),
                    wep("test", "a", NODE, A_IP, A_IF, Map.of("app", "a"), "kns.test"),
                    wep("test", "b", NODE, B_IP, B_IF, Map.of("app", "b"), "kns.test"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("profile allows a->b").isTrue();
            assertThat(b.tcpConnects(A_IP, 8080, CONNECT_TIMEOUT)).as("profile allows b->a").isTrue();

            // A policy selecting b with no rules: the tier's default denies ingress to b only.
            put(gnp("guard-b", "app == 'b'", List.of(), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("tier default deny").isFalse();
            assertThat(b.tcpConnects(A_IP, 8080, CONNECT_TIMEOUT)).as("a is not selected").isTrue();

            // Allow from app == 'a' (an IP set of a's address).
            Rule fromA = Rule.allow().withSource(EntityRule.empty().withSelector("app == 'a'"));
            put(gnp("guard-b", "app == 'b'", List.of(fromA), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("allowed by selector").isTrue();

            // Narrow to TCP 8080.
            Rule fromAto8080 = fromA.withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8080))));
            put(gnp("guard-b", "app == 'b'", List.of(fromAto8080), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("port rule allows 8080").isTrue();
            assertThat(a.tcpConnects(B_IP, 8081, NO)).as("port rule blocks 8081").isFalse();

            // Relabelling a takes it out of the IP set, and back.
            List<calico.felix.dataplane.rules.PolicyDriver.ApplyStats> relabel =
                    put(wep("test", "a", NODE, A_IP, A_IF, Map.of("app", "other"), "kns.test"));
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("label change blocks").isFalse();
            // ... by changing one set's members, without rewriting any chain.
            assertThat(relabel).isNotEmpty().allMatch(st -> !st.resync() && st.chainsWritten() == 0);
            assertThat(relabel.stream().mapToInt(calico.felix.dataplane.rules.PolicyDriver.ApplyStats::setsWritten).sum()).isEqualTo(1);
            put(wep("test", "a", NODE, A_IP, A_IF, Map.of("app", "a"), "kns.test"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("label change back allows").isTrue();

            // Someone empties our IP set: refresh refills it.
            assertThat(host.exec("ipset", "list", "-n")).contains(
                    Names.ipSetV4(calico.api.selector.Selector.parse("app == 'a'").uniqueId()));
            host.exec("ipset", "flush", Names.ipSetV4(calico.api.selector.Selector.parse("app == 'a'").uniqueId()));
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("set flushed by a stranger").isFalse();
            assertThat(dataplane.refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("set refilled").isTrue();

            // A stranger's rule in one of our chains is removed by refresh().
            assertThat(dataplane.refresh()).isZero();
            host.exec(backend.restoreBinary(IpVersion.V4).replace("-restore", ""), "-I", Names.toWorkload(B_IF), "1",
                    "-j", "DROP");
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("stranger's DROP").isFalse();
            assertThat(dataplane.refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("after refresh").isTrue();

            // Someone deletes our FORWARD jump: refresh puts it back.
            host.exec(backend.restoreBinary(IpVersion.V4).replace("-restore", ""), "-D", "FORWARD", "-j",
                    Names.FORWARD);
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("no jump: no policy").isTrue();
            assertThat(dataplane.refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8081, NO)).as("jump restored").isFalse();

            // Removing the policy leaves profiles deciding; a full resync changes nothing.
            graph.onUpdates(List.of(Update.deleted(gnp("guard-b", "all()", List.of()).key(), ++revision)));
            flush();
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("policy removed").isTrue();
            dataplane.resync();
            assertThat(dataplane.refresh()).isZero();
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void passHandsOverToTheNextTierAndEgressDenyRulesBlock(IptablesBackend backend) throws IOException {
        start(backend);
        InetAddress aAddr = InetAddress.getByName(A_IP);
        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket b8080 = b.call(() -> new ServerSocket(8080, 50, bAddr));
                ServerSocket b8081 = b.call(() -> new ServerSocket(8081, 50, bAddr));
                ServerSocket a8080 = a.call(() -> new ServerSocket(8080, 50, aAddr))) {
            put(tier("security", 1.0), tier("default", 1000.0), allowAllProfile("kns.test"),
                    wep("test", "a", NODE, A_IP, A_IF, Map.of("app", "a"), "kns.test"),
                    wep("test", "b", NODE, B_IP, B_IF, Map.of("app", "b"), "kns.test"),
                    // Ingress to everyone: traffic from app == 'a' goes on to the next tier, the rest is denied.
                    gnp("pass-a", "security", "all()",
                            List.of(action(calico.api.model.Action.Pass)
                                    .withSource(EntityRule.empty().withSelector("app == 'a'"))),
                            List.of(), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("passed, then the profile allows").isTrue();
            assertThat(b.tcpConnects(A_IP, 8080, NO)).as("not passed: the security tier's default denies").isFalse();

            // Egress from a: deny TCP 8081, allow the rest.
            put(gnp("a-out", "default", "app == 'a'", List.of(), List.of(
                    action(calico.api.model.Action.Deny).withProtocol(Protocol.TCP)
                            .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8081)))),
                    Rule.allow()), PolicyType.Egress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("egress allow").isTrue();
            assertThat(a.tcpConnects(B_IP, 8081, NO)).as("egress deny rule").isFalse();
        }
    }

    /** Dual-stack workloads through the graph: the v6 addresses land in the cali60 sets and v6 policy holds. */
    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void ipv6FollowsSelectorPolicyThroughTheGraph(IptablesBackend backend) throws IOException {
        start(backend);
        InetAddress b6 = InetAddress.getByName(B_IP6);
        try (ServerSocket b8080 = b.call(() -> new ServerSocket(8080, 50, b6));
                ServerSocket b8081 = b.call(() -> new ServerSocket(8081, 50, b6))) {
            put(tier("default", 1000.0), allowAllProfile("kns.test"),
                    wep("test", "a", NODE, List.of(A_IP + "/32", A_IP6 + "/128"), A_IF, Map.of("app", "a"), "kns.test"),
                    wep("test", "b", NODE, List.of(B_IP + "/32", B_IP6 + "/128"), B_IF, Map.of("app", "b"), "kns.test"));
            assertThat(a.tcpConnects(B_IP6, 8081, java.time.Duration.ofSeconds(2))).as("profile allows v6").isTrue();
            Rule fromAto8080 = Rule.allow().withProtocol(Protocol.TCP)
                    .withSource(EntityRule.empty().withSelector("app == 'a'"))
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8080))));
            put(gnp("guard-b", "app == 'b'", List.of(fromAto8080), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("v6 allowed by selector and port").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8081, NO)).as("v6 other port").isFalse();
            String set6 = Names.ipSet(IpFamily.V6, calico.api.selector.Selector.parse("app == 'a'").uniqueId());
            assertThat(host.exec("ipset", "list", set6)).contains(A_IP6);
            put(wep("test", "a", NODE, List.of(A_IP + "/32", A_IP6 + "/128"), A_IF, Map.of("app", "other"), "kns.test"));
            assertThat(a.tcpConnects(B_IP6, 8080, NO)).as("v6 relabel blocks").isFalse();
            assertThat(dataplane.refresh()).isZero();
        }
    }

    private List<calico.felix.dataplane.rules.PolicyDriver.ApplyStats> put(Resource... resources) {
        graph.onUpdates(Arrays.stream(resources).map(r -> Update.of(UpdateType.NEW, r, ++revision)).toList());
        return flush();
    }

    private List<calico.felix.dataplane.rules.PolicyDriver.ApplyStats> flush() {
        graph.flush();
        List<List<DataplaneUpdate>> batches = new ArrayList<>(pending);
        pending.clear();
        return batches.stream().map(dataplane::apply).toList();
    }

    /** Wires the namespaces and builds the graph and the driver for {@code backend} (skips if unavailable). */
    private void start(IptablesBackend backend) {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/" + backend.restoreBinary(IpVersion.V4))), "backend installed");
        wire();
        List<String> prefix = List.of("ip", "netns", "exec", host.name());
        dataplane = new IptablesDataplane(new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix),
                new Ipset(prefix));
        graph = CalculationGraph.create(NODE, pending::add);
    }

    private void wire() {
        host = ns("iph");
        a = ns("ipa");
        b = ns("ipb");
        for (NetNs n : namespaces) {
            n.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0");
        }
        host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1");
        // Proxy ARP answers only for addresses routed out of another interface: give the host a default route.
        // (a veth pair standing in for the uplink: this kernel has no dummy module)
        host.uplink();
        wireWorkload(a, A_IF, A_IP, A_IP6);
        wireWorkload(b, B_IF, B_IP, B_IP6);
    }

    /** What the CNI plugin and felix do for a local workload (route programming is not in the driver yet). */
    private void wireWorkload(NetNs w, String hostIf, String ip, String ip6) {
        host.veth(hostIf, w, "eth0");
        // The host side's MAC gives it Calico's well-known link-local address, the workloads' IPv6 gateway.
        host.exec("ip", "link", "set", hostIf, "down");
        host.exec("ip", "link", "set", hostIf, "address", "ee:ee:ee:ee:ee:ee");
        host.exec("ip", "link", "set", hostIf, "up");
        w.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        w.exec("ip", "-6", "addr", "add", ip6 + "/128", "dev", "eth0", "nodad");
        w.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
        w.exec("ip", "-6", "route", "add", "default", "via", "fe80::ecee:eeff:feee:eeee", "dev", "eth0");
        host.exec("ip", "-6", "route", "add", ip6 + "/128", "dev", hostIf);
        host.exec("sysctl", "-qw", "net.ipv4.conf." + hostIf + ".proxy_arp=1");
        host.exec("sysctl", "-qw", "net.ipv4.neigh." + hostIf + ".proxy_delay=0");
        host.exec("sysctl", "-qw", "net.ipv4.conf." + hostIf + ".forwarding=1");
        host.exec("ip", "route", "add", ip + "/32", "dev", hostIf);
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }
}
