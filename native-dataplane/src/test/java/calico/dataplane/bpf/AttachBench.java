package calico.dataplane.bpf;

import calico.dataplane.bpf.PolicyMaps.Action;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.dataplane.testing.NetNs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Load and attach time for {@value #ENDPOINTS} endpoints, with tcx (pinned links, felix's default
 * where the kernel has it) and with tc (clsact and a filter), in the same run: in a namespace of
 * its own, that many veth pairs ({@code cali<n>}, the peer beside it), then the workload object
 * loaded into an empty pin directory, then for each interface (tc: its clsact,) both programs
 * attached and a two-rule table written per direction (the endpoint is policed from then on).
 * Printed: the load, the attach of all, per endpoint, each mode's three rounds (median), the modes
 * alternating, a fresh namespace and pin directory each time.
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
        java.util.Map<Boolean, long[][]> figures = new java.util.LinkedHashMap<>();
        boolean tcxHere = Tcx.available();
        List<Boolean> modes = tcxHere ? List.of(true, false) : List.of(false);
        for (boolean tcx : modes) {
            figures.put(tcx, new long[2][ROUNDS]);
        }
        for (int r = 0; r < ROUNDS; r++) {
            for (boolean tcx : modes) {
                long[] got = round(endpoints, tcx);
                figures.get(tcx)[0][r] = got[0];
                figures.get(tcx)[1][r] = got[1];
                System.out.printf("round %d, %s: load %d ms, %d endpoints attached and tabled in %d ms%n", r + 1,
                        tcx ? "tcx" : "tc", got[0], endpoints, got[1]);
            }
        }
        System.out.printf("| mode | load calico_tc.o | attach %d endpoints (2 programs, 2 tables each) | per endpoint | "
                + "load + attach |%n|---|---|---|---|---|%n", endpoints);
        figures.forEach((tcx, f) -> {
            java.util.Arrays.sort(f[0]);
            java.util.Arrays.sort(f[1]);
            long l = f[0][ROUNDS / 2];
            long a = f[1][ROUNDS / 2];
            System.out.printf("| %s | %d ms | %d ms | %.2f ms | %d ms |%n", tcx ? "tcx (pinned links)"
                    : "tc (clsact + filter)", l, a, (double) a / endpoints, l + a);
        });
    }

    /** {@return one round's load and attach milliseconds}, in a fresh namespace and pin directory */
    private static long[] round(int endpoints, boolean tcx) throws Exception {
        long[] out = new long[2];
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
            ns.run(() -> {
                long t0 = System.nanoTime();
                Path pins = fs.resolve("calico");
                try (PolicyProgram prog = PolicyProgram.load(pins); TcxLinks links = new TcxLinks()) {
                    long t1 = System.nanoTime();
                    List<Rule> table = List.of(Rule.always(Action.ALLOW, 0), Rule.always(Action.DENY, 0));
                    for (int i = 0; i < endpoints; i++) {
                        if (!tcx) {
                            prog.createHooks(ifindex[i], "cali" + i);
                        }
                        for (Dir d : Dir.WORKLOAD) {
                            for (int k = 0; k < table.size(); k++) {
                                prog.map(PolicyMaps.RULES).put(PolicyMaps.ruleKey(ifindex[i], d, 1, k),
                                        PolicyMaps.rule(table.get(k)));
                            }
                            prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifindex[i], d),
                                    PolicyMaps.endpointValue(1, table.size()));
                            if (tcx) {
                                prog.attachTcx(ifindex[i], "cali" + i, d, links);
                            } else {
                                prog.attach(ifindex[i], "cali" + i, d);
                            }
                        }
                    }
                    long t2 = System.nanoTime();
                    out[0] = (t1 - t0) / 1_000_000;
                    out[1] = (t2 - t1) / 1_000_000;
                    String last = "cali" + (endpoints - 1);
                    int lastIndex = ifindex[endpoints - 1];
                    if ((tcx ? Tcx.attachedProgramId(PolicyProgram.linkPin(pins, last, TcDirection.EGRESS), lastIndex)
                            : Tc.attachedProgramId(lastIndex, TcDirection.EGRESS)).isEmpty()) {
                        throw new IllegalStateException("the last interface has no program");
                    }
                }
            });
        } finally {
            BpfFs.unmount(fs); // the links' pins go with the mount; the links with the namespace's interfaces
            Files.deleteIfExists(fs);
        }
        return out;
    }
}
