package calico.dataplane.nft;

import calico.dataplane.testing.NetNs;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Figures for the design doc, in a namespace of its own:
 * a full program (table, chains, rules, a large CIDR set) in one transaction; small
 * incremental set updates; and the cost of naming the bad command in a large failed batch.
 * Run: {@code bench/run.sh native-dataplane calico.dataplane.nft.NftBench}
 */
public final class NftBench {

    private static final TableRef T = TableRef.inet("calico");

    public static void main(String[] args) {
        try (NetNs ns = NetNs.create("calico-bench")) {
            ns.run(NftBench::run);
        }
    }

    private static void run() {
        try (Nftables nft = Nftables.open()) {
            for (int warm = 0; warm < 3; warm++) {
                nft.apply(fullProgram());
                nft.apply(new NftBatch().deleteTable(T));
            }
            NftBatch full = fullProgram();
            long t0 = System.nanoTime();
            nft.apply(full);
            long fullNs = System.nanoTime() - t0;
            System.out.printf("full program: %d commands (100 chains, 1000 rules, 10000 CIDRs) in one transaction: %.1f ms%n",
                    full.size(), fullNs / 1e6);

            nft.apply(new NftBatch().addSet(T, "hosts", SetSpec.of("ipv4_addr")).addElements(T, "hosts",
                    java.util.stream.IntStream.range(0, 10000).mapToObj(NftBench::host).toList()));
            int rounds = 20;
            long[] interval = new long[rounds];
            long[] plain = new long[rounds];
            long[] rule = new long[rounds];
            long[] intervalAdd = new long[rounds];
            for (int i = 0; i < rounds; i++) {
                List<JsonNode> add = new ArrayList<>();
                List<JsonNode> del = new ArrayList<>();
                List<JsonNode> addHosts = new ArrayList<>();
                List<JsonNode> delHosts = new ArrayList<>();
                for (int j = 0; j < 50; j++) {
                    add.add(NftElem.cidr("11." + i + "." + j + ".0/24"));
                    del.add(cidr(i * 50 + j));
                    addHosts.add(NftElem.cidr("11." + i + "." + j + ".1"));
                    delHosts.add(host(i * 50 + j));
                }
                interval[i] = time(nft, new NftBatch().addElements(T, "cidrs", add).deleteElements(T, "cidrs", del));
                plain[i] = time(nft, new NftBatch().addElements(T, "hosts", addHosts).deleteElements(T, "hosts", delHosts));
                intervalAdd[i] = time(nft, new NftBatch().addElements(T, "cidrs", List.of(NftElem.cidr("12." + i + ".0.0/16"))));
                rule[i] = time(nft, new NftBatch().addRule(T, "c" + i, List.of(NftExpr.counter(), NftExpr.accept())));
            }
            report("+50/-50 CIDRs, interval set of 10000", interval);
            report("+50/-50 addresses, plain set of 10000", plain);
            report("add 1 rule", rule);
            report("+1 CIDR, interval set of 10000", intervalAdd);

            long tl = System.nanoTime();
            JsonNode listed = nft.listTable(T);
            System.out.printf("list table (parsed): %.1f ms, %d objects%n", (System.nanoTime() - tl) / 1e6,
                    listed.path("nftables").size());

            NftBatch bad = new NftBatch();
            for (int i = 0; i < 1000; i++) {
                bad.addRule(T, "c" + (i % 100), List.of(NftExpr.counter(), NftExpr.accept()));
            }
            bad.addRule(T, "c0", List.of(NftExpr.jump("missing")));
            long tb = System.nanoTime();
            try {
                nft.apply(bad);
                throw new AssertionError("bad batch accepted");
            } catch (NftablesException e) {
                System.out.printf("failed batch of %d commands, bad command #%d named in %.1f ms (apply + dry-run bisection)%n",
                        bad.size(), e.failedIndex(), (System.nanoTime() - tb) / 1e6);
            }
        }
    }

    private static JsonNode host(int i) {
        return NftElem.cidr("10." + (100 + i / 250) + "." + (i % 250) + ".1");
    }

    private static long time(Nftables nft, NftBatch b) {
        long s = System.nanoTime();
        nft.apply(b);
        return System.nanoTime() - s;
    }

    private static void report(String what, long[] ns) {
        long[] sorted = ns.clone();
        Arrays.sort(sorted);
        System.out.printf("incremental, %s, in a table with 1000 rules: median %.1f ms, max %.1f ms (%d batches)%n",
                what, sorted[sorted.length / 2] / 1e6, sorted[sorted.length - 1] / 1e6, sorted.length);
    }

    /** The i-th of the full program's 10000 CIDRs. */
    private static JsonNode cidr(int i) {
        return NftElem.cidr("10." + (i / 2500) + "." + ((i % 2500) / 10) + "." + (i % 10) * 8 + "/30");
    }

    private static NftBatch fullProgram() {
        NftBatch b = new NftBatch().addTable(T)
                .addChain(T, "filter-FORWARD", BaseChain.filter("forward", "accept"))
                .addSet(T, "cidrs", SetSpec.cidrs(4));
        for (int c = 0; c < 100; c++) {
            b.addChain(T, "c" + c);
            b.addRule(T, "filter-FORWARD", List.of(NftExpr.iifname("cali" + c), NftExpr.jump("c" + c)));
            for (int r = 0; r < 9; r++) {
                b.addRule(T, "c" + c, List.of(NftExpr.saddrInSet(4, "cidrs"),
                        NftExpr.dportIn("tcp", List.of(PortRange.of(1000 + r))), NftExpr.counter(), NftExpr.accept()));
            }
        }
        List<JsonNode> elems = new ArrayList<>();
        for (int i = 0; i < 10000; i++) {
            elems.add(cidr(i));
        }
        return b.addElements(T, "cidrs", elems);
    }
}
