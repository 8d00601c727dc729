package calico.felix.dataplane;

import static calico.felix.dataplane.KernelTestbed.allowAllProfile;
import static calico.felix.dataplane.KernelTestbed.felixConfig;
import static calico.felix.dataplane.KernelTestbed.tier;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Rule;
import calico.api.model.WorkloadEndpoint;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.bpf.PolicyProgram;
import calico.dataplane.testing.NetNs;
import calico.dataplane.testing.PrivateBpfFs;
import calico.felix.dataplane.testing.Fixtures;
import calico.libcalico.testing.Await;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The eBPF driver (issue 26's first slice) through the whole kernel dataplane: {@code bpfEnabled}
 * in the graph's FelixConfiguration selects it, tc programs on the workloads' {@code cali…}
 * interfaces enforce the model's policy on real TCP, the pinned maps hold what the model says,
 * an interface the programs cannot be attached to is set down (felix not ready) until they are,
 * and switching to nftables and back leaves nothing of the other. Pins on a private bpffs.
 */
class KernelBpfTest {

    private static final Duration YES = Duration.ofSeconds(2);
    private static final Duration NO = Duration.ofMillis(300);
    private static final String A_IP = "10.67.0.1";
    private static final String B_IP = "10.67.0.2";
    private static final String C_IP = "10.67.0.3";
    private static final String A_IF = "calia1b2c3d4";
    private static final String B_IF = "calib1b2c3d4";
    private static final String C_IF = "calic1b2c3d4";
    private static final String D_IP = "10.67.0.4";
    private static final String D_IF = "calid1b2c3d4";

    private KernelTestbed bed;
    private PrivateBpfFs fs;
    private Path bpffs;

    @AfterEach
    void tearDown() throws Exception {
        if (bed != null) {
            bed.close();
        }
        if (fs != null) {
            fs.close();
        }
    }

    @Test
    void bpfEnforcesTheModelFailsClosedAndSwitchesCleanly() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        fs = PrivateBpfFs.unmounted();
        bpffs = fs.path();
        bed = new KernelTestbed("bpf");
        NetNs a = bed.workload("bpf-a", A_IF, A_IP);
        NetNs b = bed.workload("bpf-b", B_IF, B_IP);
        NetNs c = bed.workload("bpf-c", C_IF, C_IP);
        // c's interface holds an `ingress` qdisc: clsact cannot be made there, so our programs cannot attach.
        bed.host.exec("tc", "qdisc", "add", "dev", C_IF, "ingress");
        NetNs d = bed.workload("bpf-d", D_IF, D_IP);
        bed.host.exec("tc", "qdisc", "add", "dev", D_IF, "ingress");
        bed.dataplane = new KernelDataplane(bed.host.name(),
                new KernelPolicyDrivers(KernelDataplane.commandPrefix(bed.host.name()), bpffs), DataplaneObserver.NONE);
        Path pins = bpffs.resolve("calico");

        try (NetNs.Listener b8080 = b.tcpListener(B_IP, 8080); NetNs.Listener b8081 = b.tcpListener(B_IP, 8081);
             NetNs.Listener b9090 = b.tcpListener(B_IP, 9090); NetNs.Listener b9091 = b.tcpListener(B_IP, 9091);
             NetNs.Listener a7070 = a.tcpListener(A_IP, 7070)) {
            // b admits app=a on four ports (an IP set from a selector); a admits nothing and may not send to 8081.
            Rule fromA = Rule.allow().withProtocol(Protocol.TCP).withSource(EntityRule.empty().withSelector("app == 'a'"))
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.range(8080, 8081), Port.range(9090, 9091))));
            Rule no8081 = Rule.deny().withProtocol(Protocol.TCP)
                    .withDestination(EntityRule.empty().withPorts(List.of(Port.of(8081))));
            // bpfAttachType TC: the tc path (clsact filters) and its refusal of an `ingress` qdisc; tcx: BpfPacketTest.
            bed.put(felixConfig(Map.of("bpfEnabled", true, "bpfAttachType", "TC")), tier("default", 1000.0), tier("first", 10.0),
                    allowAllProfile("kns.test"), wep("a", A_IP, A_IF, "a"), wep("b", B_IP, B_IF, "b"),
                    wep("c", C_IP, C_IF, "a"),
                    Fixtures.gnp("b-from-a", "default", "app == 'b'", List.of(fromA), List.of(), PolicyType.Ingress),
                    Fixtures.gnp("a-guard", "default", "app == 'a'", List.of(), List.of(no8081, Rule.allow()),
                            PolicyType.Ingress, PolicyType.Egress));
            bed.inSync();
            assertThat(bed.dataplane.backend()).isEqualTo("bpf");

            // (1) Fail closed: c's interface is down, felix not ready, the error names endpoint, interface, program.
            assertThat(bed.dataplane.errors()).anySatisfy(e -> assertThat(e).contains("interface " + C_IF)
                    .contains("program calico_").contains("endpoint "));
            assertThat(bed.host.exec("ip", "-o", "link", "show", C_IF)).doesNotContain(",UP");
            assertThat(c.tcpConnects(B_IP, 8080, NO)).as("c: no attach, no traffic").isFalse();

            // (2) Ingress port rule with a selector's set, egress deny, conntrack.
            assertThat(a.tcpConnects(B_IP, 8080, YES)).as("a->b 8080: allowed, the reply passes a's ingress").isTrue();
            assertThat(a.tcpConnects(B_IP, 8081, NO)).as("a->b 8081: a's egress denies").isFalse();
            assertThat(b.tcpConnects(A_IP, 7070, NO)).as("b->a: a's ingress denies new connections").isFalse();
            assertThat(bed.host.exec("tc", "filter", "show", "dev", B_IF, "egress")).contains("calico_to_ep");
            assertThat(bed.host.exec("tc", "filter", "show", "dev", B_IF, "ingress")).contains("calico_from_ep");

            // (3) A tier before default: its end denies; a Pass hands over to the next tier.
            bed.put(gate(List.of(deny9091())));
            assertThat(a.tcpConnects(B_IP, 8080, NO)).as("end of tier first denies").isFalse();
            bed.put(gate(List.of(deny9091(), Fixtures.action(Action.Pass))));
            assertThat(a.tcpConnects(B_IP, 9090, YES)).as("passed to default, allowed there").isTrue();
            assertThat(a.tcpConnects(B_IP, 9091, NO)).as("denied in tier first").isFalse();
            assertThat(bed.host.exec("ip", "-o", "link", "show", C_IF)).as("later applies keep c down")
                    .doesNotContain(",UP");
            assertThat(bed.dataplane.errors()).as("and felix not ready").anySatisfy(e -> assertThat(e).contains(C_IF));
            // d's interface (held down since the driver started) becomes an endpoint: the routes configure it
            // now, for the first time, but never set it up.
            // (the driver would set it down again at the link event: the carrier count shows any moment up)
            String carrierChanges = bed.host.exec("cat", "/sys/class/net/" + D_IF + "/carrier_changes");
            bed.put(wep("d", D_IP, D_IF, "a"));
            assertThat(bed.host.exec("ip", "-o", "link", "show", D_IF)).as("d held down").doesNotContain(",UP");
            assertThat(bed.host.exec("cat", "/sys/class/net/" + D_IF + "/carrier_changes")).as("d never up meanwhile")
                    .isEqualTo(carrierChanges);
            assertThat(d.tcpConnects(B_IP, 8080, NO)).as("d: no attach, no traffic").isFalse();
            assertThat(bed.dataplane.errors()).anySatisfy(e -> assertThat(e).contains("endpoint test/d")
                    .contains("interface " + D_IF));

            // (4) The maps after a policy change: a relabelled leaves the selector's set, and is denied.
            try (PolicyProgram view = PolicyProgram.load(pins)) {
                assertThat(lpmAddresses(view)).contains(A_IP + "/32", C_IP + "/32");
                bed.put(wep("a", A_IP, A_IF, "other"));
                assertThat(lpmAddresses(view)).doesNotContain(A_IP + "/32").contains(C_IP + "/32");
                int bIndex = Integer.parseInt(bed.host.exec("cat", "/sys/class/net/" + B_IF + "/ifindex").strip());
                int[] header = PolicyMaps.decodeEndpointValue(view.map(PolicyMaps.ENDPOINTS)
                        .get(PolicyMaps.endpointKey(bIndex, PolicyMaps.Dir.TO_ENDPOINT)));
                List<PolicyMaps.Rule> bIngress = java.util.stream.IntStream.range(0, header[1])
                        .mapToObj(i -> PolicyMaps.decodeRule(view.map(PolicyMaps.RULES)
                                .get(PolicyMaps.ruleKey(bIndex, PolicyMaps.Dir.TO_ENDPOINT, header[0], i))))
                        .toList();
                assertThat(bIngress).anySatisfy(r -> {
                    assertThat(r.action()).isEqualTo(PolicyMaps.Action.ALLOW);
                    assertThat(r.ports()).contains(new PolicyMaps.PortRef(8080, 8081, PolicyMaps.PortKind.DST));
                    assertThat(r.sets()).hasSize(1);
                });
                assertThat(bIngress.get(bIngress.size() - 1)).isEqualTo(PolicyMaps.Rule.always(PolicyMaps.Action.DENY, 0));
            }
            assertThat(a.tcpConnects(B_IP, 9090, NO)).as("a relabelled: not in the set").isFalse();

            // (5) Repaired: the stranger's qdisc goes, the next apply attaches, c comes up and is ready again.
            bed.host.exec("tc", "qdisc", "del", "dev", C_IF, "ingress");
            bed.host.exec("tc", "qdisc", "del", "dev", D_IF, "ingress");
            bed.put(wep("a", A_IP, A_IF, "a"));
            Await.until("c's interface up", Duration.ofSeconds(10),
                    () -> bed.host.exec("ip", "-o", "link", "show", C_IF).contains(",UP"));
            assertThat(bed.dataplane.errors()).isEmpty();
            // (the kernel flushed c's route while it was down, and c's ARP for its gateway failed meanwhile:
            // wait until c reaches the host again, which the policy allows both ways)
            Await.until("c routed again", Duration.ofSeconds(10),
                    () -> bed.host.exec("ip", "route", "show", C_IP).contains(C_IF));
            // (c's packets to the host itself are dropped: defaultEndpointToHostAction Drop, felix's default)
            Await.until("c reaches b again", Duration.ofSeconds(10),
                    () -> c.tcpConnects(B_IP, 8080, Duration.ofSeconds(1)));
            assertThat(c.tcpConnects(B_IP, 8080, YES)).as("c attached: policy allows").isTrue();

            // (6) To nftables: no filter and no pin of ours left, nftables enforces the same.
            bed.put(felixConfig(Map.of("bpfEnabled", false, "nftablesMode", "Enabled")));
            assertThat(bed.dataplane.backend()).isEqualTo("nftables");
            assertThat(bed.dataplane.errors()).isEmpty();
            for (String dev : List.of(A_IF, B_IF, C_IF)) {
                assertThat(bed.host.exec("tc", "filter", "show", "dev", dev, "egress")).doesNotContain("calico");
                assertThat(bed.host.exec("tc", "filter", "show", "dev", dev, "ingress")).doesNotContain("calico");
            }
            assertThat(Files.exists(pins)).as("pins removed").isFalse();
            assertThat(a.tcpConnects(B_IP, 9090, YES)).as("nft: allowed").isTrue();
            assertThat(a.tcpConnects(B_IP, 9091, NO)).as("nft: denied").isFalse();

            // (7) And back: the nftables table goes, the programs return.
            bed.put(felixConfig(Map.of("bpfEnabled", true, "bpfAttachType", "TC")));
            assertThat(bed.dataplane.backend()).isEqualTo("bpf");
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(bed.host.exec("nft", "list", "tables")).doesNotContain("calico");
            assertThat(bed.host.exec("tc", "filter", "show", "dev", B_IF, "egress")).contains("calico_to_ep");
            assertThat(a.tcpConnects(B_IP, 9090, YES)).as("bpf again: allowed").isTrue();
            assertThat(a.tcpConnects(B_IP, 9091, NO)).as("bpf again: denied").isFalse();
            assertThat(b.tcpConnects(A_IP, 7070, NO)).as("bpf again: a's ingress").isFalse();
        }
    }

    private static WorkloadEndpoint wep(String name, String ip, String iface, String app) {
        return KernelTestbed.wep(name, ip, iface, app);
    }

    private static Rule deny9091() {
        return Rule.deny().withProtocol(Protocol.TCP).withDestination(EntityRule.empty().withPorts(List.of(Port.of(9091))));
    }

    /** Tier {@code first}'s policy on b's ingress. */
    private static GlobalNetworkPolicy gate(List<Rule> ingress) {
        return new GlobalNetworkPolicy(ObjectMeta.named("first.b-gate"), new GlobalNetworkPolicySpec("first", 1.0,
                ingress, List.of(), "app == 'b'", List.of(PolicyType.Ingress), null, null, null, null, null, null));
    }

    private static List<String> lpmAddresses(PolicyProgram view) {
        return view.map(PolicyMaps.SETS).keys().stream().map(PolicyMaps::decodeLpmKey)
                .map(e -> e.address().getHostAddress() + "/" + e.prefix()).toList();
    }
}
