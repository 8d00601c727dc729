package calico.dataplane.bpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.bpf.PolicyMaps.Action;
import calico.dataplane.bpf.PolicyMaps.CtState;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.PolicyMaps.PortKind;
import calico.dataplane.bpf.PolicyMaps.PortRef;
import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.dataplane.bpf.PolicyMaps.SetKind;
import calico.dataplane.bpf.PolicyMaps.SetRef;
import calico.dataplane.testing.NetNs;
import calico.dataplane.testing.PrivateBpfFs;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The shipped policy programs in the kernel, with rule tables written by hand through
 * {@link PolicyMaps} (felix's compiler is tested in felix-service): a router namespace with two
 * workload-like namespaces on {@code cali…} veths, a private bpffs for the pins. Real TCP decides.
 */
class PolicyProgramTest {

    private static final String A = "10.77.1.2";
    private static final String B = "10.77.2.2";
    private static final Duration YES = Duration.ofSeconds(2);
    private static final Duration NO = Duration.ofMillis(300);
    /**
     * An IPv6 connect just after the test flushed the neighbour caches: neighbour discovery (1 s
     * between solicitations) and a SYN retransmit (1 s) can come before the answer; with 2 s it
     * failed 2 runs in 4 on a quiet machine, with 3 s 0 in 10.
     */
    private static final Duration YES6 = Duration.ofSeconds(5);

    private NetNs router;
    private NetNs a;
    private NetNs b;
    private PrivateBpfFs fs;
    private Path bpffs;

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue(NetNs.available(), "needs root for namespaces");
        fs = PrivateBpfFs.mount();
        bpffs = fs.path();
        router = NetNs.create("bpf-r");
        a = NetNs.create("bpf-a");
        b = NetNs.create("bpf-b");
        wire(router, a, b, "10.77");
    }

    /**
     * a and b behind {@code router} on veths {@code caliaaaa} and {@code calibbbb}: a is
     * {@code net}.1.2, b {@code net}.2.2, the router .1 of each /24 and their default route.
     */
    static void wire(NetNs router, NetNs a, NetNs b, String net) {
        router.veth("caliaaaa", a, "eth0");
        router.veth("calibbbb", b, "eth0");
        router.exec("ip", "addr", "add", net + ".1.1/24", "dev", "caliaaaa");
        router.exec("ip", "addr", "add", net + ".2.1/24", "dev", "calibbbb");
        router.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        a.exec("ip", "addr", "add", net + ".1.2/24", "dev", "eth0");
        b.exec("ip", "addr", "add", net + ".2.2/24", "dev", "eth0");
        a.exec("ip", "route", "add", "default", "via", net + ".1.1");
        b.exec("ip", "route", "add", "default", "via", net + ".2.1");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (NetNs n : new NetNs[] {a, b, router}) {
            if (n != null) {
                n.close();
            }
        }
        if (fs != null) {
            fs.close();
        }
    }

    @Test
    void rulesSetsAndConntrackDecideRealPackets() throws Exception {
        Path pins = bpffs.resolve("calico");
        try (PolicyProgram prog = router.call(() -> PolicyProgram.load(pins));
             NetNs.Listener b8080 = b.tcpListener(B, 8080);
             NetNs.Listener b9090 = b.tcpListener(B, 9090);
             NetNs.Listener a7070 = a.tcpListener(A, 7070)) {
            int ifA = ifindex("caliaaaa");
            int ifB = ifindex("calibbbb");
            assertThat(Files.list(pins).map(p -> p.getFileName().toString()).sorted().toList())
                    .as("every map pinned by name").isEqualTo(PolicyMaps.ALL.stream().sorted().toList());

            // Attached with no table: fail closed.
            router.run(() -> {
                prog.createHooks(ifB, "calibbbb");
                prog.createHooks(ifA, "caliaaaa");
                prog.createHooks(ifA, "caliaaaa"); // there already: fine
                for (Dir d : Dir.WORKLOAD) {
                    prog.attach(ifB, "calibbbb", d);
                    prog.attach(ifA, "caliaaaa", d);
                }
            });
            assertThat(router.call(() -> Tc.attachedProgramId(ifB, TcDirection.EGRESS))).isNotEmpty();
            assertThat(a.tcpConnects(B, 8080, NO)).as("no table: dropped").isFalse();

            // b's ingress: TCP to 8080 from set 7 (a's address); the rest denied. a and b's egress: allow all.
            BpfMap sets = prog.map(PolicyMaps.SETS);
            sets.put(PolicyMaps.lpmKey(7, inet(A), 32), new byte[] {1});
            program(prog, ifB, Dir.TO_ENDPOINT, 1, List.of(
                    new Rule(Action.ALLOW, 6, null, null, null, null, null, 0,
                            List.of(new SetRef(7, SetKind.NET, false, false)),
                            List.of(new PortRef(8080, 8080, PortKind.DST))),
                    Rule.always(Action.DENY, 0)));
            for (int ifx : new int[] {ifA, ifB}) {
                program(prog, ifx, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.ALLOW, 0)));
            }
            program(prog, ifA, Dir.TO_ENDPOINT, 1, List.of(Rule.always(Action.DENY, 0)));
            assertThat(a.tcpConnects(B, 8080, YES)).as("allowed port from the set").isTrue();
            assertThat(a.tcpConnects(B, 9090, NO)).as("other port").isFalse();
            assertThat(b.tcpConnects(A, 7070, NO)).as("a's ingress denies new connections").isFalse();

            // The conntrack map holds the approvals of the allowed flow, and nothing of the denied ones.
            List<PolicyMaps.CtEntry> ct = prog.map(PolicyMaps.CONNTRACK).keys().stream().map(PolicyMaps::decodeCtKey)
                    .toList();
            assertThat(ct).anySatisfy(e -> {
                assertThat(e.dstPort()).isEqualTo(8080);
                assertThat(e.ifindex()).isEqualTo(ifB);
                assertThat(e.dir()).isEqualTo(Dir.TO_ENDPOINT);
            });
            assertThat(ct).noneMatch(e -> e.dstPort() == 9090 && e.ifindex() == ifB);

            // A jump (Pass) over the deny: the next generation of b's table lets 9090 in; the old one is replaced whole.
            program(prog, ifB, Dir.TO_ENDPOINT, 2, List.of(
                    new Rule(Action.JUMP, 6, null, null, null, null, null, 2, List.of(),
                            List.of(new PortRef(9000, 9999, PortKind.DST))),
                    Rule.always(Action.DENY, 0),
                    Rule.always(Action.ALLOW, 0)));
            assertThat(a.tcpConnects(B, 9090, YES)).as("jumped over the deny").isTrue();
            assertThat(a.tcpConnects(B, 8080, NO)).as("8080 now hits the deny").isFalse();
            assertThat(PolicyMaps.decodeRule(prog.map(PolicyMaps.RULES).get(PolicyMaps.ruleKey(ifB, Dir.TO_ENDPOINT, 2, 0))))
                    .as("a rule reads back as written").isEqualTo(new Rule(Action.JUMP, 6, null, null, null, null, null,
                            2, List.of(), List.of(new PortRef(9000, 9999, PortKind.DST))));

            // Detached: the interface is plain again.
            router.run(() -> {
                for (Dir d : Dir.WORKLOAD) {
                    assertThat(Tc.detach(ifB, d.hook)).isTrue();
                    assertThat(Tc.detach(ifB, d.hook)).as("already gone").isFalse();
                }
            });
            assertThat(a.tcpConnects(B, 8080, YES)).as("detached b: no policy").isTrue();
        }
        assertThat(Files.exists(pins.resolve(PolicyMaps.RULES))).as("pins outlive the loader").isTrue();
        // An older layout's pin (renamed here into the name the conntrack map had before its value changed).
        Files.move(pins.resolve(PolicyMaps.CONNTRACK), pins.resolve("cali_ct"));
        try (PolicyProgram again = PolicyProgram.load(pins)) {
            assertThat(Files.list(pins).map(p -> p.getFileName().toString()).sorted().toList())
                    .as("the stale pin removed, every map pinned").isEqualTo(PolicyMaps.ALL.stream().sorted().toList());
        }
    }

    private static final String A6 = "fd77:1::2";
    private static final String B6 = "fd77:2::2";

    /**
     * IPv6 through the same maps as IPv4: one set holds both families' members (a /128 and a /32),
     * an IPv6 {@code ::/0} never matches IPv4, a rule's family limits it to one (ipVersion), an
     * ICMPv6 type test means ICMPv6; neighbour discovery passes before policy (a's ND to the router
     * under a deny-all egress); conntrack keys IPv6 flows (replies pass a's deny-all ingress) and
     * counts them; flow events carry IPv6 addresses.
     */
    @Test
    void ipv6SetsRulesNeighbourDiscoveryConntrackAndEvents() throws Exception {
        wire6();
        Path pins = bpffs.resolve("calico");
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (PolicyProgram prog = router.call(() -> PolicyProgram.load(pins));
             NetNs.Listener b8080 = b.tcpListener(B6, 8080);
             NetNs.Listener b9090 = b.tcpListener(B6, 9090);
             NetNs.Listener b7070 = b.tcpListener(B6, 7070);
             NetNs.Listener b4v8080 = b.tcpListener(B, 8080);
             NetNs.Listener b4v9090 = b.tcpListener(B, 9090);
             NetNs.Listener b4v7070 = b.tcpListener(B, 7070);
             NetNs.Listener a7070 = a.tcpListener(A6, 7070)) {
            int ifA = ifindex("caliaaaa");
            int ifB = ifindex("calibbbb");
            BpfMap sets = prog.map(PolicyMaps.SETS);
            sets.put(PolicyMaps.lpmKey(7, inet(A), 32), new byte[] {1});
            sets.put(PolicyMaps.lpmKey(7, InetAddress.getByName(A6), 128), new byte[] {1});
            sets.put(PolicyMaps.lpmKey(9, InetAddress.getByName("::"), 0), new byte[] {1});
            prog.map(PolicyMaps.PREFIXES).put(PolicyMaps.prefixKey(1), PolicyMaps.prefixValue("API0|gnp/b"));
            // a's egress denies everything: only neighbour discovery may reach the router.
            program(prog, ifA, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.DENY, 0)));
            program(prog, ifA, Dir.TO_ENDPOINT, 1, List.of(Rule.always(Action.DENY, 0)));
            program(prog, ifB, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.ALLOW, 0)));
            program(prog, ifB, Dir.TO_ENDPOINT, 1, List.of(
                    new Rule(Action.ALLOW, 6, null, null, null, null, null, 0,
                            List.of(new SetRef(7, SetKind.NET, false, false)),
                            List.of(new PortRef(8080, 8080, PortKind.DST))).withHit(1),
                    new Rule(Action.ALLOW, 58, null, 128, null, null, null, 0, List.of(), List.of())
                            .withFamily(PolicyMaps.FAMILY_V6),
                    new Rule(Action.ALLOW, 6, null, null, null, null, null, 0, List.of(),
                            List.of(new PortRef(9090, 9090, PortKind.DST))).withFamily(PolicyMaps.FAMILY_V4),
                    new Rule(Action.ALLOW, 6, null, null, null, null, null, 0,
                            List.of(new SetRef(9, SetKind.NET, false, false)),
                            List.of(new PortRef(7070, 7070, PortKind.DST))),
                    Rule.always(Action.DENY, 0)));
            attachBoth(prog, ifA, ifB);
            router.exec("ip", "-6", "neigh", "flush", "dev", "caliaaaa");
            a.exec("ip", "-6", "neigh", "flush", "dev", "eth0");
            assertThat(a.tcpConnects(B6, 8080, NO)).as("a's egress denies: only ND passed").isFalse();
            await("a's neighbour solicitation reached the router under a deny-all egress", () ->
                    router.exec("ip", "-6", "neigh", "show", "dev", "caliaaaa").contains(A6)
                            && a.exec("ip", "-6", "neigh", "show", "dev", "eth0").contains("lladdr"));

            program(prog, ifA, Dir.FROM_ENDPOINT, 2, List.of(Rule.always(Action.ALLOW, 0)));
            try (FlowEvents events = FlowEvents.open(pins, (e, p) -> seen.add(e.dir() + " " + e.verdict() + " "
                    + e.src().getHostAddress() + "->" + e.dst().getHostAddress() + ":" + e.dstPort() + " " + p))) {
                assertThat(a.tcpConnects(B6, 8080, YES6)).as("v6 member of a two-family set").isTrue();
                await("the v6 flow event", () -> {
                    events.poll(10);
                    return !seen.isEmpty();
                });
                assertThat(seen).containsExactly("TO_ENDPOINT ALLOW " + InetAddress.getByName(A6).getHostAddress()
                        + "->" + InetAddress.getByName(B6).getHostAddress() + ":8080 [API0|gnp/b]");
            }
            assertThat(a.tcpConnects(B, 8080, YES)).as("v4 member of the same set").isTrue();
            assertThat(a.tryExec("ping", "-6", "-c", "1", "-W", "2", B6).status()).as("an ICMPv6 echo request rule")
                    .isZero();
            assertThat(a.pings(B, NO)).as("not ICMP (v4)").isFalse();
            assertThat(a.tcpConnects(B, 9090, YES)).as("an IPv4-only rule: v4").isTrue();
            assertThat(a.tcpConnects(B6, 9090, NO)).as("an IPv4-only rule: not v6").isFalse();
            assertThat(a.tcpConnects(B6, 7070, YES6)).as("::/0 holds v6").isTrue();
            assertThat(a.tcpConnects(B, 7070, NO)).as("::/0 never matches v4").isFalse();
            assertThat(b.tcpConnects(A6, 7070, NO)).as("a's ingress denies new v6 connections").isFalse();
            prog.map(PolicyMaps.CONFIG).put(PolicyMaps.configKey(), PolicyMaps.configValue(PolicyMaps.CFG_REJECT));
            assertThat(refused(a, B6, 9090, 3000)).as("Reject: an ICMPv6 port unreachable from b's ingress").isTrue();
            assertThat(refused(b, A6, 7070, 3000)).as("Reject: into the host from a's ingress").isTrue();
            assertThat(udpWithDestinationOptions(a, B6, 9090)).as("Reject past an extension header")
                    .isEqualTo("refused");
            prog.map(PolicyMaps.CONFIG).put(PolicyMaps.configKey(), PolicyMaps.configValue(0));
            assertThat(udpWithDestinationOptions(a, B6, 9090)).as("Drop: silence").isEqualTo("timeout");

            // The maps read back: both families in one set, and the v6 approval with its counters.
            assertThat(sets.keys().stream().map(PolicyMaps::decodeLpmKey).filter(e -> e.setId() == 7)
                    .map(e -> e.address().getHostAddress() + "/" + e.prefix()))
                    .containsExactlyInAnyOrder(A + "/32", InetAddress.getByName(A6).getHostAddress() + "/128");
            Conntrack ct = new Conntrack(prog.map(PolicyMaps.CONNTRACK));
            await("the v6 connection closed on b's ingress approval", () -> flow(ct, 6, -1, 8080).entrySet().stream()
                    .anyMatch(e -> e.getKey().src() instanceof java.net.Inet6Address && e.getKey().ifindex() == ifB
                            && e.getValue().closed()));
            Map.Entry<PolicyMaps.CtEntry, PolicyMaps.CtValue> v6 = flow(ct, 6, -1, 8080).entrySet().stream()
                    .filter(e -> e.getKey().src() instanceof java.net.Inet6Address && e.getKey().ifindex() == ifB)
                    .findFirst().orElseThrow();
            assertThat(v6.getKey().src()).isEqualTo(InetAddress.getByName(A6));
            assertThat(v6.getKey().dst()).isEqualTo(InetAddress.getByName(B6));
            assertThat(v6.getKey().dir()).isEqualTo(Dir.TO_ENDPOINT);
            assertThat(v6.getValue().packets()).isGreaterThanOrEqualTo(3);
            assertThat(v6.getValue().bytes()).as("IPv6 lengths: 40-byte header and TCP")
                    .isGreaterThanOrEqualTo(3 * 60);
            assertThat(v6.getValue().replyPackets()).isGreaterThanOrEqualTo(2);
            assertThat(flow(ct, 58, -1, -1).keySet()).as("ICMPv6 echo keyed by its identifier, both legs")
                    .isNotEmpty().allMatch(k -> k.src() instanceof java.net.Inet6Address && k.srcPort() == k.dstPort());
        }
    }

    /** IPv6 beside wire()'s IPv4: a fd77:1::2/64, b fd77:2::2/64, the router ::1 of each and their default routes. */
    private void wire6() {
        router.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
        for (NetNs n : new NetNs[] {router, a, b}) {
            n.exec("sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0");
        }
        router.exec("ip", "-6", "addr", "add", "fd77:1::1/64", "dev", "caliaaaa", "nodad");
        router.exec("ip", "-6", "addr", "add", "fd77:2::1/64", "dev", "calibbbb", "nodad");
        a.exec("ip", "-6", "addr", "add", A6 + "/64", "dev", "eth0", "nodad");
        b.exec("ip", "-6", "addr", "add", B6 + "/64", "dev", "eth0", "nodad");
        a.exec("ip", "-6", "route", "add", "default", "via", "fd77:1::1");
        b.exec("ip", "-6", "route", "add", "default", "via", "fd77:2::1");
    }

    /**
     * Conntrack states with real TCP and UDP through the attached programs, read back from the
     * map; then the cleaner, run at times past each state's timeout, removes exactly the entries
     * that expired.
     */
    @Test
    void conntrackFollowsTcpStatesAndTheCleanerRemovesExpiredEntries() throws Exception {
        Path pins = bpffs.resolve("calico");
        try (PolicyProgram prog = router.call(() -> PolicyProgram.load(pins));
             ServerSocket held = b.call(() -> new ServerSocket(8080, 10, inet(B)));
             NetNs.Listener closing = b.tcpListener(B, 8081);
             NetNs.Listener echo = b.udpEcho(B, 5353)) {
            int ifA = ifindex("caliaaaa");
            int ifB = ifindex("calibbbb");
            attachBoth(prog, ifA, ifB);
            for (int ifx : new int[] {ifA, ifB}) {
                program(prog, ifx, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.ALLOW, 0)));
            }
            // b admits TCP 8080-8082 and UDP; a admits nothing (replies only, through conntrack).
            program(prog, ifB, Dir.TO_ENDPOINT, 1, List.of(
                    new Rule(Action.ALLOW, 6, null, null, null, null, null, 0, List.of(),
                            List.of(new PortRef(8080, 8082, PortKind.DST))),
                    new Rule(Action.ALLOW, 17, null, null, null, null, null, 0, List.of(), List.of()),
                    Rule.always(Action.DENY, 0)));
            program(prog, ifA, Dir.TO_ENDPOINT, 1, List.of(Rule.always(Action.DENY, 0)));
            Conntrack ct = new Conntrack(prog.map(PolicyMaps.CONNTRACK));
            int handshake;

            // The handshake's reply moves both approvals (a's egress, b's ingress) from SYN to ESTABLISHED.
            Socket open = a.call(() -> {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(B, 8080), 2000);
                return s;
            });
            try (Socket client = open; Socket server = held.accept()) {
                int port = client.getLocalPort();
                await("both approvals established", () -> states(ct, 6, port, 8080)
                        .equals(List.of(CtState.TCP_ESTABLISHED, CtState.TCP_ESTABLISHED)));
                assertThat(flow(ct, 6, port, 8080).keySet()).extracting(PolicyMaps.CtEntry::ifindex)
                        .containsExactlyInAnyOrder(ifA, ifB);
                assertThat(flow(ct, 6, port, 8080).values()).as("open").noneMatch(PolicyMaps.CtValue::closed);
                client.getOutputStream().write(new byte[100]);
                assertThat(server.getInputStream().readNBytes(100)).hasSize(100);
                server.getOutputStream().write(new byte[50]);
                assertThat(client.getInputStream().readNBytes(50)).hasSize(50);
                handshake = port;
            }
            // Closed both ways: over. Each approval counted the same packets (both legs see each one):
            // SYN, ACK, data, FIN, ACK at least out; SYN-ACK, data, FIN at least back; IP lengths.
            int closedPort = handshake;
            await("a FIN each way, and the last ACK on both legs", () -> {
                List<PolicyMaps.CtValue> legs = List.copyOf(flow(ct, 6, closedPort, 8080).values());
                return legs.size() == 2 && legs.stream().allMatch(PolicyMaps.CtValue::closed)
                        && legs.stream().map(v -> v.withLastSeen(0)).distinct().count() == 1;
            });
            PolicyMaps.CtValue counted = flow(ct, 6, closedPort, 8080).values().iterator().next();
            assertThat(counted.packets()).isGreaterThanOrEqualTo(4);
            assertThat(counted.bytes()).isGreaterThanOrEqualTo(100 + 4 * 40);
            assertThat(counted.replyPackets()).isGreaterThanOrEqualTo(3);
            assertThat(counted.replyBytes()).isGreaterThanOrEqualTo(50 + 3 * 40);
            assertThat(counted.bytes() - 100).as("no payload but the 100 bytes").isLessThan(counted.packets() * 60);
            // A server that closes at once: its FIN (the reverse way) ends the flow.
            Socket finished = a.call(() -> {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(B, 8081), 2000);
                return s;
            });
            int finPort = finished.getLocalPort();
            await("FIN seen", () -> states(ct, 6, finPort, 8081).equals(List.of(CtState.TCP_FIN, CtState.TCP_FIN)));
            assertThat(flow(ct, 6, finPort, 8081).values()).as("half closed: not over")
                    .allMatch(v -> v.fins() == PolicyMaps.CT_FIN_REV && !v.closed());
            finished.close();
            await("closed by the client too", () -> flow(ct, 6, finPort, 8081).values().stream()
                    .allMatch(PolicyMaps.CtValue::closed));
            // No listener: b's kernel answers RST.
            assertThat(a.tcpConnects(B, 8082, NO)).as("refused").isFalse();
            await("RST seen", () -> flow(ct, 6, -1, 8082).size() == 2
                    && flow(ct, 6, -1, 8082).values().stream().allMatch(v -> v.state() == CtState.TCP_RST));
            // b's ingress denies 9090: a's egress approval stays at SYN, b has none.
            assertThat(a.tcpConnects(B, 9090, NO)).isFalse();
            assertThat(flow(ct, 6, -1, 9090).entrySet()).singleElement().satisfies(e -> {
                assertThat(e.getKey().ifindex()).isEqualTo(ifA);
                assertThat(e.getValue().state()).isEqualTo(CtState.TCP_SYN);
            });
            assertThat(a.udpEchoes(B, 5353, YES)).isTrue();
            assertThat(states(ct, 17, -1, 5353)).containsExactly(CtState.UDP, CtState.UDP);

            // A connection still open over the cleaning.
            try (Socket client = a.call(() -> {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(B, 8080), 2000);
                return s;
            }); Socket server = held.accept()) {
                int port = client.getLocalPort();
                await("established", () -> states(ct, 6, port, 8080)
                        .equals(List.of(CtState.TCP_ESTABLISHED, CtState.TCP_ESTABLISHED)));
                long now = System.nanoTime();
                assertThat(ct.clean(now)).as("nothing expired yet").isZero();
                int all = ct.entries().size();
                assertThat(ct.clean(now + Duration.ofSeconds(21).toNanos())).as("SYN after 20 s").isEqualTo(1);
                assertThat(ct.clean(now + Duration.ofSeconds(31).toNanos())).as("FIN after 30 s (2 flows)").isEqualTo(4);
                assertThat(ct.clean(now + Duration.ofSeconds(41).toNanos())).as("RST after 40 s").isEqualTo(2);
                assertThat(ct.clean(now + Duration.ofSeconds(61).toNanos())).as("UDP after 60 s").isEqualTo(2);
                assertThat(ct.entries().values()).as("only the open connection is left")
                        .hasSize(all - 9).allMatch(v -> v.state() == CtState.TCP_ESTABLISHED);
                assertThat(ct.clean(now + Duration.ofSeconds(3601).toNanos())).as("established after an hour")
                        .isEqualTo(2);
                assertThat(ct.entries()).isEmpty();
            }
        }
    }

    /**
     * Flow events: the first packet of each flow walks the tables and its hits (a Pass, then the
     * verdict's rule) reach user space through the ring buffer with their prefixes; the rest of an
     * allowed flow passes through conntrack and logs nothing.
     */
    @Test
    void flowEventsCarryTheHitsOfTheWalk() throws Exception {
        Path pins = bpffs.resolve("calico");
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (PolicyProgram prog = router.call(() -> PolicyProgram.load(pins));
             NetNs.Listener b8080 = b.tcpListener(B, 8080)) {
            int ifA = ifindex("caliaaaa");
            int ifB = ifindex("calibbbb");
            attachBoth(prog, ifA, ifB);
            BpfMap prefixes = prog.map(PolicyMaps.PREFIXES);
            String[] names = {null, "PPE0|gnp/pass", "APE0|gnp/allow", "API0|gnp/b", "DRI"};
            for (int i = 1; i < names.length; i++) {
                prefixes.put(PolicyMaps.prefixKey(i), PolicyMaps.prefixValue(names[i]));
            }
            program(prog, ifA, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.JUMP, 1).withHit(1),
                    Rule.always(Action.ALLOW, 0).withHit(2)));
            program(prog, ifB, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.ALLOW, 0)));
            program(prog, ifA, Dir.TO_ENDPOINT, 1, List.of(Rule.always(Action.DENY, 0)));
            program(prog, ifB, Dir.TO_ENDPOINT, 1, List.of(
                    new Rule(Action.ALLOW, 6, null, null, null, null, null, 0, List.of(),
                            List.of(new PortRef(8080, 8080, PortKind.DST))).withHit(3),
                    Rule.always(Action.DENY, 0).withHit(4)));
            try (FlowEvents events = FlowEvents.open(pins, (e, p) -> seen.add(e.ifindex() + " " + e.dir() + " "
                    + e.verdict() + " " + e.src().getHostAddress() + "->" + e.dst().getHostAddress() + ":" + e.dstPort()
                    + " " + p))) {
                assertThat(a.tcpConnects(B, 8080, YES)).isTrue();
                assertThat(a.tcpConnects(B, 9090, NO)).isFalse();
                await("four events", () -> {
                    events.poll(10);
                    return seen.size() >= 4;
                });
                events.poll(0);
                assertThat(seen).containsExactlyInAnyOrder(
                        ifA + " FROM_ENDPOINT ALLOW " + A + "->" + B + ":8080 [PPE0|gnp/pass, APE0|gnp/allow]",
                        ifB + " TO_ENDPOINT ALLOW " + A + "->" + B + ":8080 [API0|gnp/b]",
                        ifA + " FROM_ENDPOINT ALLOW " + A + "->" + B + ":9090 [PPE0|gnp/pass, APE0|gnp/allow]",
                        ifB + " TO_ENDPOINT DENY " + A + "->" + B + ":9090 [DRI]");
                assertThat(events.unknownIds()).isZero();
            }
        }
    }

    private static Map<PolicyMaps.CtEntry, PolicyMaps.CtValue> flow(Conntrack ct, int proto, int srcPort, int dstPort) {
        Map<PolicyMaps.CtEntry, PolicyMaps.CtValue> out = new LinkedHashMap<>();
        ct.entries().forEach((k, v) -> {
            if (k.proto() == proto && (dstPort < 0 || k.dstPort() == dstPort) && (srcPort < 0 || k.srcPort() == srcPort)) {
                out.put(k, v);
            }
        });
        return out;
    }

    private static List<CtState> states(Conntrack ct, int proto, int srcPort, int dstPort) {
        return flow(ct, proto, srcPort, dstPort).values().stream().map(PolicyMaps.CtValue::state).sorted().toList();
    }

    /** Polls {@code condition} every 10 ms for up to 2 s (packets cross the veths in softirq, after the syscall). */
    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 2 s: " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }

    /**
     * With {@code CALI_CFG_REJECT} a deny answers with an ICMP port unreachable, which the sender's
     * TCP takes as a refusal: on the way to the workload (b's ingress) and on the way from it (a's
     * egress). A Log rule lets the walk go on.
     */
    @Test
    void rejectRefusesBothWaysAndLogGoesOn() throws Exception {
        Path pins = bpffs.resolve("calico");
        try (PolicyProgram prog = router.call(() -> PolicyProgram.load(pins));
             NetNs.Listener b8080 = b.tcpListener(B, 8080);
             NetNs.Listener b9090 = b.tcpListener(B, 9090);
             NetNs.Listener b7070 = b.tcpListener(B, 7070)) {
            int ifA = ifindex("caliaaaa");
            int ifB = ifindex("calibbbb");
            attachBoth(prog, ifA, ifB);
            Rule logAll = Rule.always(Action.LOG, 0);
            // a's egress: 9090 denied; b's ingress: a Log, then 7070 and 9090 allowed, the rest denied.
            program(prog, ifA, Dir.FROM_ENDPOINT, 1, List.of(new Rule(Action.DENY, 6, null, null, null, null, null, 0,
                    List.of(), List.of(new PortRef(9090, 9090, PortKind.DST))), Rule.always(Action.ALLOW, 0)));
            program(prog, ifB, Dir.TO_ENDPOINT, 1, List.of(logAll, new Rule(Action.ALLOW, 6, null, null, null, null,
                    null, 0, List.of(), List.of(new PortRef(7070, 7070, PortKind.DST), new PortRef(9090, 9090,
                    PortKind.DST))), Rule.always(Action.DENY, 0)));
            program(prog, ifB, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.ALLOW, 0)));
            program(prog, ifA, Dir.TO_ENDPOINT, 1, List.of(Rule.always(Action.DENY, 0)));
            assertThat(a.tcpConnects(B, 7070, YES)).as("a Log rule, then the allow").isTrue();
            assertThat(refused(a, B, 8080)).as("Drop: silence").isFalse();

            prog.map(PolicyMaps.CONFIG).put(PolicyMaps.configKey(), PolicyMaps.configValue(PolicyMaps.CFG_REJECT));
            assertThat(refused(a, B, 8080)).as("b's ingress rejects").isTrue();
            assertThat(refused(a, B, 9090)).as("a's egress rejects").isTrue();
            assertThat(a.tcpConnects(B, 7070, YES)).as("allowed still").isTrue();
        }
    }

    /**
     * {@return what a connected UDP socket in {@code from} sees after one datagram to {@code ip:port}
     * carrying a destination options header (an 8-byte PadN)}: {@code refused} (an ICMPv6 port
     * unreachable came back), {@code timeout} (nothing in 2 s) or {@code data}.
     */
    private static String udpWithDestinationOptions(NetNs from, String ip, int port) {
        String script = String.join("\n",
                "import socket",
                "s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)",
                "s.setsockopt(socket.IPPROTO_IPV6, 59, bytes([0, 0, 1, 4, 0, 0, 0, 0]))  # IPV6_DSTOPTS",
                "s.settimeout(2)",
                "s.connect(('" + ip + "', " + port + "))",
                "s.send(b'probe')",
                "try:",
                "    s.recv(16)",
                "    print('data')",
                "except ConnectionRefusedError:",
                "    print('refused')",
                "except socket.timeout:",
                "    print('timeout')");
        return from.exec("python3", "-c", script).strip();
    }

    /** {@return whether a TCP connect from {@code from} is refused within a second} (a dropped SYN times out) */
    private static boolean refused(NetNs from, String ip, int port) {
        return refused(from, ip, port, 1000);
    }

    /** {@return whether a TCP connect from {@code from} is refused within {@code ms}} */
    private static boolean refused(NetNs from, String ip, int port, int ms) {
        return from.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(ip, port), ms);
                return false;
            } catch (java.net.ConnectException e) {
                return true;
            } catch (java.net.SocketTimeoutException e) {
                return false;
            }
        });
    }

    /**
     * {@code cali_ct_timeouts} (felix: {@code bpfConntrackTimeouts}) decides when the program takes
     * an entry as expired, and the cleaner agrees: an established entry idle 10 s lets a mid-flow
     * packet past a deny-all table under the default hour, not under a 5 s timeout. The conntrack
     * map's size ({@code bpfMapSizeConntrack}): a reload of the same size keeps the pinned entries,
     * another size makes the map anew.
     */
    @Test
    void conntrackTimeoutsAndSizeAreConfigurable() throws Exception {
        Path pins = bpffs.resolve("calico");
        int ifA = ifindex("caliaaaa");
        Inet4Address src = (Inet4Address) InetAddress.getByName("10.88.0.1");
        Inet4Address dst = (Inet4Address) InetAddress.getByName("10.88.0.2");
        byte[] key = PolicyMaps.ctKey(src, dst, 40000, 8080, 6, Dir.FROM_ENDPOINT, ifA);
        router.run(() -> {
            try (PolicyProgram prog = PolicyProgram.load(pins, 4096)) {
                program(prog, ifA, Dir.FROM_ENDPOINT, 1, List.of(Rule.always(Action.DENY, 0)));
                BpfMap ct = prog.map(PolicyMaps.CONNTRACK);
                int fd = prog.programFd(Dir.FROM_ENDPOINT);
                long tenSecondsAgo = System.nanoTime() - 10_000_000_000L;
                ct.put(key, PolicyMaps.ctValue(tenSecondsAgo, PolicyMaps.CtState.TCP_ESTABLISHED));
                assertThat(TestRun.run(fd, ack(), ifA, 1).verdict()).as("idle 10 s of an hour: a hit").isZero();
                prog.map(PolicyMaps.CT_TIMEOUTS).put(PolicyMaps.ctTimeoutKey(PolicyMaps.CtState.TCP_ESTABLISHED),
                        PolicyMaps.ctTimeoutValue(Duration.ofSeconds(5)));
                ct.put(key, PolicyMaps.ctValue(tenSecondsAgo, PolicyMaps.CtState.TCP_ESTABLISHED));
                assertThat(TestRun.run(fd, ack(), ifA, 1).verdict()).as("idle 10 s of 5: the deny-all table")
                        .isEqualTo(2 /* TC_ACT_SHOT */);
                Map<PolicyMaps.CtState, Duration> fiveSeconds = Map.of(PolicyMaps.CtState.TCP_ESTABLISHED,
                        Duration.ofSeconds(5));
                assertThat(new Conntrack(ct).clean(System.nanoTime())).as("default timeouts: live").isZero();
                assertThat(new Conntrack(ct).clean(System.nanoTime(), fiveSeconds)).isEqualTo(1);
                ct.put(key, PolicyMaps.ctValue(System.nanoTime(), PolicyMaps.CtState.TCP_ESTABLISHED));
            }
            try (PolicyProgram same = PolicyProgram.load(pins, 4096)) {
                assertThat(same.map(PolicyMaps.CONNTRACK).get(key)).as("same size: the pinned map kept").isNotNull();
            }
            try (PolicyProgram bigger = PolicyProgram.load(pins, 8192)) {
                assertThat(bigger.map(PolicyMaps.CONNTRACK).get(key)).as("another size: a new map").isNull();
            }
        });
    }

    /** A TCP ACK 10.88.0.1:40000 → 10.88.0.2:8080 (mid-flow), as a workload would send it. */
    private static byte[] ack() {
        return tcp(0x10);
    }

    /** {@return a TCP packet 10.88.0.1:40000 → 10.88.0.2:8080 with {@code flags}} (Ethernet, IPv4, no payload) */
    static byte[] tcp(int flags) {
        java.nio.ByteBuffer p = java.nio.ByteBuffer.allocate(14 + 20 + 20);
        p.put(new byte[] {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}).putShort((short) 0x0800);
        p.put((byte) 0x45).put((byte) 0).putShort((short) 40).putShort((short) 0).putShort((short) 0x4000)
                .put((byte) 64).put((byte) 6).putShort((short) 0).put(new byte[] {10, 88, 0, 1})
                .put(new byte[] {10, 88, 0, 2});
        p.putShort((short) 40000).putShort((short) 8080).putInt(1).putInt((flags & 0x10) != 0 ? 1 : 0)
                .put((byte) 0x50).put((byte) flags).putShort((short) 65535).putShort((short) 0).putShort((short) 0);
        return p.array();
    }

    @Test
    void aVerifierRefusalNamesTheProgramAndCarriesTheLog() throws Exception {
        byte[] broken;
        try (InputStream in = getClass().getResourceAsStream("/calico/dataplane/bpf/rejected.o")) {
            assertThat(in).as("rejected.o built by the test clang step").isNotNull();
            broken = in.readAllBytes();
        }
        assertThatThrownBy(() -> PolicyProgram.load(broken, bpffs.resolve("broken")))
                .isInstanceOf(BpfException.class)
                .hasMessageContaining("load refused")
                .hasMessageContaining("program calico_to_ep")
                .hasMessageContaining("invalid access to packet");
    }

    /** Both programs on both interfaces. */
    private void attachBoth(PolicyProgram prog, int... ifindexes) {
        router.run(() -> {
            for (int ifx : ifindexes) {
                prog.createHooks(ifx, "cali");
                for (Dir d : Dir.WORKLOAD) {
                    prog.attach(ifx, "cali", d);
                }
            }
        });
    }

    /** Writes a table under generation {@code gen}, then points the endpoint at it. */
    private static void program(PolicyProgram prog, int ifindex, Dir dir, int gen, List<Rule> rules) {
        BpfMap table = prog.map(PolicyMaps.RULES);
        for (int i = 0; i < rules.size(); i++) {
            table.put(PolicyMaps.ruleKey(ifindex, dir, gen, i), PolicyMaps.rule(rules.get(i)));
        }
        prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifindex, dir), PolicyMaps.endpointValue(gen, rules.size()));
    }

    private int ifindex(String dev) {
        return Integer.parseInt(router.exec("cat", "/sys/class/net/" + dev + "/ifindex").trim());
    }

    private static Inet4Address inet(String ip) throws Exception {
        return (Inet4Address) InetAddress.getByName(ip);
    }

    /**
     * tcx links (kernel 6.6 and later): the shipped programs attached as pinned links decide real
     * packets with no qdisc; a second attach replaces the program in place (still one program on
     * the hook); the pin outlives the loader; detaching takes the link off its hook at once, even
     * while someone else still holds it.
     */
    @Test
    void pinnedLinksPoliceReplaceInPlaceAndDetachWithTheirPin() throws Exception {
        assumeTrue(router.call(Tcx::available), "kernel without tcx");
        Path pins = bpffs.resolve("calico");
        int ifB = ifindex("calibbbb");
        Path egress = PolicyProgram.linkPin(pins, "calibbbb", TcDirection.EGRESS);
        try (NetNs.Listener b8080 = b.tcpListener(B, 8080)) {
            try (PolicyProgram prog = router.call(() -> PolicyProgram.load(pins)); TcxLinks links = new TcxLinks()) {
                router.run(() -> {
                    for (Dir d : Dir.WORKLOAD) {
                        prog.attachTcx(ifB, "calibbbb", d, links);
                    }
                });
                assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.EGRESS))).containsExactly("calico_to_ep");
                assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.INGRESS)))
                        .containsExactly("calico_from_ep");
                assertThat(router.exec("tc", "qdisc", "show", "dev", "calibbbb")).doesNotContain("clsact");
                assertThat(egress).exists();
                assertThat(a.tcpConnects(B, 8080, NO)).as("no table: dropped").isFalse();
                allowAllOn(prog, ifB);
                assertThat(a.tcpConnects(B, 8080, YES)).as("allowed by b's tables").isTrue();
            }
            // The loader is gone; the pinned links keep the programs on the hooks.
            assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.EGRESS))).containsExactly("calico_to_ep");
            List<Integer> before = router.call(() -> Tcx.programIds(ifB, TcDirection.EGRESS));
            try (PolicyProgram again = router.call(() -> PolicyProgram.load(pins)); TcxLinks links = new TcxLinks()) {
                router.run(() -> again.attachTcx(ifB, "calibbbb", Dir.TO_ENDPOINT, links));
                List<Integer> after = router.call(() -> Tcx.programIds(ifB, TcDirection.EGRESS));
                assertThat(after).as("replaced in the link: one program, a new one").hasSize(1)
                        .doesNotContainAnyElementsOf(before);
                assertThat(router.call(() -> Tcx.attachedProgramId(egress, ifB))).hasValue(after.get(0));
                assertThat(a.tcpConnects(B, 8080, YES)).isTrue();
            }
            // A stranger holds the link open (as the kernel's deferred release of an unlinked pin
            // does for a while): detaching must take the program off the hook at once all the same.
            int stranger = BpfCalls.lib().bpf_obj_get(egress.toString());
            assertThat(stranger).isNotNegative();
            try (TcxLinks nobody = new TcxLinks()) {
                assertThat(router.call(() -> nobody.detach(egress))).isTrue();
                assertThat(router.call(() -> Tcx.programIds(ifB, TcDirection.EGRESS))).as("detached at once").isEmpty();
            } finally {
                BpfFs.LibC.INSTANCE.close(stranger);
            }
            assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.INGRESS))).as("the other hook keeps its link")
                    .containsExactly("calico_from_ep");
            assertThat(router.call(() -> Tcx.attachedProgramId(egress, ifB))).isEmpty();
        }
    }

    /**
     * A link held open survives a stranger removing its pin (no moment without the program: the
     * link is never released) and is pinned again as it was; a stranger's {@code BPF_LINK_DETACH}
     * takes it off the hook at once, which the check reports, and attaching again puts a new link
     * there.
     */
    @Test
    void heldLinksOutliveTheirPinAndADetachedOneIsReplaced() throws Exception {
        assumeTrue(router.call(Tcx::available), "kernel without tcx");
        Path pins = bpffs.resolve("calico");
        int ifB = ifindex("calibbbb");
        Path egress = PolicyProgram.linkPin(pins, "calibbbb", TcDirection.EGRESS);
        try (NetNs.Listener b8080 = b.tcpListener(B, 8080);
             PolicyProgram prog = router.call(() -> PolicyProgram.load(pins)); TcxLinks links = new TcxLinks()) {
            router.run(() -> {
                for (Dir d : Dir.WORKLOAD) {
                    prog.attachTcx(ifB, "calibbbb", d, links);
                }
            });
            int linkId = Tcx.pinned(egress).orElseThrow().id();
            assertThat(router.call(() -> links.check(egress, ifB))).isEqualTo(TcxLinks.State.ATTACHED);

            Files.delete(egress); // the stranger
            assertThat(router.call(() -> links.check(egress, ifB))).as("held: still on the hook")
                    .isEqualTo(TcxLinks.State.PIN_MISSING);
            assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.EGRESS))).containsExactly("calico_to_ep");
            assertThat(a.tcpConnects(B, 8080, NO)).as("b's hook still drops (no table)").isFalse();
            links.repin(egress);
            assertThat(Tcx.pinned(egress)).as("the same link, pinned again").map(Tcx.LinkState::id).hasValue(linkId);
            assertThat(router.call(() -> links.check(egress, ifB))).isEqualTo(TcxLinks.State.ATTACHED);

            Tcx.detachLink(egress); // the stranger, with bpftool link detach
            assertThat(router.call(() -> Tcx.programIds(ifB, TcDirection.EGRESS))).as("detached at once").isEmpty();
            assertThat(router.call(() -> links.check(egress, ifB))).isEqualTo(TcxLinks.State.DETACHED);
            allowAllOn(prog, ifB);
            router.run(() -> prog.attachTcx(ifB, "calibbbb", Dir.TO_ENDPOINT, links));
            assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.EGRESS))).containsExactly("calico_to_ep");
            assertThat(Tcx.pinned(egress)).as("a new link").map(Tcx.LinkState::id).isPresent().get()
                    .isNotEqualTo(linkId);
            assertThat(a.tcpConnects(B, 8080, YES)).as("policed by the new link: allowed by b's tables").isTrue();
        }
    }

    /** Gives {@code ifindex} one table each way that allows everything. */
    private static void allowAllOn(PolicyProgram prog, int ifindex) {
        BpfMap rules = prog.map(PolicyMaps.RULES);
        for (Dir d : Dir.WORKLOAD) {
            rules.put(PolicyMaps.ruleKey(ifindex, d, 1, 0), PolicyMaps.rule(Rule.always(Action.ALLOW, 0)));
            prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifindex, d), PolicyMaps.endpointValue(1, 1));
        }
    }
}
