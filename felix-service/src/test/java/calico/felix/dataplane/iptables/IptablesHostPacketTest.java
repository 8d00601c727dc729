package calico.felix.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.Names;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Real packets through the host-side rules, both backends: a "host" namespace programmed by the
 * driver, two workloads on {@code cali…} veths wired as Calico's CNI plugin does (IPv4 /32 via
 * 169.254.1.1 and IPv6 /128 via the host side's link-local {@code fe80::ecee:eeff:feee:eeee}),
 * and an "outside" namespace behind the host's {@code up0} veth. The driver gets
 * {@link DataplaneUpdate}s directly so each case states exactly what the graph would say.
 * Negative probes wait 300 ms.
 */
class IptablesHostPacketTest {

    private static final Duration NO = Duration.ofMillis(300);
    private static final Duration YES = Duration.ofSeconds(2);

    private static final String A_IP = "10.65.0.1";
    private static final String B_IP = "10.65.0.2";
    private static final String A_IP6 = "fd00:65::1";
    private static final String B_IP6 = "fd00:65::2";
    private static final String A_IF = "cali1234abcd";
    private static final String B_IF = "cali5678abcd";
    private static final String HOST_IP = "192.168.255.1";
    private static final String OUT_IP = "192.168.255.2";
    private static final PolicyId GUARD = new PolicyId("default", null, "guard", ResourceKind.GLOBAL_NETWORK_POLICY);
    private static final CompiledRule ALLOW_ALL = new CompiledRule(Action.Allow, null, null, null, null, null,
            Side.ANY, Side.ANY, null);

    private final List<NetNs> namespaces = new ArrayList<>();
    private NetNs host;
    private NetNs a;
    private NetNs b;
    private NetNs outside;
    private IptablesDataplane dataplane;
    private String iptables;
    private String ip6tables;

