package calico.dataplane.bpf;

import calico.dataplane.bpf.PolicyMaps.Action;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.PolicyMaps.PortKind;
import calico.dataplane.bpf.PolicyMaps.PortRef;
import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.dataplane.bpf.PolicyMaps.SetKind;
import calico.dataplane.bpf.PolicyMaps.SetRef;
import calico.dataplane.testing.NetNs;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The per-packet cost of policy, BPF against nftables, for the same policy in the same run: a
 * router namespace with workload-like namespaces a (10.89.1.2) and b (10.89.2.2) on veths
 * {@code caliaaaa} / {@code calibbbb}; a sends UDP datagrams to b, each to a new destination port
 * (a new flow: each walks the policy, neither conntrack lets it skip), {@value #PACKETS} per
 * round, and the sender's wall time per packet is the whole path (the veths hand packets over in
 * the sender's softirq). b's ingress policy: N rules that do not match (TCP, a destination port,
 * a source set, as {@code BpfPolicyBench}'s), then allow UDP. Three paths, interleaved, each
 * measured {@value #ROUNDS} times (median): no policy; our tc programs (the table written through
 * {@link PolicyMaps}); an nftables forward chain of the same rules (a set, {@code ct state
 * established,related accept} first, as felix's chains). b's UDP {@code NoPorts} count proves
 * every packet crossed. Then {@code BPF_PROG_TEST_RUN} of b's program over the same table: the
 * program alone. {@code bench/run.sh native-dataplane calico.dataplane.bpf.PacketPathBench [N...]}.
 */
public final class PacketPathBench {

    static final int PACKETS = 20_000;
    static final int ROUNDS = 5;
    private static final String A = "10.89.1.2";
    private static final String B = "10.89.2.2";

    private PacketPathBench() {
    }

    public static void main(String[] args) throws Exception {
        int[] sizes = args.length == 0 ? new int[] {1, 10, 100} : Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
        Path fs = Files.createTempDirectory("bpf-path-fs-");
        BpfFs.ensureMounted(fs);
        try (NetNs router = NetNs.create("bpf-pr"); NetNs a = NetNs.create("bpf-pa"); NetNs b = NetNs.create("bpf-pb")) {
            PolicyProgramTest.wire(router, a, b, "10.89");
            b.exec("sysctl", "-qw", "net.ipv4.icmp_ratelimit=1000"); // b's port unreachables stay few
            a.exec("ping", "-c", "1", "-W", "2", B); // neighbours resolved before timing
            int ifA = Integer.parseInt(router.exec("cat", "/sys/class/net/caliaaaa/ifindex").strip());
            int ifB = Integer.parseInt(router.exec("cat", "/sys/class/net/calibbbb/ifindex").strip());
            System.out.printf("%,d UDP datagrams a -> b per round, each a new flow; median of %d rounds; "
                    + "ns per packet (sender wall time), load average %s%n", PACKETS, ROUNDS,
                    Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
            System.out.println("| rules before the allow | no policy | BPF (tc) | nftables | policy cost BPF / nftables "
                    + "| BPF_PROG_TEST_RUN of b's program |");
            System.out.println("|---|---|---|---|---|---|");
            int[] port = {1};
            for (int n : sizes) {
                long[][] ns = new long[3][ROUNDS];
                for (int r = 0; r < ROUNDS; r++) {
                    ns[0][r] = send(a, b, port);
                    try (PolicyProgram prog = router.call(() -> PolicyProgram.load(fs.resolve("calico")))) {
                        table(prog, router, ifA, ifB, n);
                        ns[1][r] = send(a, b, port);
                    }
                    BpfFs.removePins(fs.resolve("calico"));
                    router.exec("tc", "qdisc", "del", "dev", "caliaaaa", "clsact");
                    router.exec("tc", "qdisc", "del", "dev", "calibbbb", "clsact");
                    Path rules = Files.createTempFile("path-bench-", ".nft");
                    Files.writeString(rules, nftables(n));
                    router.exec("nft", "-f", rules.toString());
                    Files.delete(rules);
                    ns[2][r] = send(a, b, port);
                    router.exec("nft", "delete", "table", "ip", "pathbench");
                }
                long none = median(ns[0]);
                long bpf = median(ns[1]);
                long nft = median(ns[2]);
                String ratio = nft - none > 0 ? String.format("%.2f", (double) (bpf - none) / (nft - none)) : "n/a";
                System.out.printf("| %d | %d | %d | %d | %s | %d |%n", n, none, bpf, nft, ratio, testRun(router, fs, n));
            }
        } finally {
            BpfFs.unmount(fs);
            Files.deleteIfExists(fs);
        }
    }

    /** b's ingress: n non-matching rules then allow UDP; the other directions allow. */
    private static void table(PolicyProgram prog, NetNs router, int ifA, int ifB, int n) throws Exception {
        router.run(() -> {
            for (int ifx : new int[] {ifA, ifB}) {
                prog.createHooks(ifx, "cali");
                for (Dir d : Dir.WORKLOAD) {
                    prog.attach(ifx, "cali", d);
                }
            }
        });
        prog.map(PolicyMaps.SETS).put(PolicyMaps.lpmKey(1, (Inet4Address) InetAddress.getByName(A), 32), new byte[] {1});
        write(prog, ifB, Dir.TO_ENDPOINT, rules(n));
        write(prog, ifB, Dir.FROM_ENDPOINT, List.of(Rule.always(Action.ALLOW, 0)));
        write(prog, ifA, Dir.TO_ENDPOINT, List.of(Rule.always(Action.ALLOW, 0)));
        write(prog, ifA, Dir.FROM_ENDPOINT, List.of(Rule.always(Action.ALLOW, 0)));
    }

    static List<Rule> rules(int n) {
        List<Rule> t = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            t.add(new Rule(Action.ALLOW, 6, null, null, null, null, null, 0,
                    List.of(new SetRef(1, SetKind.NET, false, false)),
                    List.of(new PortRef(9000 + i, 9000 + i, PortKind.DST))));
        }
        t.add(new Rule(Action.ALLOW, 17, null, null, null, null, null, 0, List.of(), List.of()));
        t.add(Rule.always(Action.DENY, 0));
        return t;
    }

    private static void write(PolicyProgram prog, int ifindex, Dir dir, List<Rule> t) {
        for (int i = 0; i < t.size(); i++) {
            prog.map(PolicyMaps.RULES).put(PolicyMaps.ruleKey(ifindex, dir, 1, i), PolicyMaps.rule(t.get(i)));
        }
        prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifindex, dir), PolicyMaps.endpointValue(1, t.size()));
    }

    /** The same policy as an nftables forward chain. */
    static String nftables(int n) {
        StringBuilder s = new StringBuilder("table ip pathbench {\n  set src { type ipv4_addr; flags interval; elements = { "
                + A + " } }\n  chain pbfwd { type filter hook forward priority 0; policy accept;\n"
                + "    ct state established,related accept\n    oifname \"calibbbb\" jump tob\n  }\n  chain tob {\n");
        for (int i = 0; i < n; i++) {
            s.append("    meta l4proto tcp ip saddr @src tcp dport ").append(9000 + i).append(" accept\n");
        }
        return s.append("    meta l4proto udp accept\n    drop\n  }\n}\n").toString();
    }

    /** {@return ns per packet} of {@value #PACKETS} datagrams a → b, each to the next port (wrapping below 65,536). */
    private static long send(NetNs a, NetNs b, int[] port) throws Exception {
        long before = noPorts(b);
        long ns = a.call(() -> {
            try (DatagramChannel ch = DatagramChannel.open()) {
                ch.bind(new InetSocketAddress(InetAddress.getByName(A), 0));
                ByteBuffer payload = ByteBuffer.allocate(16);
                InetAddress to = InetAddress.getByName(B);
                long t0 = System.nanoTime();
                for (int i = 0; i < PACKETS; i++) {
                    port[0] = port[0] % 64_000 + 1;
                    payload.clear();
                    ch.send(payload, new InetSocketAddress(to, 1024 + port[0]));
                }
                return (System.nanoTime() - t0) / PACKETS;
            }
        });
        long crossed = noPorts(b) - before;
        if (crossed < PACKETS * 99L / 100) {
            throw new IllegalStateException("only " + crossed + " of " + PACKETS + " datagrams reached b");
        }
        return ns;
    }

    /** b's UDP datagrams to a port nobody listens on (/proc/net/snmp {@code Udp: NoPorts}). */
    private static long noPorts(NetNs b) {
        String[] lines = b.exec("cat", "/proc/net/snmp").lines().filter(l -> l.startsWith("Udp:")).toArray(String[]::new);
        List<String> names = List.of(lines[0].split("\\s+"));
        return Long.parseLong(lines[1].split("\\s+")[names.indexOf("NoPorts")]);
    }

    /**
     * {@return ns per run} of b's program over the table of {@code n} rules, on a TCP SYN
     * from a member of the set (as {@code BpfPolicyBench}): it walks the n rules, misses the UDP
     * allow and is denied, so no conntrack entry lets the next run skip the walk (n + 2 rules).
     */
    private static long testRun(NetNs router, Path fs, int n) throws Exception {
        try (PolicyProgram prog = router.call(() -> PolicyProgram.load(fs.resolve("calico")))) {
            int ifB = Integer.parseInt(router.exec("cat", "/sys/class/net/calibbbb/ifindex").strip());
            // The same table as the other direction's: a test run has no ingress interface, which the
            // program towards the workload takes for the host's own traffic (not policed).
            write(prog, ifB, Dir.FROM_ENDPOINT, rules(n));
            prog.map(PolicyMaps.SETS).put(PolicyMaps.lpmKey(1, (Inet4Address) InetAddress.getByName("10.88.0.1"), 32),
                    new byte[] {1});
            byte[] syn = PolicyProgramTest.tcp(0x02);
            TestRun.run(prog.programFd(Dir.FROM_ENDPOINT), syn, ifB, 1000);
            TestRun.Result r = TestRun.run(prog.programFd(Dir.FROM_ENDPOINT), syn, ifB, 100_000);
            if (r.verdict() != 2) {
                throw new IllegalStateException("the SYN was not denied at the table's end: verdict " + r.verdict());
            }
            return r.nanos();
        } finally {
            BpfFs.removePins(fs.resolve("calico"));
        }
    }

    private static long median(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
