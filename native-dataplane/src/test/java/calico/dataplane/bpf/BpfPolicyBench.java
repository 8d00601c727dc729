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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-packet cost of the policy program with {@code BPF_PROG_TEST_RUN} (the kernel runs it on one
 * TCP SYN 100,000 times and reports the mean): a conntrack hit, and a table walk of N rules that
 * do not match (each: TCP, a destination port, a source set) before the final deny, for N in
 * 1, 10, 100, 1000; and first the load time (open, verify, create or reuse the pinned maps) of
 * each shipped object, the workload programs' and the host endpoints', median of 5 loads into an
 * empty pin directory. One veth in a namespace of its own (the run needs a real ifindex), pins on a
 * private bpffs. {@code bench/run.sh native-dataplane calico.dataplane.bpf.BpfPolicyBench [repeat]}.
 */
public final class BpfPolicyBench {

    private BpfPolicyBench() {
    }

    public static void main(String[] args) throws Exception {
        int repeat = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        Path fs = Files.createTempDirectory("bpf-bench-fs-");
        BpfFs.ensureMounted(fs);
        try (NetNs ns = NetNs.create("bpf-bench")) {
            ns.exec("ip", "link", "add", "calibench", "type", "veth", "peer", "name", "peer0");
            ns.exec("ip", "link", "set", "calibench", "up");
            int ifindex = Integer.parseInt(ns.exec("cat", "/sys/class/net/calibench/ifindex").strip());
            ns.run(() -> run(fs.resolve("calico"), ifindex, repeat));
        } finally {
            BpfFs.unmount(fs);
            Files.deleteIfExists(fs);
        }
    }

    private static void loadTimes(Path pins) {
        System.out.println("| object | load, median of 5 (ms) |");
        System.out.println("|---|---|");
        for (boolean host : new boolean[] {false, true}) {
            long[] ms = new long[5];
            for (int i = 0; i < ms.length; i++) {
                long t0 = System.nanoTime();
                try (PolicyProgram p = host ? PolicyProgram.loadHost(pins) : PolicyProgram.load(pins)) {
                    ms[i] = (System.nanoTime() - t0) / 1_000_000;
                }
                BpfFs.removePins(pins);
            }
            java.util.Arrays.sort(ms);
            System.out.printf("| %s | %d |%n", host ? "calico_hep.o (host endpoints)" : "calico_tc.o (workloads)",
                    ms[ms.length / 2]);
        }
    }

    private static void run(Path pins, int ifindex, int repeat) {
        loadTimes(pins.resolveSibling("load"));
        try (PolicyProgram prog = PolicyProgram.load(pins)) {
            Inet4Address src = (Inet4Address) InetAddress.getByName("10.88.0.1");
            prog.map(PolicyMaps.SETS).put(PolicyMaps.lpmKey(1, src, 32), new byte[] {1});
            int fd = prog.programFd(Dir.FROM_ENDPOINT);
            System.out.printf("BPF_PROG_TEST_RUN, %,d runs each, one TCP SYN 10.88.0.1:40000 -> 10.88.0.2:8080%n", repeat);
            System.out.println("| path | ns per packet | verdict |");
            System.out.println("|---|---|---|");
            int gen = 1;
            for (int n : new int[] {0, 1, 10, 100, 1000}) {
                List<Rule> t = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    // matches the protocol and the set, misses the port: every test of the rule runs
                    t.add(new Rule(Action.ALLOW, 6, null, null, null, null, null, 0,
                            List.of(new SetRef(1, SetKind.NET, false, false)),
                            List.of(new PortRef(9000 + i, 9000 + i, PortKind.DST))));
                }
                t.add(Rule.always(n == 0 ? Action.ALLOW : Action.DENY, 0));
                for (int i = 0; i < t.size(); i++) {
                    prog.map(PolicyMaps.RULES).put(PolicyMaps.ruleKey(ifindex, Dir.FROM_ENDPOINT, gen, i),
                            PolicyMaps.rule(t.get(i)));
                }
                prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifindex, Dir.FROM_ENDPOINT),
                        PolicyMaps.endpointValue(gen, t.size()));
                gen++;
                BpfMap ct = prog.map(PolicyMaps.CONNTRACK);
                ct.keys().forEach(ct::delete); // the allowed run's flow would skip the walk
                TestRun.run(fd, syn(), ifindex, 1000); // warm
                TestRun.Result r = TestRun.run(fd, syn(), ifindex, repeat);
                String path = n == 0 ? "allowed once, then conntrack hits" : n + " non-matching rules, then deny";
                System.out.printf("| %s | %d | %s |%n", path, r.nanos(), r.verdict() == 0 ? "pass" : "drop");
            }
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Ethernet + IPv4 + TCP SYN, checksums zero (the program does not check them). */
    private static byte[] syn() {
        return PolicyProgramTest.tcp(0x02);
    }
}