    @AfterEach
    void tearDown() {
        namespaces.forEach(NetNs::close);
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void ipv6WorkloadsReachEachOtherThroughPolicy(IptablesBackend backend) throws Exception {
        start(backend);
        InetAddress b6 = InetAddress.getByName(B_IP6);
        try (ServerSocket b8080 = b.call(() -> new ServerSocket(8080, 50, b6));
                ServerSocket b8081 = b.call(() -> new ServerSocket(8081, 50, b6))) {
            assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("plain IPv6 routing").isTrue();
            apply(config(Map.of()), allowAllProfile(), wep("a", A_IF, A_IP, A_IP6, List.of()),
                    wep("b", B_IF, B_IP, B_IP6, List.of()));
            assertThat(dataplane.families()).as("ipv6Support defaults to true").hasSize(2);
            // Neighbour discovery to the host passes cali-wl-to-host although workload-to-host is Drop.
            host.exec("ip", "-6", "neigh", "flush", "dev", A_IF);
            a.exec("ip", "-6", "neigh", "flush", "dev", "eth0");
            assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("profile allows a->b over IPv6").isTrue();

            // b's ingress: allow TCP 8080 from a's set (both families' members), nothing else.
            CompiledRule from8080 = new CompiledRule(Action.Allow, null, "TCP", null, null, null,
                    new Side(List.of(), List.of(), List.of(), List.of(), List.of("s:a"), List.of(), List.of(), List.of()),
                    new Side(List.of(), List.of(), List.of("8080"), List.of(), List.of(), List.of(), List.of(), List.of()),
                    null);
            apply(new DataplaneUpdate.IpSetUpdate("s:a", IpSetType.NET, Set.of(
                            IpSetMember.net(Cidr.parse(A_IP + "/32")), IpSetMember.net(Cidr.parse(A_IP6 + "/128")))),
                    new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(from8080), List.of(), false)),
                    wep("b", B_IF, B_IP, B_IP6, List.of(GUARD)));
            assertThat(host.exec("ipset", "list", Names.ipSet(calico.felix.dataplane.rules.IpFamily.V6, "s:a")))
                    .contains(A_IP6);
            assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("v6 allowed by set and port").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8081, NO)).as("v6 other port denied").isFalse();
            apply(new DataplaneUpdate.IpSetDeltaUpdate("s:a", Set.of(), Set.of(IpSetMember.net(Cidr.parse(A_IP6 + "/128")))));
            assertThat(a.tcpConnects(B_IP6, 8080, NO)).as("a's v6 address left the set").isFalse();
            apply(new DataplaneUpdate.IpSetDeltaUpdate("s:a", Set.of(IpSetMember.net(Cidr.parse(A_IP6 + "/128"))), Set.of()));
            assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("and is back").isTrue();

            // A stranger's DROP in our IPv6 chain is repaired by refresh().
            assertThat(dataplane.refresh()).isZero();
            host.exec(ip6tables, "-I", Names.toWorkload(B_IF), "1", "-j", "DROP");
            assertThat(a.tcpConnects(B_IP6, 8080, NO)).as("stranger's v6 DROP").isFalse();
            assertThat(dataplane.refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("repaired").isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void workloadToHostFollowsDefaultEndpointToHostAction(IptablesBackend backend) throws Exception {
        start(backend);
        try (ServerSocket h = host.call(() -> new ServerSocket(7090, 50, InetAddress.getByName(HOST_IP)))) {
            assertThat(a.tcpConnects(HOST_IP, 7090, YES)).as("no rules yet").isTrue();
            apply(config(Map.of()), allowAllProfile(), wep("a", A_IF, A_IP, A_IP6, List.of()));
            assertThat(a.tcpConnects(HOST_IP, 7090, NO)).as("Drop (default)").isFalse();
            apply(config(Map.of("defaultEndpointToHostAction", "Accept")));
            assertThat(a.tcpConnects(HOST_IP, 7090, YES)).as("Accept").isTrue();
            apply(config(Map.of("defaultEndpointToHostAction", "Return")));
            assertThat(a.tcpConnects(HOST_IP, 7090, YES)).as("Return: INPUT's own policy (ACCEPT) decides").isTrue();
            host.exec(iptables, "-P", "INPUT", "DROP");
            assertThat(a.tcpConnects(HOST_IP, 7090, NO)).as("Return: INPUT's DROP policy decides").isFalse();
            host.exec(iptables, "-P", "INPUT", "ACCEPT");
            // Egress policy still applies first: a workload whose egress denies cannot reach the host even under Accept.
            apply(config(Map.of("defaultEndpointToHostAction", "Accept")),
                    new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(), List.of(), false)),
                    new DataplaneUpdate.WorkloadEndpointUpdate("test/a", A_IF, null, List.of(A_IP + "/32"),
                            List.of(A_IP6 + "/128"), List.of("kns.test"), List.of(),
                            List.of(new TierPolicies("default", Action.Deny, List.of(GUARD), false))));
            assertThat(a.tcpConnects(HOST_IP, 7090, NO)).as("egress deny before Accept").isFalse();
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void hostEndpointDeniesAllButFailsafePorts(IptablesBackend backend) throws Exception {
        start(backend);
        InetAddress hostAddr = InetAddress.getByName(HOST_IP);
        try (ServerSocket safe = host.call(() -> new ServerSocket(7022, 50, hostAddr));
                ServerSocket other = host.call(() -> new ServerSocket(7023, 50, hostAddr));
                ServerSocket local = host.call(() -> new ServerSocket(7024, 50, InetAddress.getByName("127.0.0.1")));
                ServerSocket out = outside.call(() -> new ServerSocket(7080, 50, InetAddress.getByName(OUT_IP)));
                ServerSocket outSafe = outside.call(() -> new ServerSocket(7081, 50, InetAddress.getByName(OUT_IP)))) {
            Map<String, String> failsafe = Map.of("failsafeInboundHostPorts", "tcp:7022",
                    "failsafeOutboundHostPorts", "tcp:7081");
            apply(config(failsafe));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("no host endpoint: untouched").isTrue();

            // A host endpoint on up0 with a policy that allows nothing.
            apply(new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(), List.of(), false)),
                    new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(), List.of(),
                            List.of(new TierPolicies("default", Action.Deny, List.of(GUARD), false)),
                            List.of(new TierPolicies("default", Action.Deny, List.of(GUARD), false))));
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("denied by host endpoint policy").isFalse();
            assertThat(outside.tcpConnects(HOST_IP, 7022, YES)).as("inbound failsafe port").isTrue();
            assertThat(host.tcpConnects(OUT_IP, 7080, NO)).as("egress denied").isFalse();
            assertThat(host.tcpConnects(OUT_IP, 7081, YES)).as("outbound failsafe port").isTrue();
            assertThat(host.tcpConnects("127.0.0.1", 7024, YES)).as("lo has no host endpoint").isTrue();

            // No policy and no profile at all: still default deny except failsafe.
            apply(new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(), List.of(),
                    List.of(), List.of()), new DataplaneUpdate.ActivePolicyRemove(GUARD));
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("no policy: default deny").isFalse();
            assertThat(outside.tcpConnects(HOST_IP, 7022, YES)).as("no policy: failsafe").isTrue();

            // A profile allowing inbound opens it; removing the endpoint leaves the interface untouched.
            apply(allowAllProfile(), new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP),
                    List.of(), List.of("kns.test"), List.of(), List.of()));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("profile allows").isTrue();
            apply(new DataplaneUpdate.HostEndpointRemove("node1/up0"));
            assertThat(host.exec(iptables + "-save", "-t", "filter")).doesNotContain("cali-fh-up0");
            assertThat(host.tcpConnects(OUT_IP, 7080, YES)).as("endpoint removed").isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void natOutgoingMasqueradesWorkloadTrafficLeavingThePools(IptablesBackend backend) throws Exception {
        start(backend);
        try (ServerSocket srv = outside.call(() -> new ServerSocket(7070, 50, InetAddress.getByName(OUT_IP)))) {
            srv.setSoTimeout(2000);
            apply(config(Map.of()), allowAllProfile(), wep("a", A_IF, A_IP, A_IP6, List.of()),
                    new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", false, "Never", "Never", false));
            assertThat(a.tcpConnects(OUT_IP, 7070, NO)).as("no NAT: outside has no route back").isFalse();

            apply(new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", true, "Never", "Never", false));
            assertThat(host.exec("ipset", "list", "cali40masq-ipam-pools")).contains("10.65.0.0/16");
            assertThat(a.tcpConnects(OUT_IP, 7070, YES)).as("natOutgoing").isTrue();
            try (Socket s = srv.accept()) {
                assertThat(s.getInetAddress().getHostAddress()).as("seen with the host's address").isEqualTo(HOST_IP);
            }
            // Pool to pool is not masqueraded: b sees a's own address.
            try (ServerSocket bs = b.call(() -> new ServerSocket(7071, 50, InetAddress.getByName(B_IP)))) {
                bs.setSoTimeout(2000);
                apply(wep("b", B_IF, B_IP, "fd00:65::2", List.of()));
                assertThat(a.tcpConnects(B_IP, 7071, YES)).isTrue();
                try (Socket s = bs.accept()) {
                    assertThat(s.getInetAddress().getHostAddress()).isEqualTo(A_IP);
                }
            }
            assertThat(host.exec(iptables + "-save", "-t", "nat")).contains("-A POSTROUTING -j cali-POSTROUTING");
            assertThat(dataplane.refresh()).isZero();
        }
    }

    // ---- updates ----

    private void apply(DataplaneUpdate... updates) {
        dataplane.apply(List.of(updates));
    }

    private static DataplaneUpdate config(Map<String, String> values) {
        return new DataplaneUpdate.ConfigUpdate(new HashMap<>(values));
    }

    private static DataplaneUpdate allowAllProfile() {
        return new DataplaneUpdate.ActiveProfileUpdate("kns.test",
                new CompiledPolicy(List.of(ALLOW_ALL), List.of(ALLOW_ALL), false));
    }

    private static DataplaneUpdate wep(String name, String iface, String ip, String ip6, List<PolicyId> ingress) {
        return new DataplaneUpdate.WorkloadEndpointUpdate("test/" + name, iface, null, List.of(ip + "/32"),
                List.of(ip6 + "/128"), List.of("kns.test"),
                ingress.isEmpty() ? List.of() : List.of(new TierPolicies("default", Action.Deny, ingress, false)),
                List.of());
    }

    // ---- wiring ----

    private void start(IptablesBackend backend) {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/" + backend.restoreBinary(IpVersion.V4))), "backend installed");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/" + backend.restoreBinary(IpVersion.V6))), "v6 backend installed");
        host = ns("iph");
        a = ns("ipa");
        b = ns("ipb");
        outside = ns("ipo");
        for (NetNs n : namespaces) {
            n.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0");
        }
        host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1");
        host.veth("up0", outside, "eth0");
        host.exec("ip", "addr", "add", HOST_IP + "/24", "dev", "up0");
        outside.exec("ip", "addr", "add", OUT_IP + "/24", "dev", "eth0");
        // Proxy ARP answers only for addresses routed out of another interface: a default route via outside.
        host.exec("ip", "route", "add", "default", "via", OUT_IP, "dev", "up0");
        wireWorkload(a, A_IF, A_IP, A_IP6);
        wireWorkload(b, B_IF, B_IP, B_IP6);
        iptables = backend.restoreBinary(IpVersion.V4).replace("-restore", "");
        ip6tables = backend.restoreBinary(IpVersion.V6).replace("-restore", "");
        List<String> prefix = List.of("ip", "netns", "exec", host.name());
        dataplane = new IptablesDataplane(new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix),
                new Ipset(prefix));
    }

    /** What the CNI plugin and felix's route manager do for a local dual-stack workload. */
    private void wireWorkload(NetNs w, String hostIf, String ip, String ip6) {
        host.veth(hostIf, w, "eth0");
        host.exec("ip", "link", "set", hostIf, "down");
        host.exec("ip", "link", "set", hostIf, "address", "ee:ee:ee:ee:ee:ee");
        host.exec("ip", "link", "set", hostIf, "up");
        w.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        w.exec("ip", "-6", "addr", "add", ip6 + "/128", "dev", "eth0", "nodad");
        w.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
        w.exec("ip", "-6", "route", "add", "default", "via", "fe80::ecee:eeff:feee:eeee", "dev", "eth0");
        host.exec("sysctl", "-qw", "net.ipv4.conf." + hostIf + ".proxy_arp=1",
                "net.ipv4.neigh." + hostIf + ".proxy_delay=0", "net.ipv4.conf." + hostIf + ".forwarding=1");
        host.exec("ip", "route", "add", ip + "/32", "dev", hostIf);
        host.exec("ip", "-6", "route", "add", ip6 + "/128", "dev", hostIf);
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }
}
