package calico.dataplane.bpf;

import calico.dataplane.bpf.PolicyMaps.Action;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.dataplane.testing.NetNs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Load and attach time for {@value #ENDPOINTS} endpoints: in a namespace of its own, that many
 * veth pairs ({@code cali<n>}, the peer beside it), then the workload object loaded into an empty
 * pin directory, then for each interface its clsact, both programs attached and a two-rule table
 * written per direction (the endpoint is policed from then on). Printed: the load, the attach of
 * all, per endpoint, and the three repeated (median) into a fresh namespace each time.
 * {@code bench/run.sh native-dataplane calico.dataplane.bpf.AttachBench [endpoints]}.
 */
public final class AttachBench {

    static final int ENDPOINTS = 500;
    private static final int ROUNDS = 3;

    private AttachBench() {
    }

    public static void main(String[] args) throws Exception {
        int endpoints = args.length > 0 ? Integer.parseInt(args[0]) : ENDPOINTS;
        System.out.printf("%d endpoints, %d rounds (median), load average %s%n", endpoints, ROUNDS,
                Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        long[] load = new long[ROUNDS];
        long[] attach = new long[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            Path fs = Files.createTempDirectory("bpf-attach-fs-");
            BpfFs.ensureMounted(fs);
            try (NetNs ns = NetNs.create("bpf-att")) {
                Path batch = Files.createTempFile("attach-bench-", ".ip");
                StringBuilder b = new StringBuilder();
                for (int i = 0; i < endpoints; i++) {
                    b.append("link add cali").append(i).append(" type veth peer name peer").append(i).append('\n');
                    b.append("link set cali").append(i).append(" up\n");
                }
                Files.writeString(batch, b.toString());
                ns.exec("ip", "-batch", batch.toString());
                Files.delete(batch);
                int[] ifindex = new int[endpoints];
                for (int i = 0; i < endpoints; i++) {
                    ifindex[i] = Integer.parseInt(ns.exec("cat", "/sys/class/net/cali" + i + "/ifindex").strip());
                }
                int round = r;
                ns.run(() -> {
                    long t0 = System.nanoTime();
                    try (PolicyProgram prog = PolicyProgram.load(fs.resolve("calico"))) {
                        long t1 = System.nanoTime();
                        List<Rule> table = List.of(Rule.always(Action.ALLOW, 0), Rule.always(Action.DENY, 0));
                        for (int i = 0; i < endpoints; i++) {
                            prog.createHooks(ifindex[i], "cali" + i);
                            for (Dir d : Dir.WORKLOAD) {
                                for (int k = 0; k < table.size(); k++) {
                                    prog.map(PolicyMaps.RULES).put(PolicyMaps.ruleKey(ifindex[i], d, 1, k),
                                            PolicyMaps.rule(table.get(k)));
                                }
                                prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifindex[i], d),
                                        PolicyMaps.endpointValue(1, table.size()));
                                prog.attach(ifindex[i], "cali" + i, d);
                            }
                        }
                        long t2 = System.nanoTime();
                        load[round] = (t1 - t0) / 1_000_000;
                        attach[round] = (t2 - t1) / 1_000_000;
                        if (Tc.attachedProgramId(ifindex[endpoints - 1], TcDirection.EGRESS).isEmpty()) {
                            throw new IllegalStateException("the last interface has no program");
                        }
                    }
                });
            } finally {
                BpfFs.unmount(fs);
                Files.deleteIfExists(fs);
            }
            System.out.printf("round %d: load %d ms, %d endpoints attached and tabled in %d ms%n", r + 1, load[r],
                    endpoints, attach[r]);
        }
        java.util.Arrays.sort(load);
        java.util.Arrays.sort(attach);
        long l = load[ROUNDS / 2];
        long a = attach[ROUNDS / 2];
        System.out.printf("| load calico_tc.o | attach %d endpoints (clsact, 2 programs, 2 tables each) | per endpoint | "
                + "load + attach |%n|---|---|---|---|%n| %d ms | %d ms | %.2f ms | %d ms |%n", endpoints, l, a,
                (double) a / endpoints, l + a);
    }
}
