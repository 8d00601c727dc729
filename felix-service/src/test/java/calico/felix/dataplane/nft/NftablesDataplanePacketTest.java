package calico.felix.dataplane.nft;

import static calico.felix.dataplane.testing.Fixtures.action;
import static calico.felix.dataplane.testing.Fixtures.allowAllProfile;
import static calico.felix.dataplane.testing.Fixtures.gnp;
import static calico.felix.dataplane.testing.Fixtures.wep;
import static calico.felix.dataplane.testing.Fixtures.tier;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.EntityRule;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.selector.Selector;
import calico.dataplane.nft.Nftables;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real packets through the nftables driver, the scenarios of the iptables packet test: a "host"
 * namespace with two dual-stack workload namespaces on veths wired as felix and the CNI plugin
 * would (host side {@code cali…} with proxy ARP and /32, /128 routes; workload side {@code eth0}
 * with default routes via 169.254.1.1 and fe80::1). A calculation graph for the host node is fed
 * v3 resources; its batches go to a {@link NftablesDataplane} on a thread inside the host
 * namespace. TCP connects between the workloads, over IPv4 and IPv6, decide reachability.
 */
class NftablesDataplanePacketTest {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);

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
    private NamespaceThread dataplaneThread;
    private Nftables nft;
    private final List<List<DataplaneUpdate>> pending = new ArrayList<>();
    private CalculationGraph graph;
    private NftablesDataplane dataplane;
    private long revision;

    @AfterEach
    void tearDown() {
        if (dataplaneThread != null) {
            dataplaneThread.run(nft::close);
            dataplaneThread.close();
        }
        namespaces.forEach(NetNs::close);
    }

    @Test
    void policiesDecideWhichWorkloadsCanConnect() throws IOException {
        start();
        try (Listeners l = listeners()) {
            // Before any rules: the wiring itself works, both families.
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("plain routing").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("plain routing v6").isTrue();

            // Profiles allow everything, no policy: allowed both ways.
            put(tier("default", 1000.0), allowAllProfile("kns.test"),
                    wep("test", "a", NODE, List.of(A_IP + "/32", A_IP6 + "/128"), A_IF, Map.of("app", "a"), "kns.test"),
                    wep("test", "b", NODE, List.of(B_IP + "/32", B_IP6 + "/128"), B_IF, Map.of("app", "b"), "kns.test"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("profile allows a->b").isTrue();
            assertThat(b.tcpConnects(A_IP, 8080, CONNECT_TIMEOUT)).as("profile allows b->a").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("profile allows a->b v6").isTrue();

            // A policy selecting b with no rules: the tier's default denies ingress to b only.
            put(gnp("guard-b", "app == 'b'", List.of(), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("tier default deny").isFalse();
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("tier default deny v6").isFalse();
            assertThat(b.tcpConnects(A_IP, 8080, CONNECT_TIMEOUT)).as("a is not selected").isTrue();

            // Allow from app == 'a' (a set per family of a's addresses).
            Rule fromA = Rule.allow().withSource(EntityRule.empty().withSelector("app == 'a'"));
            put(gnp("guard-b", "app == 'b'", List.of(fromA), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("allowed by selector").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("allowed by selector v6").isTrue();

            // Narrow to TCP 8080.
            Rule fromAto8080 = fromA.withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8080))));
            put(gnp("guard-b", "app == 'b'", List.of(fromAto8080), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("port rule allows 8080").isTrue();
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("port rule blocks 8081").isFalse();
            assertThat(a.tcpConnects(B_IP6, 8081, CONNECT_TIMEOUT)).as("port rule blocks 8081 v6").isFalse();

            // Relabelling a takes it out of the sets, and back ...
            List<ApplyStats> relabel = put(wep("test", "a", NODE, List.of(A_IP + "/32", A_IP6 + "/128"), A_IF, Map.of("app", "other"), "kns.test"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("label change blocks").isFalse();
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("label change blocks v6").isFalse();
            // ... by element edits of the two family sets, without rewriting any chain.
            assertThat(relabel).isNotEmpty().allMatch(st -> !st.resync() && st.chainsWritten() == 0);
            assertThat(relabel.stream().mapToInt(ApplyStats::setsWritten).sum()).isEqualTo(2);
            put(wep("test", "a", NODE, List.of(A_IP + "/32", A_IP6 + "/128"), A_IF, Map.of("app", "a"), "kns.test"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("label change back allows").isTrue();

            // Someone empties our IPv4 set: refresh refills it.
            String setV4 = Names.ipSet(IpFamily.V4, Selector.parse("app == 'a'").uniqueId());
            host.exec("nft", "flush", "set", "inet", "calico", setV4);
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("set flushed by a stranger").isFalse();
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("the v6 set is intact").isTrue();
            assertThat(refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("set refilled").isTrue();

            // A stranger's rule in one of our chains is removed by refresh().
            assertThat(refresh()).isZero();
            host.exec("nft", "insert", "rule", "inet", "calico", Names.toWorkload(B_IF), "drop");
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("stranger's drop").isFalse();
            assertThat(refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("after refresh").isTrue();

            // Someone empties our base chain: refresh puts the jump back.
            host.exec("nft", "flush", "chain", "inet", "calico", "filter-FORWARD");
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("no jump: no policy").isTrue();
            assertThat(refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("jump restored").isFalse();

            // Removing the policy leaves profiles deciding; a full resync changes nothing.
            graph.onUpdates(List.of(Update.deleted(gnp("guard-b", "all()", List.of()).key(), ++revision)));
            flush();
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("policy removed").isTrue();
            dataplaneThread.call(dataplane::resync);
            assertThat(refresh()).isZero();
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).isTrue();
            assertThat(a.tcpConnects(B_IP6, 8081, CONNECT_TIMEOUT)).isTrue();

            // Removing everything leaves plain routing.
            dataplaneThread.run(dataplane::removeAll);
            assertThat(host.exec("nft", "list", "tables")).doesNotContain("calico");
        }
    }

    @Test
    void passHandsOverToTheNextTierAndEgressDenyRulesBlock() throws IOException {
        start();
        try (Listeners l = listeners()) {
            put(tier("security", 1.0), tier("default", 1000.0), allowAllProfile("kns.test"),
                    wep("test", "a", NODE, List.of(A_IP + "/32", A_IP6 + "/128"), A_IF, Map.of("app", "a"), "kns.test"),
                    wep("test", "b", NODE, List.of(B_IP + "/32", B_IP6 + "/128"), B_IF, Map.of("app", "b"), "kns.test"),
                    // Ingress to everyone: traffic from app == 'a' goes on to the next tier, the rest is denied.
                    gnp("pass-a", "security", "all()",
                            List.of(action(calico.api.model.Action.Pass)
                                    .withSource(EntityRule.empty().withSelector("app == 'a'"))),
                            List.of(), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("passed, then the profile allows").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("passed, then the profile allows v6").isTrue();
            assertThat(b.tcpConnects(A_IP, 8080, CONNECT_TIMEOUT)).as("not passed: the security tier's default denies").isFalse();

            // Egress from a: deny TCP 8081, allow the rest.
            put(gnp("a-out", "default", "app == 'a'", List.of(), List.of(
                    action(calico.api.model.Action.Deny).withProtocol(Protocol.TCP)
                            .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8081)))),
                    Rule.allow()), PolicyType.Egress));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("egress allow").isTrue();
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("egress deny rule").isFalse();
            assertThat(a.tcpConnects(B_IP6, 8081, CONNECT_TIMEOUT)).as("egress deny rule v6").isFalse();

            // Egress to nets: deny b's IPv6 address only; IPv4 still allowed.
            put(gnp("a-out", "default", "app == 'a'", List.of(), List.of(
                    action(calico.api.model.Action.Deny).withDestination(EntityRule.empty().withNets(List.of(B_IP6 + "/128"))),
                    Rule.allow()), PolicyType.Egress));
            assertThat(a.tcpConnects(B_IP6, 8080, CONNECT_TIMEOUT)).as("v6 net denied").isFalse();
            assertThat(a.tcpConnects(B_IP, 8081, CONNECT_TIMEOUT)).as("v4 unaffected").isTrue();
        }
    }

    /** Listeners in both workloads, both families. */
    private Listeners listeners() throws IOException {
        List<ServerSocket> s = new ArrayList<>();
        for (String ip : List.of(B_IP, B_IP6)) {
            InetAddress addr = InetAddress.getByName(ip);
            s.add(b.call(() -> new ServerSocket(8080, 50, addr)));
            s.add(b.call(() -> new ServerSocket(8081, 50, addr)));
        }
        for (String ip : List.of(A_IP, A_IP6)) {
            InetAddress addr = InetAddress.getByName(ip);
            s.add(a.call(() -> new ServerSocket(8080, 50, addr)));
        }
        return new Listeners(s);
    }

    private record Listeners(List<ServerSocket> sockets) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            for (ServerSocket s : sockets) {
                s.close();
            }
        }
    }

    private int refresh() {
        return dataplaneThread.call(dataplane::refresh);
    }

    private List<ApplyStats> put(Resource... resources) {
        graph.onUpdates(Arrays.stream(resources).map(r -> Update.of(UpdateType.NEW, r, ++revision)).toList());
        return flush();
    }

    private List<ApplyStats> flush() {
        graph.flush();
        List<List<DataplaneUpdate>> batches = new ArrayList<>(pending);
        pending.clear();
        return batches.stream().map(batch -> dataplaneThread.call(() -> dataplane.apply(batch))).toList();
    }

    /** Wires the namespaces and builds the graph and the driver (on a thread inside the host namespace). */
    private void start() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        wire();
        dataplaneThread = new NamespaceThread(host);
        nft = dataplaneThread.call(Nftables::open);
        dataplane = new NftablesDataplane(nft);
        graph = CalculationGraph.create(NODE, pending::add);
    }

    private void wire() {
        host = ns("nfh");
        a = ns("nfa");
        b = ns("nfb");
        host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        host.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
        // Proxy ARP answers only for addresses routed out of another interface: give the host a default route.
        host.uplink();
        wireWorkload(a, A_IF, A_IP, A_IP6);
        wireWorkload(b, B_IF, B_IP, B_IP6);
    }

    /** What the CNI plugin and felix do for a local dual-stack workload. */
    private void wireWorkload(NetNs w, String hostIf, String ip, String ip6) {
        host.veth(hostIf, w, "eth0");
        w.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        w.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
        w.exec("ip", "-6", "addr", "add", ip6 + "/128", "dev", "eth0", "nodad");
        host.exec("sysctl", "-qw", "net.ipv4.conf." + hostIf + ".proxy_arp=1");
        host.exec("sysctl", "-qw", "net.ipv4.neigh." + hostIf + ".proxy_delay=0");
        host.exec("sysctl", "-qw", "net.ipv4.conf." + hostIf + ".forwarding=1");
        host.exec("ip", "route", "add", ip + "/32", "dev", hostIf);
        // IPv6: the host side answers as the workload's gateway on a link-local address.
        host.exec("ip", "-6", "addr", "add", "fe80::1/64", "dev", hostIf, "nodad");
        w.exec("ip", "-6", "route", "add", "default", "via", "fe80::1", "dev", "eth0");
        host.exec("ip", "-6", "route", "add", ip6 + "/128", "dev", hostIf);
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }
}
