package calico.felix.dataplane.bpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Action;
import calico.api.model.ResourceKind;

import calico.dataplane.bpf.BpfMap;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.PolicyProgram;
import calico.dataplane.bpf.Tc;
import calico.dataplane.bpf.TcDirection;
import calico.dataplane.bpf.Tcx;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.PrivateBpfFs;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.PacketScenarios;
import calico.felix.dataplane.nft.NftNatOutgoingTable;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shared packet scenarios on the eBPF driver (its own thread inside the host namespace, pins
 * on a private bpffs). The stranger's edits are map and tc edits: a drop is b's table entry
 * deleted from {@code cali_eps} (the program drops an endpoint direction without a table), the
 * forward hook is our filter detached from b's interface, a set is emptied by deleting its LPM
 * entries. What the driver cannot do yet is listed in {@link #missing()} with the reason (also in
 * felix-service/design/bpf-dataplane.md).
 */
class BpfPacketTest extends PacketScenarios {

    private Path bpffs;
    private BpfDataplane dp;
    private DataplaneModel model;
    private Driver scenarioDriver;
    private NamespaceThread thread;

    @Override
    protected void assumeAvailable() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
    }

    @Override
    protected String prefix() {
        return "bpf-";
    }

    @Override
    protected Map<Feature, String> missing() {
        return Map.of(
                Feature.POLICY_AFTER_HOST_DNAT, "host endpoint programs run at tc, before the host's netfilter DNAT: "
                        + "as in Calico's eBPF mode, arriving traffic is judged by the destination it arrived with",
                Feature.HOST_INPUT_FILTER, "the host's own input (VXLAN from non-Calico hosts) is not policed",
                Feature.KUBE_IPVS, "no INPUT/OUTPUT chains: as in Calico, eBPF mode ignores kube-proxy's IPVS mode");
    }

    @Override
    protected String ourMarker() {
        return "cali"; // our programs are calico_to_ep / calico_from_ep, our pins cali_*
    }

    @Override
    protected Driver driver() {
        PrivateBpfFs fs = PrivateBpfFs.unmounted();
        bpffs = fs.path();
        thread = new NamespaceThread(host);
        model = new DataplaneModel();
        dp = new BpfDataplane(model, bpffs);
        scenarioDriver = onThread(thread, model, dp, () -> {
            dp.close();
            fs.close();
        });
        return scenarioDriver;
    }

    /** A stranger with the pinned set map, opened by path. */
    private <T> T withSets(java.util.function.Function<BpfMap, T> body) {
        return BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.SETS), PolicyMaps.LPM_KEY_SIZE, 1, body);
    }

    private int ifindex(String iface) {
        return Integer.parseInt(host.exec("cat", "/sys/class/net/" + iface + "/ifindex").strip());
    }

    @Override
    protected void strangerDrop(String chain, IpFamily family) {
        // the chain is cali-tw-<iface>: that endpoint's ingress table entry goes
        String iface = chain.substring(Names.toWorkload("").length());
        int index = ifindex(iface);
        BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.ENDPOINTS), 8, 8,
                m -> m.delete(PolicyMaps.endpointKey(index, Dir.TO_ENDPOINT)));
    }

    @Override
    protected void cutForwardHook() {
        // tcx (this kernel): the link detached (felix holds it: removing its pin would not); tc: the filter deleted
        java.nio.file.Path link = PolicyProgram.linkPin(dp.pinDir(), B_IF, TcDirection.EGRESS);
        if (Files.exists(link)) {
            host.run(() -> Tcx.detachLink(link));
        } else {
            host.exec("tc", "filter", "del", "dev", B_IF, "egress", "pref", Integer.toString(Tc.PRIORITY), "handle",
                    "0x" + Integer.toHexString(Tc.HANDLE), "bpf");
        }
    }

    /** {@return what runs on the interface's hook}: our tc filter as {@code tc} lists it, then the tcx programs' names */
    private String onHook(String ifName, TcDirection dir) {
        int index = ifindex(ifName);
        return host.exec("tc", "filter", "show", "dev", ifName, dir.name().toLowerCase(java.util.Locale.ROOT))
                + host.call(() -> String.join(",", Tcx.programNames(index, dir)));
    }

    /** {@return the IDs of the tcx programs on the interface's hook} */
    private List<Integer> tcxIds(int ifindex, TcDirection dir) {
        return host.call(() -> Tcx.programIds(ifindex, dir));
    }

    /** A netfilter driver's kernel set, in BPF terms: the family's members of one set ID (one trie holds both families). */
    private record FamilySet(int id, int family) {
        boolean holds(byte[] lpmKey) {
            return PolicyMaps.decodeLpmKey(lpmKey).setId() == id && PolicyMaps.memberFamily(lpmKey) == family;
        }
    }

    /** {@return the BPF set ID and family behind a kernel set name of the netfilter drivers} */
    private FamilySet setOf(String kernelName) {
        for (IpFamily f : IpFamily.values()) {
            String graphId = model.ipSets().keySet().stream()
                    .filter(id -> Names.ipSet(f, id).equals(kernelName)).findFirst().orElse(null);
            if (graphId != null) {
                Integer id = dp.setId(graphId);
                if (id == null) {
                    throw new AssertionError("set " + graphId + " is not programmed");
                }
                return new FamilySet(id, f == IpFamily.V4 ? PolicyMaps.FAMILY_V4 : PolicyMaps.FAMILY_V6);
            }
        }
        throw new AssertionError("no set " + kernelName);
    }

    @Override
    protected void emptySet(String name) {
        FamilySet set = setOf(name);
        withSets(sets -> {
            sets.keys().stream().filter(set::holds).forEach(sets::delete);
            return null;
        });
    }

    @Override
    protected String listSet(String name) {
        if (Stream.of(Names.MASQ_POOLS_SET, Names.ALL_POOLS_SET, Names.ALL_HOSTS_SET)
                .anyMatch(d -> Stream.of(IpFamily.values()).anyMatch(f -> Names.ipSet(f, d).equals(name)))) {
            // natOutgoing's sets: in the driver's nftables table, as the nftables driver's
            return host.exec("nft", "list", "set", "inet", NftNatOutgoingTable.NAME, name);
        }
        FamilySet set = setOf(name);
        return withSets(sets -> sets.keys().stream().filter(set::holds).map(PolicyMaps::decodeLpmKey)
                .map(e -> calico.api.net.Cidr.parse(e.address().getHostAddress() + "/" + e.prefix()).toString())
                .collect(Collectors.joining("\n")));
    }

    @Override
    protected String listOurs() {
        String filters = Stream.of(A_IF, B_IF, "up0").flatMap(i -> Stream.of(TcDirection.values())
                .map(hook -> onHook(i, hook))).collect(Collectors.joining());
        String[] pins = dp.pinDir().toFile().list();
        return filters + (pins == null ? "" : String.join("\n", Arrays.asList(pins))) + "\n"
                + host.exec("nft", "list", "tables"); // natOutgoing's table
    }

    /** The host's own nat rule, in an nftables table of the host's (the BPF driver programs nothing in netfilter). */
    @Override
    protected void dnat(boolean prerouting, String ip, int port, String toIp, int toPort) {
        String hook = prerouting ? "prerouting" : "output";
        host.exec("nft", "add", "table", "ip", "hostnat");
        host.exec("nft", "add", "chain", "ip", "hostnat", hook, "{ type nat hook " + hook + " priority -100 ; }");
        host.exec("nft", "add", "rule", "ip", "hostnat", hook, "ip", "daddr", ip, "tcp", "dport",
                Integer.toString(port), "dnat", "to", toIp + ":" + toPort);
    }

    // ---- host endpoints: what the maps and tc hold ----

    private static final PolicyId OPEN = new PolicyId("default", null, "open", ResourceKind.GLOBAL_NETWORK_POLICY);

    /**
     * A host endpoint's tables as the maps hold them, and the host object's filters on its
     * interface: failsafe allows first, the doNotTrack and preDNAT stages only while such policy
     * applies (failsafes, and before conntrack their replies, jump past them), forwarded traffic
     * allowed without applyOnForward policy; the all-interfaces endpoint on every host interface
     * but lo and the workloads'; nothing left on the interface once the endpoint is gone.
     */
    @Test
    void hostEndpointTablesAndFiltersFollowTheModel() {
        start(Feature.HOST_ENDPOINTS);
        CompiledRule allowAll = new CompiledRule(Action.Allow, null, null, null, null, null, CompiledRule.Side.ANY,
                CompiledRule.Side.ANY, null);
        List<TierPolicies> open = List.of(new TierPolicies("default", Action.Deny, List.of(OPEN), false));
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of(
                        "failsafeInboundHostPorts", "tcp:7022", "failsafeOutboundHostPorts", "udp:7053")))),
                new DataplaneUpdate.ActivePolicyUpdate(OPEN, new CompiledPolicy(List.of(allowAll), List.of(allowAll),
                        false)),
                new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(), List.of(),
                        open, open, open, List.of(), open, List.of(), open));
        int up0 = ifindex("up0");
        Map<Dir, List<PolicyMaps.Rule>> t = tablesOf(up0);
        assertThat(t.keySet()).containsExactlyInAnyOrder(Dir.HEP_IN, Dir.HEP_OUT, Dir.HEP_FWD_IN, Dir.HEP_FWD_OUT,
                Dir.HEP_UNTRACKED_IN, Dir.HEP_UNTRACKED_OUT, Dir.HEP_PRE_DNAT_IN);
        PolicyMaps.Rule failsafe = t.get(Dir.HEP_IN).get(0);
        assertThat(failsafe.action()).isEqualTo(PolicyMaps.Action.ALLOW);
        assertThat(failsafe.proto()).isEqualTo(6);
        assertThat(failsafe.ports()).containsExactly(new PolicyMaps.PortRef(7022, 7022, PolicyMaps.PortKind.DST));
        assertThat(t.get(Dir.HEP_IN).get(t.get(Dir.HEP_IN).size() - 1).action()).as("the final deny")
                .isEqualTo(PolicyMaps.Action.DENY);
        assertThat(t.get(Dir.HEP_OUT).get(0).ports()).containsExactly(
                new PolicyMaps.PortRef(7053, 7053, PolicyMaps.PortKind.DST));
        assertThat(t.get(Dir.HEP_OUT).get(0).proto()).isEqualTo(17);
        // Before conntrack: the failsafes and the replies of the other way's failsafes skip the stage.
        List<PolicyMaps.Rule> untrackedIn = t.get(Dir.HEP_UNTRACKED_IN);
        assertThat(untrackedIn.subList(0, 2)).extracting(PolicyMaps.Rule::action, PolicyMaps.Rule::jump,
                PolicyMaps.Rule::ports).containsExactly(
                org.assertj.core.groups.Tuple.tuple(PolicyMaps.Action.JUMP, untrackedIn.size(),
                        List.of(new PolicyMaps.PortRef(7022, 7022, PolicyMaps.PortKind.DST))),
                org.assertj.core.groups.Tuple.tuple(PolicyMaps.Action.JUMP, untrackedIn.size(),
                        List.of(new PolicyMaps.PortRef(7053, 7053, PolicyMaps.PortKind.SRC))));
        assertThat(untrackedIn).as("a tier's end decides nothing in a stage")
                .noneMatch(r -> r.action() == PolicyMaps.Action.DENY);
        assertThat(t.get(Dir.HEP_PRE_DNAT_IN).get(0).jump()).isEqualTo(t.get(Dir.HEP_PRE_DNAT_IN).size());
        assertThat(t.get(Dir.HEP_FWD_IN)).as("no applyOnForward policy: allowed")
                .containsExactly(PolicyMaps.Rule.always(PolicyMaps.Action.ALLOW, 0));
        assertThat(t.get(Dir.HEP_FWD_OUT)).extracting(PolicyMaps.Rule::action).as("open, then the tier's deny, "
                + "then what no tier decided").containsExactly(PolicyMaps.Action.ALLOW, PolicyMaps.Action.DENY,
                PolicyMaps.Action.ALLOW);
        assertThat(onHook("up0", TcDirection.INGRESS)).contains("calico_hep_in");
        assertThat(onHook("up0", TcDirection.EGRESS)).contains("calico_hep_out");

        apply(new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(), List.of(),
                open, open, List.of(), List.of(), List.of(), List.of(), List.of()));
        assertThat(tablesOf(up0).keySet()).as("no doNotTrack or preDNAT policy: no stage")
                .containsExactlyInAnyOrder(Dir.HEP_IN, Dir.HEP_OUT, Dir.HEP_FWD_IN, Dir.HEP_FWD_OUT);
        assertThat(scenarioDriver.refresh()).isZero();

        apply(new DataplaneUpdate.HostEndpointRemove("node1/up0"),
                new DataplaneUpdate.HostEndpointUpdate("node1/all", "*", List.of(), List.of(), List.of(), open, open,
                        List.of(), List.of(), List.of(), List.of(), List.of()));
        assertThat(tablesOf(up0)).containsKey(Dir.HEP_IN);
        assertThat(tablesOf(ifindex("lo"))).as("lo is no host endpoint's").isEmpty();
        assertThat(tablesOf(ifindex(A_IF)).keySet()).as("a workload interface is no host endpoint's")
                .doesNotContain(Dir.HEP_IN);
        assertThat(onHook(A_IF, TcDirection.INGRESS)).doesNotContain("calico_hep");

        apply(new DataplaneUpdate.HostEndpointRemove("node1/all"));
        assertThat(tablesOf(up0)).as("endpoint gone: no table").isEmpty();
        assertThat(onHook("up0", TcDirection.INGRESS) + onHook("up0", TcDirection.EGRESS)).doesNotContain("calico");
    }

    /**
     * IPv6 on a host endpoint, in the maps: the failsafe port (no net) is one entry for both
     * families, an {@code ipVersion: 6} rule an IPv6 entry; neighbour discovery passes the policy
     * (the programs' exemption, as the workload programs'); the host's own IPv6 connection out is
     * approved in conntrack on the endpoint's interface with its IPv6 addresses (its replies pass
     * the ingress that allows only 7023 through that approval).
     */
    @Test
    void hostEndpointIpv6RulesAndConntrackInTheMaps() {
        start(Feature.HOST_ENDPOINTS);
        host.exec("ip", "-6", "addr", "add", HOST_IP6 + "/64", "dev", "up0", "nodad");
        outside.exec("ip", "-6", "addr", "add", OUT_IP6 + "/64", "dev", "eth0", "nodad");
        CompiledRule allowAll = new CompiledRule(Action.Allow, null, null, null, null, null, CompiledRule.Side.ANY,
                CompiledRule.Side.ANY, null);
        CompiledRule v6To7023 = new CompiledRule(Action.Allow, 6, "TCP", null, null, null, CompiledRule.Side.ANY,
                new CompiledRule.Side(List.of(), List.of(), List.of("7023"), List.of(), List.of(), List.of(),
                        List.of(), List.of()), null);
        List<TierPolicies> open = List.of(new TierPolicies("default", Action.Deny, List.of(OPEN), false));
        try (NetNs.Listener out = outside.tcpListener(OUT_IP6, 7080);
                NetNs.Listener other = host.tcpListener(HOST_IP6, 7024)) {
            apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of(
                            "failsafeInboundHostPorts", "tcp:7022", "failsafeOutboundHostPorts", "udp:7053")))),
                    new DataplaneUpdate.ActivePolicyUpdate(OPEN, new CompiledPolicy(List.of(v6To7023),
                            List.of(allowAll), false)),
                    new DataplaneUpdate.HostEndpointUpdate("node1/up0", "up0", List.of(HOST_IP), List.of(HOST_IP6),
                            List.of(), open, open));
            int up0 = ifindex("up0");
            List<PolicyMaps.Rule> in = tablesOf(up0).get(Dir.HEP_IN);
            assertThat(in.get(0).ports()).containsExactly(new PolicyMaps.PortRef(7022, 7022, PolicyMaps.PortKind.DST));
            assertThat(in.get(0).family()).as("the failsafe: both families").isZero();
            assertThat(in.get(1).family()).as("ipVersion 6: an IPv6 entry").isEqualTo(PolicyMaps.FAMILY_V6);
            assertThat(in.get(1).ports()).containsExactly(new PolicyMaps.PortRef(7023, 7023, PolicyMaps.PortKind.DST));
            assertThat(in.get(1).action()).isEqualTo(PolicyMaps.Action.ALLOW);

            // Neighbour discovery passes the host endpoint's policy (tables flushed: the failsafe
            // connection needs a solicitation and an advertisement each way).
            host.exec("ip", "-6", "neigh", "flush", "dev", "up0");
            outside.exec("ip", "-6", "neigh", "flush", "dev", "eth0");
            try (NetNs.Listener safe = host.tcpListener(HOST_IP6, 7022)) {
                assertThat(outside.tcpConnects(HOST_IP6, 7022, YES)).as("v6 failsafe after neighbour discovery")
                        .isTrue();
            }
            assertThat(outside.tcpConnects(HOST_IP6, 7024, NO)).as("the rest of v6 is denied").isFalse();
            // Forwarding off on the interface: the route lookup refuses (FWD_DISABLED), still the host's own.
            host.exec("sysctl", "-qw", "net.ipv6.conf.up0.forwarding=0");
            assertThat(outside.tcpConnects(HOST_IP6, 7024, NO)).as("forwarding off: still denied").isFalse();
            host.exec("sysctl", "-qw", "net.ipv6.conf.up0.forwarding=1");
            assertThat(host.tcpConnects(OUT_IP6, 7080, YES)).as("the host's own v6 connection out").isTrue();
            java.net.InetAddress outAddr = host.call(() -> java.net.InetAddress.getByName(OUT_IP6));
            assertThat(calico.dataplane.bpf.Conntrack.livePinned(dp.pinDir(), System.nanoTime()).keySet())
                    .as("approved on up0 with its IPv6 addresses")
                    .anyMatch(k -> k.ifindex() == up0 && k.dst().equals(outAddr) && k.dstPort() == 7080
                            && k.proto() == 6);
        }
    }

    /**
     * Link announcements lost (the kernel dataplane's watcher overflowed: {@code onLinksLost}): the
     * driver lists the links again, so a workload interface created meanwhile, of which no
     * announcement arrived, gets its programs and tables at once.
     */
    @Test
    void linksLostRelistsAndAttachesAnInterfaceCreatedMeanwhile() {
        start();
        String cIf = "cali9999abcd";
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>())),
                new DataplaneUpdate.WorkloadEndpointUpdate("test/c", cIf, null, List.of("10.65.0.3/32"), List.of(),
                        List.of(), List.of(), List.of()));
        host.exec("ip", "link", "add", cIf, "type", "veth", "peer", "name", "peer9999");
        int c = ifindex(cIf);
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of("logSeverityScreen", "Info")))));
        assertThat(onHook(cIf, TcDirection.EGRESS)).as("no announcement, no listing: not attached yet")
                .doesNotContain("calico");
        thread.run(dp::onLinksLost);
        assertThat(onHook(cIf, TcDirection.EGRESS)).as("re-listed: attached").contains("calico_to_ep");
        assertThat(onHook(cIf, TcDirection.INGRESS)).contains("calico_from_ep");
        assertThat(tablesOf(c)).containsKeys(Dir.TO_ENDPOINT, Dir.FROM_ENDPOINT);
    }

    /**
     * {@code bpfMapSizeConntrack} sizes the pinned conntrack map at load; {@code bpfConntrackTimeouts}
     * (Calico's keys in either spelling; {@code tcpFinsSeen: Auto} keeps the default) reach the
     * programs' timeout map on every apply, unconfigured states 0 (the compiled default).
     */
    @Test
    void conntrackSizeAndTimeoutsComeFromFelixConfiguration() {
        start();
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of("bpfMapSizeConntrack", "4096",
                "bpfConntrackTimeouts", "TCPEstablished=5m,tcpFinsSeen=Auto,udpTimeout=7s")))));
        assertThat(BpfMap.pinnedMaxEntries(dp.pinDir().resolve(PolicyMaps.CONNTRACK))).isEqualTo(4096);
        assertThat(timeouts()).containsExactly(0, 300, 0, 0, 7, 0, 0);
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of("bpfMapSizeConntrack", "4096",
                "bpfConntrackTimeouts", "icmpTimeout=2s")))));
        assertThat(timeouts()).as("a change: the rest back to their defaults").containsExactly(0, 0, 0, 0, 0, 2, 0);
    }

    /**
     * A restart of felix keeps established connections: the old driver goes away without removing
     * anything (programs stay attached, maps pinned), a new one on the same pins resyncs from them
     * and replaces the programs in place. a's ingress denies everything, so b's replies on a
     * connection a opened pass only through conntrack: they still do after the restart, and the
     * interfaces carry the new programs.
     */
    @Test
    void aRestartKeepsEstablishedConnectionsThroughConntrack() throws Exception {
        start();
        CompiledRule allowAll = new CompiledRule(Action.Allow, null, null, null, null, null, CompiledRule.Side.ANY,
                CompiledRule.Side.ANY, null);
        List<DataplaneUpdate> state = List.of(
                new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>())),
                new DataplaneUpdate.ActiveProfileUpdate("kns.out-only", new CompiledPolicy(List.of(),
                        List.of(allowAll), false)),
                new DataplaneUpdate.ActiveProfileUpdate("kns.open", new CompiledPolicy(List.of(allowAll),
                        List.of(allowAll), false)),
                new DataplaneUpdate.WorkloadEndpointUpdate("test/a", A_IF, null, List.of(A_IP + "/32"), List.of(),
                        List.of("kns.out-only"), List.of(), List.of()),
                new DataplaneUpdate.WorkloadEndpointUpdate("test/b", B_IF, null, List.of(B_IP + "/32"), List.of(),
                        List.of("kns.open"), List.of(), List.of()));
        apply(state.toArray(DataplaneUpdate[]::new));
        int ifA = ifindex(A_IF);
        try (java.net.ServerSocket server = b.call(() -> new java.net.ServerSocket(8090, 5,
                java.net.InetAddress.getByName(B_IP)));
                NetNs.Listener a8091 = a.tcpListener(A_IP, 8091);
                java.net.Socket client = a.call(() -> {
                    java.net.Socket c = new java.net.Socket();
                    c.connect(new java.net.InetSocketAddress(B_IP, 8090), 2000);
                    return c;
                });
                java.net.Socket served = server.accept()) {
            client.setSoTimeout(3000);
            served.setSoTimeout(3000);
            assertThat(echo(client, served, 1)).as("before the restart").isTrue();
            assertThat(b.tcpConnects(A_IP, 8091, NO)).as("a's ingress denies new connections").isFalse();
            List<Integer> before = tcxIds(ifA, TcDirection.EGRESS);
            assertThat(before).as("tcx: one program, ours").hasSize(1);

            dp.close(); // felix stops: nothing detached, nothing unpinned
            DataplaneModel model2 = new DataplaneModel();
            BpfDataplane dp2 = new BpfDataplane(model2, bpffs);
            try (Driver restarted = onThread(new NamespaceThread(host), model2, dp2, dp2::close)) {
                assertThat(restarted.apply(state).resync()).as("the new felix starts from the pins").isTrue();
                List<Integer> after = tcxIds(ifA, TcDirection.EGRESS);
                assertThat(after).as("the program was replaced in the pinned link: still one").hasSize(1)
                        .doesNotContainAnyElementsOf(before);
                assertThat(echo(client, served, 2)).as("the connection survives: b's replies through conntrack")
                        .isTrue();
                assertThat(b.tcpConnects(A_IP, 8091, NO)).as("still no new connection to a").isFalse();
                assertThat(restarted.refresh()).isZero();
                assertThat(onHook(A_IF, TcDirection.EGRESS)).as("tcx, no tc filter").isEqualTo("calico_to_ep");
            }

            // bpfAttachType: TC at the next start: tc filters take over from the tcx links (their pins go).
            List<DataplaneUpdate> tcState = new ArrayList<>(state);
            tcState.set(0, new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of(
                    "bpfAttachType", "TC")))));
            DataplaneModel model3 = new DataplaneModel();
            BpfDataplane dp3 = new BpfDataplane(model3, bpffs);
            try (Driver tc = onThread(new NamespaceThread(host), model3, dp3, dp3::close)) {
                tc.apply(tcState);
                // the kernel releases an unpinned link in deferred work, a moment after the unlink
                calico.libcalico.testing.Await.until("no tcx link left", java.time.Duration.ofSeconds(5),
                        () -> tcxIds(ifA, TcDirection.EGRESS).isEmpty());
                assertThat(onHook(A_IF, TcDirection.EGRESS)).contains("calico_to_ep");
                assertThat(PolicyProgram.linkPin(dp.pinDir(), A_IF, TcDirection.EGRESS)).doesNotExist();
                assertThat(echo(client, served, 3)).as("the connection survives the change of hook").isTrue();
                assertThat(b.tcpConnects(A_IP, 8091, NO)).as("tc polices as tcx did").isFalse();
                assertThat(tc.refresh()).isZero();
            }
        }
    }

    /** {@return whether byte {@code n} goes from {@code client} to {@code served} and back} */
    private static boolean echo(java.net.Socket client, java.net.Socket served, int n) throws IOException {
        client.getOutputStream().write(n);
        client.getOutputStream().flush();
        try {
            int got = served.getInputStream().read();
            served.getOutputStream().write(got);
            served.getOutputStream().flush();
            return got == n && client.getInputStream().read() == n;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        }
    }

    /** {@return the timeout map's seconds for states 1..7} */
    private List<Integer> timeouts() {
        return BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.CT_TIMEOUTS), 4, 4, m -> {
            List<Integer> out = new ArrayList<>();
            for (PolicyMaps.CtState state : PolicyMaps.CtState.values()) {
                out.add(java.nio.ByteBuffer.wrap(m.get(PolicyMaps.ctTimeoutKey(state)))
                        .order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt());
            }
            return out;
        });
    }

    private static final PolicyId V6 = new PolicyId("default", null, "v6", ResourceKind.GLOBAL_NETWORK_POLICY);

    /**
     * IPv6 rules as the maps hold them and as real packets meet them: an ICMPv6 type/code rule and
     * an {@code ipVersion: 4} rule are one family's entries; a rule with nets of both families
     * becomes an entry per family, each with its family's LPM set; a named-port rule (one set
     * holding both families' members) is one entry for both; a port range holds for v6 as for v4.
     */
    @Test
    void ipv6RulesCompileToFamilyEntriesAndDecideRealPackets() throws IOException {
        start(Feature.IPV6);
        CompiledRule.Side any = CompiledRule.Side.ANY;
        CompiledRule echo6 = new CompiledRule(Action.Allow, 6, "ICMPv6", null,
                new calico.api.model.Rule.IcmpFields(128, 0), null, any, any, null);
        CompiledRule fromA = new CompiledRule(Action.Allow, null, "TCP", null, null, null,
                new CompiledRule.Side(List.of(A_IP + "/32", A_IP6 + "/128"), List.of(), List.of(), List.of(), List.of(),
                        List.of(), List.of(), List.of()),
                new CompiledRule.Side(List.of(), List.of(), List.of("8080:8081"), List.of(), List.of(), List.of(),
                        List.of(), List.of()), null);
        CompiledRule v4Only = new CompiledRule(Action.Allow, 4, "TCP", null, null, null, any,
                new CompiledRule.Side(List.of(), List.of(), List.of("9090"), List.of(), List.of(), List.of(),
                        List.of(), List.of()), null);
        CompiledRule named = new CompiledRule(Action.Allow, null, "TCP", null, null, null, any,
                new CompiledRule.Side(List.of(), List.of(), List.of(), List.of(), List.of(), List.of(), List.of("np"),
                        List.of()), null);
        List<TierPolicies> guarded = List.of(new TierPolicies("default", Action.Deny, List.of(V6), false));
        ServerPorts listeners = new ServerPorts(b, List.of(B_IP, B_IP6), List.of(8080, 8081, 8082, 9090, 7070));
        try (listeners) {
            apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>())),
                    new DataplaneUpdate.IpSetUpdate("np", calico.felix.calc.IpSetType.IP_AND_PORT, java.util.Set.of(
                            new calico.felix.calc.IpSetMember(calico.api.net.Cidr.parse(B_IP + "/32"), "tcp", 7070),
                            new calico.felix.calc.IpSetMember(calico.api.net.Cidr.parse(B_IP6 + "/128"), "tcp",
                                    7070))),
                    new DataplaneUpdate.ActiveProfileUpdate("kns.test", new CompiledPolicy(List.of(new CompiledRule(
                            Action.Allow, null, null, null, null, null, any, any, null)), List.of(new CompiledRule(
                            Action.Allow, null, null, null, null, null, any, any, null)), false)),
                    new DataplaneUpdate.ActivePolicyUpdate(V6, new CompiledPolicy(List.of(echo6, fromA, v4Only, named),
                            List.of(), false)),
                    new DataplaneUpdate.WorkloadEndpointUpdate("test/a", A_IF, null, List.of(A_IP + "/32"),
                            List.of(A_IP6 + "/128"), List.of("kns.test"), List.of(), List.of()),
                    new DataplaneUpdate.WorkloadEndpointUpdate("test/b", B_IF, null, List.of(B_IP + "/32"),
                            List.of(B_IP6 + "/128"), List.of("kns.test"), guarded, List.of()));

            List<PolicyMaps.Rule> table = tablesOf(ifindex(B_IF)).get(Dir.TO_ENDPOINT);
            assertThat(table).filteredOn(r -> r.icmpType() != null).singleElement().satisfies(r -> {
                assertThat(r.family()).isEqualTo(PolicyMaps.FAMILY_V6);
                assertThat(r.proto()).isEqualTo(58);
                assertThat(r.icmpType()).isEqualTo(128);
                assertThat(r.icmpCode()).isZero();
            });
            List<PolicyMaps.Rule> ranges = table.stream().filter(r -> r.ports().contains(
                    new PolicyMaps.PortRef(8080, 8081, PolicyMaps.PortKind.DST))).toList();
            assertThat(ranges).extracting(PolicyMaps.Rule::family)
                    .containsExactlyInAnyOrder(PolicyMaps.FAMILY_V4, PolicyMaps.FAMILY_V6);
            Map<Integer, String> netsByFamily = new HashMap<>();
            for (PolicyMaps.Rule r : ranges) {
                int id = r.sets().get(0).id();
                netsByFamily.put(r.family(), withSets(sets -> sets.keys().stream().map(PolicyMaps::decodeLpmKey)
                        .filter(e -> e.setId() == id).map(e -> calico.api.net.Cidr.parse(e.address().getHostAddress()
                                + "/" + e.prefix()).toString()).collect(Collectors.joining(","))));
            }
            assertThat(netsByFamily).as("each family's entry names its family's nets")
                    .isEqualTo(Map.of(PolicyMaps.FAMILY_V4, A_IP + "/32", PolicyMaps.FAMILY_V6, A_IP6 + "/128"));
            assertThat(table).filteredOn(r -> r.ports().stream().anyMatch(p -> p.lo() == 9090)).singleElement()
                    .extracting(PolicyMaps.Rule::family).isEqualTo(PolicyMaps.FAMILY_V4);
            assertThat(table).filteredOn(r -> r.sets().stream().anyMatch(x -> x.kind() == PolicyMaps.SetKind.NAMED_PORT))
                    .as("one entry for both families").singleElement().extracting(PolicyMaps.Rule::family).isEqualTo(0);
            List<Integer> namedFamilies = BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.NAMED_PORTS),
                    PolicyMaps.NAMED_PORT_KEY_SIZE, 1, m -> m.keys().stream().map(PolicyMaps::memberFamily).sorted()
                            .toList());
            assertThat(namedFamilies).as("the named-port set's members, both families")
                    .containsExactly(PolicyMaps.FAMILY_V4, PolicyMaps.FAMILY_V6);

            assertThat(a.tryExec("ping", "-6", "-c", "1", "-W", "2", B_IP6).status()).as("ICMPv6 echo request")
                    .isZero();
            assertThat(a.tcpConnects(B_IP6, 8081, YES)).as("v6 net, port range").isTrue();
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("v4 net, port range").isTrue();
            assertThat(a.tcpConnects(B_IP6, 8082, NO)).as("v6 past the range").isFalse();
            assertThat(a.tcpConnects(B_IP, 9090, YES)).as("ipVersion 4: v4").isTrue();
            assertThat(a.tcpConnects(B_IP6, 9090, NO)).as("ipVersion 4: not v6").isFalse();
            assertThat(a.tcpConnects(B_IP6, 7070, YES)).as("named port v6").isTrue();
            assertThat(a.tcpConnects(B_IP, 7070, YES)).as("named port v4").isTrue();
            assertThat(scenarioDriver.refresh()).isZero();
        }
    }

    /**
     * {@code cali_ifnets} and the {@code cali_cfg} flags follow the model: a's
     * {@code allowSpoofedSourcePrefixes} of both families under a's ifindex only while
     * {@code workloadSourceSpoofing} is {@code Any}; the service ranges under 0 unless
     * {@code serviceLoopPrevention} is {@code Disabled}, with the Reject flag for {@code Reject}. Real
     * IPv6 packets: an allowed spoofed v6 source passes the reverse path from a, another is dropped;
     * forwarded v6 to a service range nobody DNAT'd is dropped, refused under Reject. A resync reads
     * the map back.
     */
    @Test
    void spoofedSourcesAndServiceRangesAreTheInterfaceNetsMap() {
        start(Feature.IPV6);
        host.exec("ip", "-6", "addr", "add", HOST_IP6 + "/64", "dev", "up0", "nodad");
        outside.exec("ip", "-6", "addr", "add", OUT_IP6 + "/64", "dev", "eth0", "nodad");
        outside.exec("ip", "-6", "route", "add", "fd00:65::/64", "via", HOST_IP6);
        outside.exec("ip", "-6", "route", "add", "fd00:96::/112", "via", HOST_IP6);
        String spoof6 = "fd00:65::91";
        String other6 = "fd00:65::a9";
        String svc6 = "fd00:96::10";
        for (String ip : List.of(spoof6, other6, svc6)) {
            a.exec("ip", "-6", "addr", "add", ip + "/128", "dev", "eth0", "nodad");
        }
        host.exec("ip", "-6", "route", "add", spoof6 + "/128", "dev", B_IF); // routed elsewhere: spoofed
        host.exec("ip", "-6", "route", "add", other6 + "/128", "dev", B_IF);
        host.exec("ip", "-6", "route", "add", svc6 + "/128", "dev", A_IF); // as a route learnt over BGP
        CompiledRule allowAll = new CompiledRule(Action.Allow, null, null, null, null, null, CompiledRule.Side.ANY,
                CompiledRule.Side.ANY, null);
        Map<String, String> any = Map.of("workloadSourceSpoofing", "Any");
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(any))),
                new DataplaneUpdate.ActiveProfileUpdate("kns.test", new CompiledPolicy(List.of(allowAll),
                        List.of(allowAll), false)),
                new DataplaneUpdate.WorkloadEndpointUpdate("test/a", A_IF, null, List.of(A_IP + "/32"),
                        List.of(A_IP6 + "/128"), List.of("kns.test"), List.of(), List.of(),
                        DataplaneUpdate.EndpointIdentity.NONE, List.of(), List.of("10.65.0.96/30", "fd00:65::90/124")),
                new DataplaneUpdate.WorkloadEndpointUpdate("test/b", B_IF, null, List.of(B_IP + "/32"),
                        List.of(B_IP6 + "/128"), List.of("kns.test"), List.of(), List.of()),
                new DataplaneUpdate.ServiceCidrsUpdate(List.of("10.96.0.0/12", "fd00:96::/112")));
        int ifA = ifindex(A_IF);
        assertThat(ifnets()).containsExactlyInAnyOrder(ifA + " 10.65.0.96/30", ifA + " fd00:65::90/124",
                "0 10.96.0.0/12", "0 fd00:96::/112");
        assertThat(configFlags() & (PolicyMaps.CFG_SVC_LOOP | PolicyMaps.CFG_SVC_REJECT)).as("Drop, Calico's default")
                .isEqualTo(PolicyMaps.CFG_SVC_LOOP);
        // A stranger drops a service range and adds a spoofed source for b: the refresh undoes both.
        BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.IFNETS), PolicyMaps.LPM_KEY_SIZE, 1, m -> {
            m.delete(PolicyMaps.ifnetKey(PolicyMaps.IFNETS_SERVICES, inet("10.96.0.0"), 12));
            m.put(PolicyMaps.ifnetKey(ifindex(B_IF), inet("10.65.0.0"), 16), new byte[] {1});
            return null;
        });
        assertThat(scenarioDriver.refresh()).as("the stranger's edits, repaired").isPositive();
        assertThat(ifnets()).containsExactlyInAnyOrder(ifA + " 10.65.0.96/30", ifA + " fd00:65::90/124",
                "0 10.96.0.0/12", "0 fd00:96::/112");
        assertThat(udpArrives(a, spoof6, outside, OUT_IP6, 7302, YES)).as("an allowed spoofed v6 source").isTrue();
        assertThat(udpArrives(a, other6, outside, OUT_IP6, 7302, NO)).as("outside a's v6 prefixes: dropped").isFalse();
        try (NetNs.Listener s = a.tcpListener(svc6, 7303)) {
            assertThat(outside.tcpConnects(svc6, 7303, NO)).as("v6 service address not DNAT'd: dropped").isFalse();
            assertThat(refused(outside, svc6, 7303)).as("Drop: silent").isFalse();
            apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of(
                    "workloadSourceSpoofing", "Any", "serviceLoopPrevention", "Reject")))));
            assertThat(configFlags() & PolicyMaps.CFG_SVC_REJECT).isEqualTo(PolicyMaps.CFG_SVC_REJECT);
            assertThat(refused(outside, svc6, 7303, 3000)).as("Reject: an ICMPv6 port unreachable").isTrue();
            scenarioDriver.resync();
            assertThat(ifnets()).as("read back by the resync: the same").hasSize(4);
            assertThat(refused(outside, svc6, 7303, 3000)).as("still refused after the resync").isTrue();

            apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(Map.of(
                    "serviceLoopPrevention", "Disabled")))));
            assertThat(ifnets()).as("spoofing Disabled, loop prevention Disabled: nothing").isEmpty();
            assertThat(configFlags() & (PolicyMaps.CFG_SVC_LOOP | PolicyMaps.CFG_SVC_REJECT)).isZero();
            assertThat(outside.tcpConnects(svc6, 7303, YES)).as("Disabled: forwarded").isTrue();
            assertThat(udpArrives(a, spoof6, outside, OUT_IP6, 7302, NO)).as("spoofing Disabled: dropped").isFalse();
        }
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>(any))),
                new DataplaneUpdate.WorkloadEndpointRemove("test/a"));
        assertThat(ifnets()).as("a gone: only the service ranges").containsExactlyInAnyOrder("0 10.96.0.0/12",
                "0 fd00:96::/112");
    }

    /**
     * natOutgoing's nftables table exists exactly while a pool has natOutgoing, survives a resync
     * and strangers' edits (the refresh), and goes with {@code removeAll} (a switch to another backend).
     */
    @Test
    void natOutgoingTableExistsWhileAPoolNeedsIt() {
        start();
        String table = "table inet " + NftNatOutgoingTable.NAME;
        apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(new HashMap<>())),
                new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", false, "Never", "Never", false));
        assertThat(host.exec("nft", "list", "tables")).as("no natOutgoing pool: no table").doesNotContain(table);
        apply(new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", true, "Never", "Never", false));
        assertThat(host.exec("nft", "list", "table", "inet", NftNatOutgoingTable.NAME)).contains("masquerade")
                .contains("10.65.0.0/16");
        host.exec("nft", "flush", "chain", "inet", NftNatOutgoingTable.NAME, calico.felix.dataplane.nft.NftNames.chain(
                calico.felix.dataplane.rules.Ruleset.Table.NAT, Names.NAT_OUTGOING));
        scenarioDriver.resync();
        assertThat(host.exec("nft", "list", "table", "inet", NftNatOutgoingTable.NAME)).as("a resync rewrites it")
                .contains("masquerade");
        assertThat(scenarioDriver.refresh()).as("nothing changed since: no repair").isZero();
        host.exec("nft", "flush", "chain", "inet", NftNatOutgoingTable.NAME, calico.felix.dataplane.nft.NftNames.chain(
                calico.felix.dataplane.rules.Ruleset.Table.NAT, Names.NAT_OUTGOING));
        assertThat(scenarioDriver.refresh()).as("a stranger's flush, undone by the refresh").isPositive();
        assertThat(host.exec("nft", "list", "table", "inet", NftNatOutgoingTable.NAME)).contains("masquerade");
        host.exec("nft", "delete", "table", "inet", NftNatOutgoingTable.NAME);
        assertThat(scenarioDriver.refresh()).as("the table removed by a stranger, put back").isPositive();
        assertThat(host.exec("nft", "list", "table", "inet", NftNatOutgoingTable.NAME)).contains("masquerade");
        assertThat(scenarioDriver.refresh()).as("and left alone after").isZero();
        apply(new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", false, "Never", "Never", false));
        assertThat(host.exec("nft", "list", "tables")).as("natOutgoing off: gone").doesNotContain(table);
        apply(new DataplaneUpdate.IpPoolUpdate("pool", "10.65.0.0/16", true, "Never", "Never", false));
        scenarioDriver.removeAll();
        assertThat(host.exec("nft", "list", "tables")).as("removeAll: gone").doesNotContain(table);
    }

    /** {@return cali_ifnets' keys as "ifindex cidr"} */
    private List<String> ifnets() {
        return BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.IFNETS), PolicyMaps.LPM_KEY_SIZE, 1,
                m -> m.keys().stream().map(PolicyMaps::decodeLpmKey).map(e -> e.setId() + " "
                        + calico.api.net.Cidr.parse(e.address().getHostAddress() + "/" + e.prefix())).toList());
    }

    private static java.net.InetAddress inet(String ip) {
        try {
            return java.net.InetAddress.getByName(ip);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(ip, e);
        }
    }

    /** {@return cali_cfg's flags} */
    private int configFlags() {
        return BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.CONFIG), 4, 4, m -> java.nio.ByteBuffer.wrap(
                m.get(PolicyMaps.configKey())).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt());
    }

    /** TCP listeners of {@code ns} on every address and port given, closed together. */
    private static final class ServerPorts implements AutoCloseable {
        private final List<NetNs.Listener> listeners = new ArrayList<>();

        ServerPorts(NetNs ns, List<String> ips, List<Integer> ports) {
            for (String ip : ips) {
                for (int port : ports) {
                    listeners.add(ns.tcpListener(ip, port));
                }
            }
        }

        @Override
        public void close() throws IOException {
            for (NetNs.Listener l : listeners) {
                l.close();
            }
        }
    }

    /** {@return the tables {@code cali_eps} names for interface {@code ifindex}, read from the rule map} */
    private Map<Dir, List<PolicyMaps.Rule>> tablesOf(int ifindex) {
        Map<Dir, List<PolicyMaps.Rule>> out = new EnumMap<>(Dir.class);
        BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.ENDPOINTS), 8, 8, eps -> {
            for (byte[] k : eps.keys()) {
                PolicyMaps.EndpointKey ek = PolicyMaps.decodeEndpointKey(k);
                if (ek.ifindex() == ifindex) {
                    int[] genLen = PolicyMaps.decodeEndpointValue(eps.get(k));
                    out.put(ek.dir(), BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.RULES), 12,
                            PolicyMaps.RULE_SIZE, rules -> {
                                List<PolicyMaps.Rule> t = new ArrayList<>();
                                for (int i = 0; i < genLen[1]; i++) {
                                    t.add(PolicyMaps.decodeRule(rules.get(PolicyMaps.ruleKey(ifindex, ek.dir(),
                                            genLen[0], i))));
                                }
                                return t;
                            }));
                }
            }
            return null;
        });
        return out;
    }
}
