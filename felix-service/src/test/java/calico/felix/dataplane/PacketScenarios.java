package calico.felix.dataplane;

import static calico.felix.dataplane.testing.Fixtures.action;
import static calico.felix.dataplane.testing.Fixtures.allowAllProfile;
import static calico.felix.dataplane.testing.Fixtures.gnp;
import static calico.felix.dataplane.testing.Fixtures.hep;
import static calico.felix.dataplane.testing.Fixtures.hostGnp;
import static calico.felix.dataplane.testing.Fixtures.tier;
import static calico.felix.dataplane.testing.Fixtures.wep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import calico.api.selector.Selector;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.felix.calc.FelixSettings;
import java.io.IOException;
import java.net.ConnectException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real packets through a policy driver: the scenarios both backends must pass, written once. A
 * subclass supplies the driver (iptables-nft, iptables-legacy, nftables) and the few stranger
 * edits that need the backend's own tool; everything else is here.
 *
 * <p>Wiring: a "host" namespace programmed by the driver; two dual-stack workloads on
 * {@code cali…} veths as Calico's CNI plugin leaves them (IPv4 /32 via 169.254.1.1, IPv6 /128 via
 * the host side's link-local {@code fe80::ecee:eeff:feee:eeee}, proxy ARP and /32 routes on the
 * host); an "outside" namespace behind the host's {@code up0} (192.168.255.0/24) that routes the
 * workloads' pool back through the host. Updates come either from a real calculation graph fed v3
 * resources ({@link #put}) or straight as {@link DataplaneUpdate}s ({@link #apply}) when a case
 * states exactly what the graph would say. Negative probes wait 300 ms; every namespace is
 * deleted after each test.
 */
public abstract class PacketScenarios {

    protected static final Duration NO = Duration.ofMillis(300);
    protected static final Duration YES = Duration.ofSeconds(2);

    protected static final String NODE = "node1";
    protected static final String A_IP = "10.65.0.1";
    protected static final String B_IP = "10.65.0.2";
    protected static final String A_IP6 = "fd00:65::1";
    protected static final String B_IP6 = "fd00:65::2";
    protected static final String A_IF = "cali1234abcd";
    protected static final String B_IF = "cali5678abcd";
    protected static final String HOST_IP = "192.168.255.1";
    protected static final String OUT_IP = "192.168.255.2";
    protected static final String HOST_IP6 = "fd00:255::1";
    protected static final String OUT_IP6 = "fd00:255::2";
    private static final PolicyId GUARD = new PolicyId("default", null, "guard", ResourceKind.GLOBAL_NETWORK_POLICY);
    private static final CompiledRule ALLOW_ALL = new CompiledRule(Action.Allow, null, null, null, null, null,
            Side.ANY, Side.ANY, null);
    private static final Map<String, String> UP = Map.of("role", "up");

    /**
     * What a scenario needs of a backend beyond workload policy on IPv4. A backend that lacks one
     * says why in {@link #missing()}; scenarios needing it are skipped with that reason, and IPv6
     * probes inside the workload scenarios are left out.
     */
    protected enum Feature {
        IPV6, WORKLOAD_TO_HOST, HOST_ENDPOINTS, NAT_OUTGOING, REJECT, ANTI_SPOOFING, HOST_INPUT_FILTER,
        /** Normal host endpoint policy judges arriving traffic after the host's own netfilter DNAT (INPUT/FORWARD). */
        POLICY_AFTER_HOST_DNAT,
        /** {@code workloadSourceSpoofing: Any} with an endpoint's {@code allowSpoofedSourcePrefixes} */
        SPOOFED_SOURCE_PREFIXES,
        /** {@code serviceLoopPrevention}: forwarded traffic to advertised service ranges nobody DNAT'd */
        SERVICE_LOOP_PREVENTION,
        /** kube-proxy's IPVS mode ({@code kube-ipvs0}): NodePorts ({@code kubeNodePortRanges}) policed as forwarded */
        KUBE_IPVS
    }

    /** The driver under test, bound to the host namespace. */
    protected interface Driver extends AutoCloseable {
        ApplyStats apply(List<DataplaneUpdate> batch);

        int refresh();

        ApplyStats resync();

        void removeAll();

        /** Tells the model whether kube-proxy runs in IPVS mode, as the kernel dataplane does when it starts. */
        void kubeIpvs(boolean on);

        @Override
        default void close() {
        }
    }

    /**
     * {@return {@code dp} as the scenarios' driver}: the model and the driver fed on {@code thread}
     * (a thread inside the host: netlink, libnftables and libbpf act there), {@code close} run on it
     * at the end, then the thread stopped.
     */
    protected static Driver onThread(NamespaceThread thread, DataplaneModel model, PolicyDriver dp, Runnable close) {
        return new Driver() {
            @Override
            public ApplyStats apply(List<DataplaneUpdate> batch) {
                return thread.call(() -> {
                    model.apply(batch);
                    return dp.apply(batch);
                });
            }

            @Override
            public int refresh() {
                return thread.call(dp::refresh);
            }

            @Override
            public ApplyStats resync() {
                return thread.call(dp::resync);
            }

            @Override
            public void removeAll() {
                thread.run(dp::removeAll);
            }

            @Override
            public void kubeIpvs(boolean on) {
                thread.run(() -> model.kubeIpvs(on));
            }

            @Override
            public void close() {
                thread.run(close);
                thread.close();
            }
        };
    }

    private final List<NetNs> namespaces = new ArrayList<>();
    protected NetNs host;
    protected NetNs a;
    protected NetNs b;
    protected NetNs outside;
    private Driver driver;
    private final List<List<DataplaneUpdate>> pending = new ArrayList<>();
    private CalculationGraph graph;
    private long revision;

    // ---- what a backend supplies ----

    /** Skips the test (assumptions) when the backend is not available here. */
    protected abstract void assumeAvailable();

    /** A short prefix for namespace names, per backend. */
    protected abstract String prefix();

    /** {@return the driver programming {@link #host}} */
    protected abstract Driver driver();

    /** {@return the features this backend does not have yet, each with the reason} (none by default) */
    protected Map<Feature, String> missing() {
        return Map.of();
    }

    /** {@return a string every kernel object of ours that {@link #listOurs} shows contains} */
    protected String ourMarker() {
        return "cali-";
    }

    protected final boolean has(Feature f) {
        return !missing().containsKey(f);
    }

    /** A stranger inserts a drop-everything rule first in our filter chain {@code chain} of {@code family}. */
    protected abstract void strangerDrop(String chain, IpFamily family);

    /** A stranger removes the jump from the kernel's FORWARD hook into our chains. */
    protected abstract void cutForwardHook();

    /** A stranger empties our kernel set {@code name}. */
    protected abstract void emptySet(String name);

    /** {@return how the backend lists one of our sets} (to see its members) */
    protected abstract String listSet(String name);

    /** {@return everything of ours the kernel lists}, every table */
    protected abstract String listOurs();

    /**
     * The host's own nat rule (not ours): TCP to {@code ip:port} is DNAT'd to {@code toIp:toPort},
     * in nat PREROUTING ({@code prerouting}: arriving traffic) or nat OUTPUT (the host's own).
     */
    protected abstract void dnat(boolean prerouting, String ip, int port, String toIp, int toPort);

    /**
     * Sets the kernel's INPUT verdict after our chains to DROP (or back); {@return false} when the
     * backend has no such thing (nftables: our base chain's policy is accept, other tables decide alone).
     */
    /** {@return the FelixConfiguration field prefix of this backend's actions}: {@code iptables} or {@code nftables} */
    protected String settingsPrefix() {
        return "iptables";
    }

    protected boolean kernelInputDrops(boolean drop) {
        return false;
    }

    @AfterEach
    void tearDown() {
        if (driver != null) {
            driver.close();
        }
        namespaces.forEach(NetNs::close);
    }

    // ---- workloads through the graph ----

    @Test
    void policiesDecideWhichWorkloadsCanConnect() throws IOException {
        start();
        try (Listeners l = workloadListeners()) {
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("plain routing").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("plain routing v6").isTrue();
            boolean v6 = has(Feature.IPV6);

            put(tier("default", 1000.0), allowAllProfile("kns.test"), wepA(Map.of("app", "a")),
                    wepB(Map.of("app", "b")));
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("profile allows a->b").isTrue();
            assertThat(b.tcpConnects(A_IP, 8080, YES)).as("profile allows b->a").isTrue();
            if (v6) {
                assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("profile allows a->b v6").isTrue();
            }

            put(gnp("guard-b", "app == 'b'", List.of(), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("tier default deny").isFalse();
            if (v6) {
                assertThat(a.tcpConnects(B_IP6, 8080, NO)).as("tier default deny v6").isFalse();
            }
            assertThat(b.tcpConnects(A_IP, 8080, YES)).as("a is not selected").isTrue();

            Rule fromA = Rule.allow().withSource(EntityRule.empty().withSelector("app == 'a'"));
            put(gnp("guard-b", "app == 'b'", List.of(fromA), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("allowed by selector").isTrue();
            if (v6) {
                assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("allowed by selector v6").isTrue();
            }

            Rule fromAto8080 = fromA.withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8080))));
            put(gnp("guard-b", "app == 'b'", List.of(fromAto8080), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("port rule allows 8080").isTrue();
            assertThat(a.tcpConnects(B_IP, 8081, NO)).as("port rule blocks 8081").isFalse();
            if (v6) {
                assertThat(a.tcpConnects(B_IP6, 8081, NO)).as("port rule blocks 8081 v6").isFalse();
            }

            // Relabelling a takes it out of the two family sets by element edits, no chain rewritten.
            List<ApplyStats> relabel = put(wepA(Map.of("app", "other")));
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("label change blocks").isFalse();
            if (v6) {
                assertThat(a.tcpConnects(B_IP6, 8080, NO)).as("label change blocks v6").isFalse();
            }
            assertThat(relabel).isNotEmpty().allMatch(st -> !st.resync() && st.chainsWritten() == 0);
            assertThat(relabel.stream().mapToInt(ApplyStats::setsWritten).sum()).as("a member out of each family's set")
                    .isEqualTo(v6 ? 2 : 1);
            put(wepA(Map.of("app", "a")));
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("label change back allows").isTrue();
            String setV4 = Names.ipSet(IpFamily.V4, Selector.parse("app == 'a'").uniqueId());
            assertThat(listSet(setV4)).contains(A_IP);
            if (v6) {
                String set6 = Names.ipSet(IpFamily.V6, Selector.parse("app == 'a'").uniqueId());
                assertThat(listSet(set6)).contains(A_IP6);
            }

            emptySet(setV4);
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("set emptied by a stranger").isFalse();
            if (v6) {
                assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("the v6 set is intact").isTrue();
            }
            assertThat(driver.refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("set refilled").isTrue();

            assertThat(driver.refresh()).isZero();
            IpFamily dropped = v6 ? IpFamily.V6 : IpFamily.V4;
            String bDropped = v6 ? B_IP6 : B_IP;
            strangerDrop(Names.toWorkload(B_IF), dropped);
            assertThat(a.tcpConnects(bDropped, 8080, NO)).as("stranger's drop").isFalse();
            assertThat(driver.refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(bDropped, 8080, YES)).as("after refresh").isTrue();

            cutForwardHook();
            assertThat(a.tcpConnects(B_IP, 8081, YES)).as("no hook: no policy").isTrue();
            assertThat(driver.refresh()).isEqualTo(1);
            assertThat(a.tcpConnects(B_IP, 8081, NO)).as("hook restored").isFalse();

            graph.onUpdates(List.of(Update.deleted(gnp("guard-b", "all()", List.of()).key(), ++revision)));
            flush();
            assertThat(a.tcpConnects(B_IP, 8081, YES)).as("policy removed").isTrue();
            driver.resync();
            assertThat(driver.refresh()).isZero();
            assertThat(a.tcpConnects(v6 ? B_IP6 : B_IP, 8081, YES)).isTrue();

            assertThat(listOurs()).contains(ourMarker());
            driver.removeAll();
            assertThat(listOurs()).doesNotContain(ourMarker());
        }
    }

    @Test
    void passHandsOverToTheNextTierAndEgressDenyRulesBlock() throws IOException {
        start();
        try (Listeners l = workloadListeners()) {
            put(tier("security", 1.0), tier("default", 1000.0), allowAllProfile("kns.test"), wepA(Map.of("app", "a")),
                    wepB(Map.of("app", "b")),
                    gnp("pass-a", "security", "all()", List.of(action(Action.Pass)
                            .withSource(EntityRule.empty().withSelector("app == 'a'"))), List.of(), PolicyType.Ingress));
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("passed, then the profile allows").isTrue();
            if (has(Feature.IPV6)) {
                assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("passed v6").isTrue();
            }
            assertThat(b.tcpConnects(A_IP, 8080, NO)).as("not passed: the security tier's default denies").isFalse();

            put(gnp("a-out", "default", "app == 'a'", List.of(), List.of(action(Action.Deny).withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8081)))), Rule.allow()),
                    PolicyType.Egress));
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("egress allow").isTrue();
            assertThat(a.tcpConnects(B_IP, 8081, NO)).as("egress deny rule").isFalse();

            put(gnp("a-out", "default", "app == 'a'", List.of(), List.of(action(Action.Deny)
                    .withDestination(EntityRule.empty().withNets(List.of(B_IP6 + "/128"))), Rule.allow()),
                    PolicyType.Egress));
            if (has(Feature.IPV6)) {
                assertThat(a.tcpConnects(B_IP6, 8080, NO)).as("v6 net denied").isFalse();
            }
            assertThat(a.tcpConnects(B_IP, 8081, YES)).as("v4 unaffected").isTrue();
        }
    }

    // ---- the host's side, straight updates ----

    @Test
    void workloadToHostFollowsDefaultEndpointToHostAction() throws IOException {
        start(Feature.WORKLOAD_TO_HOST);
        try (ServerSocket h = host.call(() -> new ServerSocket(7090, 50, InetAddress.getByName(HOST_IP)))) {
            assertThat(a.tcpConnects(HOST_IP, 7090, YES)).as("no rules yet").isTrue();
            apply(config(Map.of()), allowAllProfileUpdate(), wepUpdate("a", A_IF, A_IP, A_IP6, List.of()),
                    wepUpdate("b", B_IF, B_IP, B_IP6, List.of()));
            assertThat(a.tcpConnects(HOST_IP, 7090, NO)).as("Drop (default)").isFalse();
            if (has(Feature.IPV6)) {
                // IPv6 neighbour discovery to the host passes cali-wl-to-host although workload-to-host is Drop.
                host.exec("ip", "-6", "neigh", "flush", "dev", A_IF);
                a.exec("ip", "-6", "neigh", "flush", "dev", "eth0");
                try (NetNs.Listener l = b.tcpListener(B_IP6, 8080)) {
                    assertThat(a.tcpConnects(B_IP6, 8080, YES)).as("NDP to the host under Drop").isTrue();
                }
            }
            apply(config(Map.of("defaultEndpointToHostAction", "Accept")));
            assertThat(a.tcpConnects(HOST_IP, 7090, YES)).as("Accept").isTrue();
            apply(config(Map.of("defaultEndpointToHostAction", "Return")));
            assertThat(a.tcpConnects(HOST_IP, 7090, YES)).as("Return: the kernel's INPUT verdict decides").isTrue();
            if (kernelInputDrops(true)) {
                assertThat(a.tcpConnects(HOST_IP, 7090, NO)).as("Return: the kernel's DROP decides").isFalse();
                apply(config(Map.of("defaultEndpointToHostAction", "Accept")));
                assertThat(a.tcpConnects(HOST_IP, 7090, YES)).as("Accept despite the kernel's DROP").isTrue();
                kernelInputDrops(false);
            }
            // Egress policy applies first: a workload whose egress denies cannot reach the host even under Accept.
            apply(config(Map.of("defaultEndpointToHostAction", "Accept")),
                    new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(), List.of(), false)),
                    new DataplaneUpdate.WorkloadEndpointUpdate("test/a", A_IF, null, List.of(A_IP + "/32"),
                            List.of(A_IP6 + "/128"), List.of("kns.test"), List.of(), guardTier()));
            assertThat(a.tcpConnects(HOST_IP, 7090, NO)).as("egress deny before Accept").isFalse();
        }
    }

    @Test
    void hostEndpointDeniesAllButFailsafePorts() throws IOException {
        start(Feature.HOST_ENDPOINTS);
        try (NetNs.Listener safe = host.tcpListener(HOST_IP, 7022);
                NetNs.Listener other = host.tcpListener(HOST_IP, 7023);
                NetNs.Listener local = host.tcpListener("127.0.0.1", 7024);
                NetNs.Listener out = outside.tcpListener(OUT_IP, 7080);
                NetNs.Listener outSafe = outside.tcpListener(OUT_IP, 7081)) {
            apply(config(Map.of("failsafeInboundHostPorts", "tcp:7022", "failsafeOutboundHostPorts", "tcp:7081")));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("no host endpoint: untouched").isTrue();

            apply(new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(), List.of(), false)),
                    new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(), List.of(),
                            guardTier(), guardTier()));
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("denied by host endpoint policy").isFalse();
            assertThat(outside.tcpConnects(HOST_IP, 7022, YES)).as("inbound failsafe port").isTrue();
            assertThat(host.tcpConnects(OUT_IP, 7080, NO)).as("egress denied").isFalse();
            assertThat(host.tcpConnects(OUT_IP, 7081, YES)).as("outbound failsafe port").isTrue();
            assertThat(host.tcpConnects("127.0.0.1", 7024, YES)).as("lo has no host endpoint").isTrue();

            apply(new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(), List.of(),
                    List.of(), List.of()), new DataplaneUpdate.ActivePolicyRemove(GUARD));
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("no policy: default deny").isFalse();
            assertThat(outside.tcpConnects(HOST_IP, 7022, YES)).as("no policy: failsafe").isTrue();

            apply(allowAllProfileUpdate(), new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP),
                    List.of(), List.of("kns.test"), List.of(), List.of()));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("profile allows").isTrue();
            apply(new DataplaneUpdate.HostEndpointRemove("node1/up0"));
            assertThat(listOurs()).doesNotContain(Names.fromHostEndpoint("up0"));
            assertThat(host.tcpConnects(OUT_IP, 7080, YES)).as("endpoint removed").isTrue();
        }
    }

    /**
     * IPv6 on a host endpoint's interface is policed as IPv4: the failsafe ports (no net: both
     * families) pass the default deny, a rule of one family opens that family only, replies of the
     * host's own allowed connections come back through conntrack. (Neighbour discovery under the
     * deny is the eBPF driver's own exemption: {@code BpfPacketTest}; netfilter's host endpoint
     * chains police it, as Calico's.)
     */
    @Test
    void hostEndpointPolicesIpv6AsIpv4() {
        start(Feature.HOST_ENDPOINTS, Feature.IPV6);
        host.exec("ip", "-6", "addr", "add", HOST_IP6 + "/64", "dev", "up0", "nodad");
        outside.exec("ip", "-6", "addr", "add", OUT_IP6 + "/64", "dev", "eth0", "nodad");
        try (NetNs.Listener safe = host.tcpListener(HOST_IP6, 7022);
                NetNs.Listener other = host.tcpListener(HOST_IP6, 7023);
                NetNs.Listener other4 = host.tcpListener(HOST_IP, 7023);
                NetNs.Listener out = outside.tcpListener(OUT_IP6, 7080);
                NetNs.Listener outSafe = outside.tcpListener(OUT_IP6, 7081)) {
            apply(config(Map.of("failsafeInboundHostPorts", "tcp:7022", "failsafeOutboundHostPorts", "tcp:7081")));
            assertThat(outside.tcpConnects(HOST_IP6, 7023, YES)).as("no host endpoint: v6 untouched").isTrue();

            apply(new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(), List.of(), false)),
                    new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(HOST_IP6),
                            List.of(), guardTier(), guardTier()));
            assertThat(outside.tcpConnects(HOST_IP6, 7023, NO)).as("v6 denied by host endpoint policy").isFalse();
            assertThat(host.tcpConnects(OUT_IP6, 7080, NO)).as("v6 egress denied").isFalse();
            assertThat(outside.tcpConnects(HOST_IP6, 7022, YES)).as("v6 inbound failsafe").isTrue();
            assertThat(host.tcpConnects(OUT_IP6, 7081, YES)).as("v6 outbound failsafe").isTrue();

            CompiledRule v6To7023 = new CompiledRule(Action.Allow, 6, "TCP", null, null, null, Side.ANY,
                    new Side(List.of(), List.of(), List.of("7023"), List.of(), List.of(), List.of(), List.of(),
                            List.of()), null);
            apply(new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(v6To7023),
                    List.of(ALLOW_ALL), false)));
            assertThat(outside.tcpConnects(HOST_IP6, 7023, YES)).as("an IPv6 rule allows v6").isTrue();
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("and not v4").isFalse();
            assertThat(host.tcpConnects(OUT_IP6, 7080, YES)).as("egress allowed, replies through conntrack").isTrue();
            assertThat(driver.refresh()).isZero();

            apply(new DataplaneUpdate.HostEndpointRemove("node1/up0"));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("endpoint removed: v4 open").isTrue();
        }
    }

    @Test
    void natOutgoingMasqueradesOnlyTrafficLeavingThePools() throws IOException {
        start(Feature.NAT_OUTGOING);
        try (ServerSocket srv = outside.call(() -> new ServerSocket(7070, 50, InetAddress.getByName(OUT_IP)));
                ServerSocket bs = b.call(() -> new ServerSocket(7071, 50, InetAddress.getByName(B_IP)))) {
            srv.setSoTimeout(2000);
            bs.setSoTimeout(2000);
            apply(config(Map.of()), allowAllProfileUpdate(), wepUpdate("a", A_IF, A_IP, A_IP6, List.of()),
                    wepUpdate("b", B_IF, B_IP, B_IP6, List.of()),
                    new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", false, "Never", "Never", false));
            assertThat(seenFrom(srv, OUT_IP, 7070)).as("no natOutgoing: the workload's own address").isEqualTo(A_IP);

            apply(new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", true, "Never", "Never", false));
            assertThat(listSet("cali40masq-ipam-pools")).contains("10.65.0.0/16");
            assertThat(seenFrom(srv, OUT_IP, 7070)).as("natOutgoing: the host's address").isEqualTo(HOST_IP);
            assertThat(seenFrom(bs, B_IP, 7071)).as("pool to pool is not masqueraded").isEqualTo(A_IP);
            assertThat(driver.refresh()).isZero();
        }
    }

    /**
     * natOutgoing's edges: another pool, even a disabled one, is never masqueraded to; natPortRange
     * puts TCP sources in the range; IPPoolsAndHostIPs leaves traffic to a Calico host's address
     * alone while IPPoolsOnly masquerades it; IPv6 pools are masqueraded by their own rules. The
     * chains read back as written.
     */
    @Test
    void natOutgoingSparesOtherPoolsAndHostsAndUsesThePortRange() throws IOException {
        start(Feature.NAT_OUTGOING);
        String otherPool = "10.66.0.9";
        String disabledPool = "10.67.0.9";
        outside.exec("ip", "addr", "add", otherPool + "/32", "dev", "eth0");
        outside.exec("ip", "addr", "add", disabledPool + "/32", "dev", "eth0");
        try (ServerSocket srv = outside.call(() -> new ServerSocket(7070, 50, InetAddress.getByName(OUT_IP)));
                ServerSocket other = outside.call(() -> new ServerSocket(7072, 50, InetAddress.getByName(otherPool)));
                ServerSocket disabled = outside.call(() -> new ServerSocket(7073, 50,
                        InetAddress.getByName(disabledPool)))) {
            for (ServerSocket s : List.of(srv, other, disabled)) {
                s.setSoTimeout(2000);
            }
            apply(config(Map.of("natPortRange", "40000:40010")), allowAllProfileUpdate(),
                    wepUpdate("a", A_IF, A_IP, A_IP6, List.of()),
                    new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", true, "Never", "Never", false),
                    new DataplaneUpdate.IpPoolUpdate("other", "10.66.0.0/16", false, "Never", "Never", false),
                    new DataplaneUpdate.IpPoolUpdate("gone", "10.67.0.0/16", false, "Never", "Never", true),
                    new DataplaneUpdate.HostMetadataUpdate("node2", OUT_IP, null, Map.of()));
            InetSocketAddress out = peer(srv, OUT_IP, 7070);
            assertThat(out.getAddress().getHostAddress()).as("IPPoolsOnly: a host's address is masqueraded")
                    .isEqualTo(HOST_IP);
            assertThat(out.getPort()).as("natPortRange").isBetween(40000, 40010);
            assertThat(seenFrom(other, otherPool, 7072)).as("another pool is not masqueraded").isEqualTo(A_IP);
            assertThat(seenFrom(disabled, disabledPool, 7073)).as("a disabled pool is still a pool").isEqualTo(A_IP);
            assertThat(driver.refresh()).as("the nat chain reads back as written").isZero();

            apply(config(Map.of("natPortRange", "40000:40010", "natOutgoingExclusions", "IPPoolsAndHostIPs")));
            assertThat(listSet("cali40all-hosts-net")).contains(OUT_IP);
            assertThat(seenFrom(srv, OUT_IP, 7070)).as("IPPoolsAndHostIPs: a host's address is spared")
                    .isEqualTo(A_IP);
            assertThat(driver.refresh()).isZero();
        }
        // IPv6: its own rules, masquerading to the host's IPv6 address, with the same port range.
        host.exec("ip", "-6", "addr", "add", "fd00:255::1/64", "dev", "up0", "nodad");
        outside.exec("ip", "-6", "addr", "add", "fd00:255::2/64", "dev", "eth0", "nodad");
        outside.exec("ip", "-6", "route", "add", "fd00:65::/64", "via", "fd00:255::1");
        try (ServerSocket srv6 = outside.call(() -> new ServerSocket(7074, 50, InetAddress.getByName("fd00:255::2")))) {
            srv6.setSoTimeout(2000);
            assertThat(peer(srv6, "fd00:255::2", 7074).getAddress()).as("no IPv6 natOutgoing pool yet")
                    .isEqualTo(InetAddress.getByName(A_IP6));
            apply(new DataplaneUpdate.IpPoolUpdate("pool6", "fd00:65::/64", true, "Never", "Never", false));
            InetSocketAddress out6 = peer(srv6, "fd00:255::2", 7074);
            assertThat(out6.getAddress()).as("IPv6 natOutgoing").isEqualTo(InetAddress.getByName("fd00:255::1"));
            assertThat(out6.getPort()).isBetween(40000, 40010);
            assertThat(driver.refresh()).isZero();
        }
    }

    // ---- host endpoint policy kinds, through the graph ----

    /**
     * doNotTrack: the raw table decides before conntrack, so the replies are untracked too and
     * need their own (egress) rule; the host endpoint's normal policy (none: deny) never sees
     * either direction.
     */
    @Test
    void doNotTrackPolicyAllowsUntrackedTrafficInBothDirections() {
        start(Feature.HOST_ENDPOINTS);
        try (NetNs.Listener l = host.tcpListener(HOST_IP, 7023); NetNs.Listener m = host.tcpListener(HOST_IP, 7024)) {
            put(tier("default", 1000.0), hep("up0", NODE, "up0", UP));
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("host endpoint without policy denies").isFalse();
            Rule in7023 = Rule.allow().withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(7023))));
            put(hostGnp("dnt", 10, "role == 'up'", List.of(in7023), List.of(), true, false, true, PolicyType.Ingress));
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("untracked SYN in, but the reply is denied")
                    .isFalse();
            Rule out7023 = Rule.allow().withProtocol(Protocol.TCP)
                    .withSource(EntityRule.empty().withPorts(List.of(Port.of(7023))));
            put(hostGnp("dnt", 10, "role == 'up'", List.of(in7023), List.of(out7023), true, false, true,
                    PolicyType.Ingress, PolicyType.Egress));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("both directions untracked and allowed").isTrue();
            assertThat(outside.tcpConnects(HOST_IP, 7024, NO)).as("other ports: normal policy denies").isFalse();
            assertThat(driver.refresh()).as("the raw chains read back as written").isZero();
        }
    }

    /** preDNAT: decided in mangle PREROUTING; an allow there skips the normal policy, a deny drops before it. */
    @Test
    void preDnatPolicyDecidesBeforeTheNormalPolicy() {
        start(Feature.HOST_ENDPOINTS);
        try (NetNs.Listener l = host.tcpListener(HOST_IP, 7023); NetNs.Listener m = host.tcpListener(HOST_IP, 7024)) {
            put(tier("default", 1000.0), hep("up0", NODE, "up0", UP));
            Rule to7023 = Rule.allow().withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(7023))));
            put(hostGnp("pre", 10, "role == 'up'", List.of(to7023), List.of(), false, true, true, PolicyType.Ingress));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("pre-DNAT allow skips the normal deny").isTrue();
            assertThat(outside.tcpConnects(HOST_IP, 7024, NO)).as("no pre-DNAT verdict: normal policy denies")
                    .isFalse();
            Rule deny7024 = action(Action.Deny).withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(7024))));
            put(hostGnp("open", 20, "role == 'up'", List.of(Rule.allow()), List.of(Rule.allow()), false, false, false,
                    PolicyType.Ingress, PolicyType.Egress),
                    hostGnp("pre", 10, "role == 'up'", List.of(deny7024), List.of(), false, true, true,
                            PolicyType.Ingress));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("normal policy allows").isTrue();
            assertThat(outside.tcpConnects(HOST_IP, 7024, NO)).as("pre-DNAT deny wins").isFalse();
            assertThat(driver.refresh()).as("the mangle chains read back as written").isZero();
        }
    }

    /** preDNAT policy matches the destination as it arrived, before the host's DNAT rewrites it. */
    @Test
    void preDnatPolicySeesTheDestinationBeforeDnat() {
        start(Feature.HOST_ENDPOINTS, Feature.POLICY_AFTER_HOST_DNAT);
        try (NetNs.Listener a80 = a.tcpListener(A_IP, 8080)) {
            dnat(true, HOST_IP, 7099, A_IP, 8080);
            put(tier("default", 1000.0), allowAllProfile("kns.test"), wepA(Map.of("app", "a")),
                    hep("up0", NODE, "up0", UP));
            assertThat(outside.tcpConnects(HOST_IP, 7099, YES)).as("DNAT'd and forwarded to a").isTrue();
            Rule deny8080 = action(Action.Deny).withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8080))));
            put(hostGnp("pre", 10, "role == 'up'", List.of(deny8080), List.of(), false, true, true,
                    PolicyType.Ingress));
            assertThat(outside.tcpConnects(HOST_IP, 7099, YES)).as("pre-DNAT sees port 7099, not 8080").isTrue();
            Rule deny7099 = action(Action.Deny).withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(7099))));
            put(hostGnp("pre", 10, "role == 'up'", List.of(deny7099), List.of(), false, true, true,
                    PolicyType.Ingress));
            assertThat(outside.tcpConnects(HOST_IP, 7099, NO)).as("pre-DNAT denies port 7099").isFalse();
            assertThat(outside.tcpConnects(A_IP, 8080, YES)).as("straight to a: not 7099").isTrue();
        }
    }

    /** Forwarded traffic through a host endpoint is policed only by its applyOnForward policies. */
    @Test
    void applyOnForwardPoliciesPoliceForwardedTraffic() {
        start(Feature.HOST_ENDPOINTS);
        try (NetNs.Listener a80 = a.tcpListener(A_IP, 8080); NetNs.Listener a81 = a.tcpListener(A_IP, 8081);
                NetNs.Listener h = host.tcpListener(HOST_IP, 8080)) {
            put(tier("default", 1000.0), allowAllProfile("kns.test"), wepA(Map.of("app", "a")),
                    hep("up0", NODE, "up0", UP));
            assertThat(outside.tcpConnects(HOST_IP, 8080, NO)).as("host traffic: default deny").isFalse();
            assertThat(outside.tcpConnects(A_IP, 8081, YES)).as("forwarded: no applyOnForward policy, allowed")
                    .isTrue();
            Rule to8080 = Rule.allow().withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8080))));
            put(hostGnp("host-only", 10, "role == 'up'", List.of(to8080), List.of(), false, false, false,
                    PolicyType.Ingress));
            assertThat(outside.tcpConnects(HOST_IP, 8080, YES)).as("normal policy opens the host").isTrue();
            assertThat(outside.tcpConnects(A_IP, 8081, YES)).as("still not applied to forwarded").isTrue();
            put(hostGnp("fwd", 20, "role == 'up'", List.of(to8080), List.of(), false, false, true,
                    PolicyType.Ingress));
            assertThat(outside.tcpConnects(A_IP, 8080, YES)).as("applyOnForward allows 8080").isTrue();
            assertThat(outside.tcpConnects(A_IP, 8081, NO)).as("applyOnForward: rest denied").isFalse();
            assertThat(driver.refresh()).isZero();
        }
    }

    /**
     * {@code kubeNodePortRanges} with kube-proxy in IPVS mode (felix found {@code kube-ipvs0} at start): IPVS takes
     * NodePort traffic in INPUT and sends it on through OUTPUT, never FORWARD, so INPUT leaves TCP/UDP to a local
     * address at a port in the ranges to the forward policy, which OUTPUT applies by the incoming endpoint's mark;
     * other ports stay the host's. This kernel has no IPVS: for the OUTPUT leg, the host's packets to workload a are
     * given up0's endpoint mark before our filter chains (an nft rule of the test's own at mangle priority), as the
     * packet IPVS sends on carries it.
     */
    @Test
    void nodePortsArePolicedAsForwardedTrafficWhenKubeProxyRunsIpvs() {
        start(Feature.HOST_ENDPOINTS, Feature.KUBE_IPVS);
        try (NetNs.Listener np = host.tcpListener(HOST_IP, 30080); NetNs.Listener np2 = host.tcpListener(HOST_IP, 31080);
                NetNs.Listener h = host.tcpListener(HOST_IP, 8080); NetNs.Listener a80 = a.tcpListener(A_IP, 8080);
                NetNs.Listener a81 = a.tcpListener(A_IP, 8081)) {
            put(tier("default", 1000.0), allowAllProfile("kns.test"), wepA(Map.of("app", "a")),
                    hep("up0", NODE, "up0", UP));
            assertThat(outside.tcpConnects(HOST_IP, 30080, NO)).as("no IPVS: a NodePort is the host's, default deny")
                    .isFalse();
            host.exec("ip", "link", "add", Names.KUBE_IPVS_INTERFACE, "type", "bridge");
            driver.kubeIpvs(host.call(() -> {
                try (calico.dataplane.netlink.Netlink nl = new calico.dataplane.netlink.Netlink()) {
                    return calico.felix.dataplane.rules.KubeIpvs.detect(
                            nl.links().stream().map(calico.dataplane.netlink.Link::name).toList());
                }
            }));
            apply(config(Map.of()));
            assertThat(outside.tcpConnects(HOST_IP, 8080, NO)).as("IPVS, not a NodePort: the host endpoint's policy")
                    .isFalse();
            assertThat(outside.tcpConnects(HOST_IP, 30080, YES)).as("IPVS, a NodePort: forwarded, not the host's")
                    .isTrue();
            long up0 = calico.felix.dataplane.rules.EndpointMarks.allocate(
                    calico.felix.dataplane.rules.MarkBits.defaults(), List.of(A_IF, "up0")).byName().get("up0");
            host.exec("nft", "add table inet ipvs-sim; add chain inet ipvs-sim out { type filter hook output priority "
                    + "-150; }; add rule inet ipvs-sim out ip daddr " + A_IP + " meta mark set meta mark | " + up0);
            assertThat(host.tcpConnects(A_IP, 8081, YES)).as("on through OUTPUT: no applyOnForward policy, allowed")
                    .isTrue();
            Rule to8080 = Rule.allow().withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8080))));
            put(hostGnp("fwd", 20, "role == 'up'", List.of(to8080), List.of(), false, false, true,
                    PolicyType.Ingress));
            assertThat(host.tcpConnects(A_IP, 8080, YES)).as("up0's applyOnForward policy allows 8080").isTrue();
            assertThat(host.tcpConnects(A_IP, 8081, NO)).as("and denies the rest").isFalse();
            host.exec("nft", "delete table inet ipvs-sim");
            assertThat(host.tcpConnects(A_IP, 8081, YES)).as("the host's own traffic (no mark): not forwarded")
                    .isTrue();
            apply(config(Map.of("kubeNodePortRanges", "31000:31999")));
            assertThat(outside.tcpConnects(HOST_IP, 30080, NO)).as("30080 out of the new range: the host's again")
                    .isFalse();
            assertThat(outside.tcpConnects(HOST_IP, 31080, YES)).as("31080 in it: forwarded").isTrue();
            assertThat(driver.refresh()).isZero();
        }
    }

    /** {@code interfaceName: "*"}: the host's own traffic on every (non-workload) interface, not forwarded traffic. */
    @Test
    void allInterfacesHostEndpointCoversTheHostButNotForwardedTraffic() {
        start(Feature.HOST_ENDPOINTS);
        try (NetNs.Listener h = host.tcpListener(HOST_IP, 7023); NetNs.Listener fs = host.tcpListener(HOST_IP, 22);
                NetNs.Listener a80 = a.tcpListener(A_IP, 8080); NetNs.Listener b80 = b.tcpListener(B_IP, 8080);
                NetNs.Listener o = outside.tcpListener(OUT_IP, 7080)) {
            put(tier("default", 1000.0), allowAllProfile("kns.test"), wepA(Map.of("app", "a")),
                    wepB(Map.of("app", "b")), hep("all", NODE, "*", UP));
            assertThat(outside.tcpConnects(HOST_IP, 7023, NO)).as("into the host: default deny").isFalse();
            assertThat(outside.tcpConnects(HOST_IP, 22, YES)).as("failsafe (Calico's default tcp:22)").isTrue();
            assertThat(host.tcpConnects(OUT_IP, 7080, NO)).as("out of the host: default deny").isFalse();
            assertThat(outside.tcpConnects(A_IP, 8080, YES)).as("forwarded: not policed").isTrue();
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("workload to workload: not a host endpoint").isTrue();
            Rule to7023 = Rule.allow().withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(7023))));
            put(hostGnp("open", 10, "role == 'up'", List.of(to7023), List.of(), false, false, false,
                    PolicyType.Ingress));
            assertThat(outside.tcpConnects(HOST_IP, 7023, YES)).as("policy opens the host").isTrue();
            assertThat(driver.refresh()).isZero();
            // interfaceExclude: the all-interfaces endpoint leaves an excluded interface alone.
            apply(config(Map.of("interfaceExclude", "kube-ipvs0,up0")));
            assertThat(host.tcpConnects(OUT_IP, 7080, YES)).as("up0 excluded: out of the host again").isTrue();
            apply(config(Map.of("interfaceExclude", "/^kube-/")));
            assertThat(host.tcpConnects(OUT_IP, 7080, NO)).as("a pattern not naming up0: default deny again")
                    .isFalse();
        }
    }

    /**
     * The host's own DNAT'd traffic is judged by the egress policy of the interface it really
     * leaves by (mangle POSTROUTING), not by the pre-DNAT route's (filter OUTPUT).
     */
    @Test
    void dnatTrafficFromTheHostSkipsHostEndpointEgress() {
        start(Feature.HOST_ENDPOINTS);
        try (NetNs.Listener a80 = a.tcpListener(A_IP, 8080); NetNs.Listener o = outside.tcpListener(OUT_IP, 7080)) {
            dnat(false, OUT_IP, 7099, A_IP, 8080);
            dnat(false, "10.99.0.1", 7098, OUT_IP, 7080);
            assertThat(host.tcpConnects(OUT_IP, 7099, YES)).as("the host's DNAT works").isTrue();
            assertThat(host.tcpConnects("10.99.0.1", 7098, YES)).as("and the other").isTrue();
            apply(config(Map.of()), allowAllProfileUpdate(), wepUpdate("a", A_IF, A_IP, A_IP6, List.of()),
                    new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(), List.of(),
                            List.of(), List.of()));
            assertThat(host.tcpConnects(OUT_IP, 7080, NO)).as("egress through up0 denied").isFalse();
            assertThat(host.tcpConnects(OUT_IP, 7099, YES)).as("DNAT'd to a local workload: not up0's egress")
                    .isTrue();
            assertThat(host.tcpConnects("10.99.0.1", 7098, NO)).as("DNAT'd out of up0: up0's egress, after reroute")
                    .isFalse();
            apply(new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(),
                    List.of("kns.test"), List.of(), List.of()));
            assertThat(host.tcpConnects("10.99.0.1", 7098, YES)).as("up0's egress allows it").isTrue();
            assertThat(a.tcpConnects(OUT_IP, 7080, YES)).as("forwarded DNAT-free traffic: not host egress").isTrue();
            assertThat(driver.refresh()).isZero();
        }
    }

    // ---- settings ----

    @Test
    void denyActionRejectRefusesInsteadOfDropping() {
        start(Feature.REJECT);
        try (NetNs.Listener b80 = b.tcpListener(B_IP, 8080); NetNs.Listener b6 = b.tcpListener(B_IP6, 8080)) {
            apply(config(Map.of()), allowAllProfileUpdate(), wepUpdate("a", A_IF, A_IP, A_IP6, List.of()),
                    new DataplaneUpdate.ActivePolicyUpdate(GUARD, new CompiledPolicy(List.of(), List.of(), false)),
                    wepUpdate("b", B_IF, B_IP, B_IP6, List.of(GUARD)));
            assertThat(refused(a, B_IP, 8080)).as("Drop: silence").isFalse();
            apply(config(Map.of(settingsPrefix() + "FilterDenyAction", "Reject")));
            assertThat(refused(a, B_IP, 8080)).as("Reject: refused at once").isTrue();
            if (has(Feature.IPV6)) {
                // 3 s: over IPv6 the refusal came with the retransmitted SYN's error in our runs, for every backend.
                assertThat(refused(a, B_IP6, 8080, 3000)).as("Reject v6: ICMPv6 port unreachable").isTrue();
            }
            // The source's own egress denial refuses too (nftables rejects it at prerouting: rules.md §2b).
            apply(wepUpdate("b", B_IF, B_IP, B_IP6, List.of()),
                    new DataplaneUpdate.WorkloadEndpointUpdate("test/a", A_IF, null, List.of(A_IP + "/32"),
                            List.of(A_IP6 + "/128"), List.of("kns.test"), List.of(), guardTier()));
            assertThat(refused(a, B_IP, 8080)).as("Reject of the source's egress: refused at once").isTrue();
            assertThat(driver.refresh()).isZero();
            apply(config(Map.of(settingsPrefix() + "FilterDenyAction", "Drop")));
            assertThat(refused(a, B_IP, 8080)).as("back to Drop").isFalse();
            if (has(Feature.IPV6)) {
                assertThat(refused(a, B_IP6, 8080, 3000)).as("back to Drop v6").isFalse();
            }
        }
    }

    /** raw PREROUTING drops packets from a workload whose source address does not route back to its interface. */
    @Test
    void spoofedWorkloadSourceIsDropped() throws IOException {
        start(Feature.ANTI_SPOOFING);
        String spoof = "10.65.0.99";
        a.exec("ip", "addr", "add", spoof + "/32", "dev", "eth0");
        // The kernel's own reverse-path filter off: only our rule may decide.
        host.exec("sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                "net.ipv4.conf." + A_IF + ".rp_filter=0");
        host.exec("ip", "route", "add", spoof + "/32", "dev", B_IF);
        assertThat(udpArrives(a, spoof, outside, OUT_IP, 7300, YES)).as("no rules: the kernel forwards it").isTrue();
        apply(config(Map.of()), allowAllProfileUpdate(), wepUpdate("a", A_IF, A_IP, A_IP6, List.of()),
                wepUpdate("b", B_IF, B_IP, B_IP6, List.of()));
        assertThat(udpArrives(a, A_IP, outside, OUT_IP, 7300, YES)).as("a's own address").isTrue();
        assertThat(udpArrives(a, spoof, outside, OUT_IP, 7300, NO)).as("routed to b: spoofed, dropped").isFalse();
        host.exec("ip", "route", "replace", spoof + "/32", "dev", A_IF);
        assertThat(udpArrives(a, spoof, outside, OUT_IP, 7300, YES)).as("routed to a: a's address").isTrue();
        if (has(Feature.IPV6)) {
            String spoof6 = "fd00:65::99";
            host.exec("ip", "-6", "addr", "add", HOST_IP6 + "/64", "dev", "up0", "nodad");
            outside.exec("ip", "-6", "addr", "add", OUT_IP6 + "/64", "dev", "eth0", "nodad");
            outside.exec("ip", "-6", "route", "add", "fd00:65::/64", "via", HOST_IP6);
            a.exec("ip", "-6", "addr", "add", spoof6 + "/128", "dev", "eth0", "nodad");
            host.exec("ip", "-6", "route", "add", spoof6 + "/128", "dev", B_IF);
            assertThat(udpArrives(a, A_IP6, outside, OUT_IP6, 7300, YES)).as("a's own v6 address").isTrue();
            assertThat(udpArrives(a, spoof6, outside, OUT_IP6, 7300, NO)).as("v6 routed to b: spoofed, dropped").isFalse();
            host.exec("ip", "-6", "route", "replace", spoof6 + "/128", "dev", A_IF);
            assertThat(udpArrives(a, spoof6, outside, OUT_IP6, 7300, YES)).as("v6 routed to a: a's address").isTrue();
        }

        // workloadSourceSpoofing: a's allowSpoofedSourcePrefixes pass the check only under "Any", and only from a.
        if (!has(Feature.SPOOFED_SOURCE_PREFIXES)) {
            return; // the backend says why in missing()
        }
        host.exec("ip", "route", "replace", spoof + "/32", "dev", B_IF);
        DataplaneUpdate aMaySpoof = new DataplaneUpdate.WorkloadEndpointUpdate("test/a", A_IF, null,
                List.of(A_IP + "/32"), List.of(A_IP6 + "/128"), List.of("kns.test"), List.of(), List.of(),
                DataplaneUpdate.EndpointIdentity.NONE, List.of(), List.of("10.65.0.96/30"));
        apply(aMaySpoof);
        assertThat(udpArrives(a, spoof, outside, OUT_IP, 7300, NO)).as("prefixes ignored while spoofing is Disabled")
                .isFalse();
        apply(config(Map.of("workloadSourceSpoofing", "Any")));
        assertThat(udpArrives(a, spoof, outside, OUT_IP, 7300, YES)).as("Any: an allowed spoofed source passes").isTrue();
        b.exec("ip", "addr", "add", spoof + "/32", "dev", "eth0");
        assertThat(udpArrives(b, spoof, outside, OUT_IP, 7300, YES)).as("b sends from its own route: passes").isTrue();
        b.exec("ip", "addr", "add", "10.65.0.97/32", "dev", "eth0");
        assertThat(udpArrives(b, "10.65.0.97", outside, OUT_IP, 7300, NO)).as("a's prefixes are not b's: dropped").isFalse();
        apply(config(Map.of()));
        assertThat(udpArrives(a, spoof, outside, OUT_IP, 7300, NO)).as("Disabled again: dropped").isFalse();
    }

    /**
     * serviceLoopPrevention: forwarded traffic still addressed to an advertised service range (nothing DNAT'd it)
     * is dropped (Drop) or refused (Reject); what kube-proxy DNATs passes; Disabled lets it through.
     */
    @Test
    void forwardedTrafficToAServiceRangeNobodyDnattedIsStopped() {
        start(Feature.SERVICE_LOOP_PREVENTION);
        String svc = "10.96.0.10";
        outside.exec("ip", "route", "add", "10.96.0.0/12", "via", HOST_IP);
        host.exec("ip", "route", "add", svc + "/32", "dev", A_IF); // as a route learnt over BGP would send it on
        a.exec("ip", "addr", "add", svc + "/32", "dev", "eth0");
        try (NetNs.Listener s = a.tcpListener(svc, 7301); NetNs.Listener a80 = a.tcpListener(A_IP, 8080)) {
            apply(config(Map.of()), allowAllProfileUpdate(), wepUpdate("a", A_IF, A_IP, A_IP6, List.of()));
            assertThat(outside.tcpConnects(svc, 7301, YES)).as("no advertised ranges: forwarded").isTrue();
            apply(new DataplaneUpdate.ServiceCidrsUpdate(List.of("10.96.0.0/12")));
            assertThat(outside.tcpConnects(svc, 7301, NO)).as("not DNAT'd: dropped").isFalse();
            dnat(true, "10.96.0.20", 8080, A_IP, 8080);
            assertThat(outside.tcpConnects("10.96.0.20", 8080, YES)).as("DNAT'd as kube-proxy would: passes").isTrue();
            assertThat(outside.tcpConnects(A_IP, 8080, YES)).as("other traffic untouched").isTrue();
            apply(config(Map.of("serviceLoopPrevention", "Disabled")));
            assertThat(outside.tcpConnects(svc, 7301, YES)).as("Disabled: forwarded again").isTrue();
            apply(config(Map.of("serviceLoopPrevention", "Reject")));
            assertThat(outside.tcpConnects(svc, 7301, YES)).as("Reject: refused").isFalse();
            assertThat(driver.refresh()).isZero();
        }
    }

    /** With VXLAN on a pool, VXLAN's UDP port on this host takes datagrams only from Calico hosts. */
    @Test
    void vxlanIsAcceptedOnlyFromCalicoHosts() {
        start(Feature.HOST_INPUT_FILTER);
        assertThat(udpArrives(outside, OUT_IP, host, HOST_IP, 4789, YES)).as("no rules").isTrue();
        apply(config(Map.of()), new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", false, "Never", "Always",
                false), new DataplaneUpdate.HostMetadataUpdate(NODE, HOST_IP, null, Map.of()));
        assertThat(udpArrives(outside, OUT_IP, host, HOST_IP, 4789, NO)).as("not a Calico host").isFalse();
        assertThat(udpArrives(outside, OUT_IP, host, HOST_IP, 4790, YES)).as("other ports untouched").isTrue();
        apply(new DataplaneUpdate.HostMetadataUpdate("node2", OUT_IP, null, Map.of()));
        assertThat(udpArrives(outside, OUT_IP, host, HOST_IP, 4789, YES)).as("a Calico host").isTrue();
        apply(new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", false, "Never", "Never", false),
                new DataplaneUpdate.HostMetadataRemove("node2"));
        assertThat(udpArrives(outside, OUT_IP, host, HOST_IP, 4789, YES)).as("VXLAN off: untouched").isTrue();
        assertThat(driver.refresh()).isZero();
    }

    /** Likewise for IPv6 VXLAN: with an IPv6 VXLAN pool, IPv6 UDP to the port only from Calico hosts' IPv6 addresses. */
    @Test
    void ipv6VxlanIsAcceptedOnlyFromCalicoHosts() {
        start(Feature.HOST_INPUT_FILTER, Feature.IPV6);
        host.exec("ip", "-6", "addr", "add", HOST_IP6 + "/64", "dev", "up0", "nodad");
        outside.exec("ip", "-6", "addr", "add", OUT_IP6 + "/64", "dev", "eth0", "nodad");
        assertThat(udpArrives(outside, OUT_IP6, host, HOST_IP6, 4789, YES)).as("no rules").isTrue();
        apply(config(Map.of()), new DataplaneUpdate.IpPoolUpdate("pool6", "fd00:65::/64", false, "Never", "Always",
                false), new DataplaneUpdate.HostMetadataUpdate(NODE, HOST_IP, HOST_IP6, Map.of()),
                new DataplaneUpdate.HostMetadataUpdate("node2", OUT_IP, null, Map.of()));
        assertThat(udpArrives(outside, OUT_IP6, host, HOST_IP6, 4789, NO)).as("not a Calico host's IPv6 address").isFalse();
        assertThat(udpArrives(outside, OUT_IP, host, HOST_IP, 4789, YES)).as("no IPv4 VXLAN pool: IPv4 untouched").isTrue();
        assertThat(udpArrives(outside, OUT_IP6, host, HOST_IP6, 4790, YES)).as("other ports untouched").isTrue();
        apply(new DataplaneUpdate.HostMetadataUpdate("node2", OUT_IP, OUT_IP6, Map.of()));
        assertThat(udpArrives(outside, OUT_IP6, host, HOST_IP6, 4789, YES)).as("a Calico host").isTrue();
        apply(new DataplaneUpdate.HostMetadataUpdate("node2", OUT_IP, null, Map.of()));
        assertThat(udpArrives(outside, OUT_IP6, host, HOST_IP6, 4789, NO)).as("its IPv6 address gone").isFalse();
        apply(new DataplaneUpdate.IpPoolUpdate("pool6", "fd00:65::/64", false, "Never", "Never", false));
        assertThat(udpArrives(outside, OUT_IP6, host, HOST_IP6, 4789, YES)).as("IPv6 VXLAN off: untouched").isTrue();
        assertThat(driver.refresh()).isZero();
    }

    // ---- helpers ----

    private static List<TierPolicies> guardTier() {
        return List.of(new TierPolicies("default", Action.Deny, List.of(GUARD), false));
    }

    private Resource wepA(Map<String, String> labels) {
        return wep("test", "a", NODE, List.of(A_IP + "/32", A_IP6 + "/128"), A_IF, labels, "kns.test");
    }

    private Resource wepB(Map<String, String> labels) {
        return wep("test", "b", NODE, List.of(B_IP + "/32", B_IP6 + "/128"), B_IF, labels, "kns.test");
    }

    /** {@return the source address {@code srv} sees for a connection from workload a to {@code ip:port}} */
    private String seenFrom(ServerSocket srv, String ip, int port) throws IOException {
        return peer(srv, ip, port).getAddress().getHostAddress();
    }

    /** {@return the source address and port {@code srv} sees when workload a connects to {@code ip:port}} */
    private InetSocketAddress peer(ServerSocket srv, String ip, int port) throws IOException {
        assertThat(a.tcpConnects(ip, port, YES)).as("a connects to " + ip).isTrue();
        try (Socket s = srv.accept()) {
            return (InetSocketAddress) s.getRemoteSocketAddress();
        }
    }

    /** {@return whether a TCP connect is refused within a second} (a dropped SYN times out instead) */
    protected static boolean refused(NetNs from, String ip, int port) {
        return refused(from, ip, port, 1000);
    }

    /** {@return whether a TCP connect from {@code from} is refused within {@code ms}} */
    protected static boolean refused(NetNs from, String ip, int port, int ms) {
        return from.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(ip, port), ms);
                return false;
            } catch (ConnectException e) {
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            }
        });
    }

    /** {@return whether a datagram sent from {@code src} (bound to {@code srcIp}) reaches {@code dstIp:port} in {@code dst}} */
    /**
     * Whether one datagram sent from {@code srcIp} in {@code src} reaches {@code dstIp:port} in {@code dst}, waiting
     * for it as long as the caller's expectation says: an arrival ends the wait at once, so an expected one ({@link #YES})
     * waits long enough for a loaded machine's first IPv6 neighbour exchange; an unexpected one waits {@link #NO}.
     */
    protected static boolean udpArrives(NetNs src, String srcIp, NetNs dst, String dstIp, int port, Duration wait) {
        try (DatagramSocket rx = dst.call(() -> new DatagramSocket(new InetSocketAddress(InetAddress.getByName(dstIp),
                port)))) {
            rx.setSoTimeout((int) wait.toMillis());
            src.run(() -> {
                try (DatagramSocket tx = new DatagramSocket(new InetSocketAddress(InetAddress.getByName(srcIp), 0))) {
                    byte[] m = "probe".getBytes(StandardCharsets.UTF_8);
                    tx.send(new DatagramPacket(m, m.length, InetAddress.getByName(dstIp), port));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            DatagramPacket p = new DatagramPacket(new byte[64], 64);
            try {
                rx.receive(p);
                return p.getAddress().equals(InetAddress.getByName(srcIp)); // IPv6 text forms differ
            } catch (SocketTimeoutException e) {
                return false;
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private Listeners workloadListeners() throws IOException {
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

    protected final void apply(DataplaneUpdate... updates) {
        driver.apply(List.of(updates));
    }

    protected final List<ApplyStats> put(Resource... resources) {
        graph.onUpdates(Arrays.stream(resources).map(r -> Update.of(UpdateType.NEW, r, ++revision)).toList());
        return flush();
    }

    private List<ApplyStats> flush() {
        graph.flush();
        List<List<DataplaneUpdate>> batches = new ArrayList<>(pending);
        pending.clear();
        return batches.stream().map(driver::apply).toList();
    }

    private static DataplaneUpdate config(Map<String, String> values) {
        return new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(values)));
    }

    private static DataplaneUpdate allowAllProfileUpdate() {
        return new DataplaneUpdate.ActiveProfileUpdate("kns.test",
                new CompiledPolicy(List.of(ALLOW_ALL), List.of(ALLOW_ALL), false));
    }

    private static DataplaneUpdate wepUpdate(String name, String iface, String ip, String ip6, List<PolicyId> ingress) {
        return new DataplaneUpdate.WorkloadEndpointUpdate("test/" + name, iface, null, List.of(ip + "/32"),
                List.of(ip6 + "/128"), List.of("kns.test"),
                ingress.isEmpty() ? List.of() : List.of(new TierPolicies("default", Action.Deny, ingress, false)),
                List.of());
    }

    // ---- wiring ----

    /** Skips unless the backend has {@code needs}, then wires the namespaces and starts the driver. */
    protected final void start(Feature... needs) {
        assumeAvailable();
        for (Feature f : needs) {
            assumeTrue(has(f), () -> "the backend lacks " + f + ": " + missing().get(f));
        }
        host = ns(prefix() + "h");
        a = ns(prefix() + "a");
        b = ns(prefix() + "b");
        outside = ns(prefix() + "o");
        for (NetNs n : namespaces) {
            n.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0");
        }
        host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1");
        host.veth("up0", outside, "eth0");
        host.exec("ip", "addr", "add", HOST_IP + "/24", "dev", "up0");
        outside.exec("ip", "addr", "add", OUT_IP + "/24", "dev", "eth0");
        outside.exec("ip", "route", "add", "10.65.0.0/16", "via", HOST_IP);
        // Proxy ARP answers only for addresses routed out of another interface: a default route via outside.
        host.exec("ip", "route", "add", "default", "via", OUT_IP, "dev", "up0");
        wireWorkload(a, A_IF, A_IP, A_IP6);
        wireWorkload(b, B_IF, B_IP, B_IP6);
        driver = driver();
        graph = CalculationGraph.create(NODE, pending::add);
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
