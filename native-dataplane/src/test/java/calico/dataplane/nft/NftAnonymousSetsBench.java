package calico.dataplane.nft;

import calico.dataplane.testing.NetNs;
import java.util.ArrayList;
import java.util.List;

/**
 * What a table's anonymous sets cost the kernel: {@code N} rules, each matching a port set of its
 * own ({@code th dport { P, 3000-3100 }}, as a policy rule with a port and a range renders), sent
 * as felix's own netlink messages into a fresh namespace, in batches of {@code B} rules, each
 * batch timed. The kernel finds each set among all of the table's sets by scanning them, so
 * later batches cost more than earlier ones of the same size.
 * Run: {@code bench/run.sh native-dataplane calico.dataplane.nft.NftAnonymousSetsBench [N [B]]}
 */
public final class NftAnonymousSetsBench {

    private static final TableRef CALICO = TableRef.inet("calico");

    public static void main(String[] args) {
        int rules = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int perBatch = args.length > 1 ? Integer.parseInt(args[1]) : 2_500;
        try (NetNs ns = NetNs.create("nlanon")) {
            ns.run(() -> {
                try (Nftables nft = Nftables.open(true)) {
                    nft.apply(new NftBatch().addTable(CALICO).addChain(CALICO, "c"));
                    List<Long> millis = new ArrayList<>();
                    for (int done = 0; done < rules; done += perBatch) {
                        NftBatch batch = new NftBatch();
                        for (int i = done; i < Math.min(rules, done + perBatch); i++) {
                            batch.addRule(CALICO, "c", NftNetlinkTest.exprs("""
                                    [{"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":6}},
                                     {"match":{"op":"==","left":{"payload":{"protocol":"th","field":"dport"}},
                                       "right":{"set":[%d,{"range":[3000,3100]}]}}},
                                     {"accept":null}]""".formatted(1 + i % 2_000)), null);
                        }
                        long t0 = System.nanoTime();
                        nft.apply(batch);
                        millis.add((System.nanoTime() - t0) / 1_000_000);
                    }
                    System.out.printf("%,d rules with an anonymous set each, %,d per batch, as our netlink messages "
                            + "(%d of them): %s ms per batch, %,d ms in all%n", rules, perBatch, nft.netlinkBatches(),
                            millis, millis.stream().mapToLong(Long::longValue).sum());
                }
            });
        }
    }
}
