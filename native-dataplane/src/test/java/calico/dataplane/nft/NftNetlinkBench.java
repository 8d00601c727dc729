package calico.dataplane.nft;

import calico.dataplane.netlink.NftablesSocket;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where one policy change's time goes, on a ruleset of the scale's shape (a file {@code nft list
 * ruleset} printed, e.g. {@code NFT_BENCH_KEEP} of felix's {@code NftablesDataplaneBench}): the
 * first {@code cali-pi-} chain of {@code table inet calico} is rewritten (flush, two rules with a
 * new port, as the policy-rules path sends) 50 times each way, interleaved so both see the same
 * machine: through libnftables (nft syntax), as our netlink messages, and as our messages into
 * copies of the table with only some base chains (KEPT, default {@code filter-FORWARD}; and the
 * chains EMPTIED flushed: a shape with fewer paths) and with none (where the kernel has nothing
 * to validate at commit).
 * Run: {@code bench/run.sh native-dataplane calico.dataplane.nft.NftNetlinkBench FILE [ROUNDS [KEPT,... [EMPTIED,...]]]}
 */
public final class NftNetlinkBench {

    private static final TableRef CALICO = TableRef.inet("calico");

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        List<String> kept = List.of((args.length > 2 ? args[2] : "filter-FORWARD").split(","));
        List<String> emptied = args.length > 3 ? List.of(args[3].split(",")) : List.of();
        String ruleset = Files.readString(file);
        Matcher chain = Pattern.compile("chain (cali-pi-[^ ]+) \\{").matcher(ruleset);
        Matcher set = Pattern.compile("ip saddr @(cali40[A-Za-z0-9_-]+)").matcher(ruleset);
        if (!chain.find() || !set.find()) {
            throw new IllegalArgumentException(file + ": no cali-pi- chain or cali40 set in table inet calico");
        }
        String policy = chain.group(1);
        String setName = set.group(1);
        List<String> baseChains = new ArrayList<>();
        Matcher base = Pattern.compile("chain ([^ ]+) \\{\\n\\s+type ").matcher(ruleset);
        while (base.find()) {
            baseChains.add(base.group(1));
        }
        try (NetNs full = NetNs.create("nlbench"); NetNs bare = NetNs.create("nlbare"); NetNs fwd = NetNs.create("nlfwd");
                NamespaceThread inFull = new NamespaceThread(full); NamespaceThread inBare = new NamespaceThread(bare);
                NamespaceThread inFwd = new NamespaceThread(fwd)) {
            full.exec("nft", "-f", file.toString());
            bare.exec("nft", "-f", file.toString());
            fwd.exec("nft", "-f", file.toString());
            strip(inBare, baseChains);
            strip(inFwd, baseChains.stream().filter(c -> !kept.contains(c)).toList());
            NftBatch empty = new NftBatch();
            emptied.forEach(c -> empty.flushChain(CALICO, c));
            inFwd.run(() -> {
                try (Nftables n = Nftables.open()) {
                    n.apply(empty);
                }
            });
            Nftables lib = inFull.call(Nftables::open);
            NftablesSocket fullSocket = inFull.call(NftablesSocket::new);
            NftablesSocket bareSocket = inBare.call(NftablesSocket::new);
            NftablesSocket fwdSocket = inFwd.call(NftablesSocket::new);
            double[] forwardOnly = new double[rounds];
            double[] viaLib = new double[rounds];
            double[] viaNetlink = new double[rounds];
            double[] noValidation = new double[rounds];
            double[] encode = new double[rounds];
            for (int i = 0; i < rounds; i++) {
                NftBatch b = change(policy, setName, 1000 + i);
                long t0 = System.nanoTime();
                inFull.run(() -> lib.apply(b));
                viaLib[i] = ms(t0);
                NftBatch b2 = change(policy, setName, 3000 + i);
                long t1 = System.nanoTime();
                List<NftablesSocket.Message> m = NftNetlink.encode(b2);
                encode[i] = ms(t1);
                inFull.run(() -> fullSocket.commit(m));
                viaNetlink[i] = ms(t1);
                long t2 = System.nanoTime();
                inBare.run(() -> bareSocket.commit(m));
                noValidation[i] = ms(t2);
                long t3 = System.nanoTime();
                inFwd.run(() -> fwdSocket.commit(m));
                forwardOnly[i] = ms(t3);
            }
            String listed = full.exec("nft", "list", "chain", "inet", "calico", policy);
            if (!listed.contains("dport " + (3000 + rounds - 1))) {
                throw new IllegalStateException("the last change is not in the kernel: " + listed);
            }
            inFull.run(() -> {
                lib.close();
                fullSocket.close();
            });
            inBare.run(bareSocket::close);
            inFwd.run(fwdSocket::close);
            System.out.printf("ruleset %s (%d KiB, %d base chains); chain %s rewritten, %d rounds each%n", file,
                    Files.size(file) / 1024, baseChains.size(), policy, rounds);
            print("libnftables (parse, cache, kernel)", viaLib);
            print("our netlink: encode + kernel", viaNetlink);
            print("  of which encoding in Java", encode);
            print("our netlink, base chains " + String.join(",", kept) + " only"
                    + (emptied.isEmpty() ? "" : ", emptied " + String.join(",", emptied)), forwardOnly);
            print("our netlink, table without base chains", noValidation);
        }
    }

    /** Removes {@code chains} (base chains: nothing jumps to them) from table inet calico in the thread's namespace. */
    private static void strip(NamespaceThread thread, List<String> chains) {
        NftBatch strip = new NftBatch();
        chains.forEach(c -> strip.flushChain(CALICO, c).deleteChain(CALICO, c));
        thread.run(() -> {
            try (Nftables n = Nftables.open()) {
                n.apply(strip);
            }
        });
    }

    /** A policy chain's rewrite as the driver's policy-rules path sends it. */
    static NftBatch change(String chain, String set, int port) {
        return new NftBatch().flushChain(CALICO, chain)
                .addRule(CALICO, chain, NftNetlinkTest.exprs("""
                        [{"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":6}},
                         {"match":{"op":"==","left":{"payload":{"protocol":"ip","field":"saddr"}},"right":"@%s"}},
                         {"match":{"op":"==","left":{"payload":{"protocol":"th","field":"dport"}},"right":%d}},
                         {"mangle":{"key":{"meta":{"key":"mark"}},"value":{"|":[{"meta":{"key":"mark"}},65536]}}}]"""
                        .formatted(set, port)), null)
                .addRule(CALICO, chain, NftNetlinkTest.exprs("""
                        [{"match":{"op":"==","left":{"&":[{"meta":{"key":"mark"}},65536]},"right":65536}},{"return":null}]"""),
                        null);
    }

    private static void print(String what, double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        System.out.printf("%-42s median %6.2f ms  p90 %6.2f  min %6.2f  max %6.2f%n", what, s[s.length / 2],
                s[(int) (s.length * 0.9)], s[0], s[s.length - 1]);
    }

    private static double ms(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }
}
