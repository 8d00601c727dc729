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
 * Which table shape the kernel validates faster: each FILE (a ruleset {@code nft list ruleset}
 * printed, all with the same first {@code cali-pi-} chain and set) is loaded into a namespace of its
 * own, and one policy change (as {@link NftNetlinkBench} sends it, as our netlink messages) is
 * committed into each in turn, ROUNDS times, the order rotating each round so every shape sees the
 * same machine. The commit's time is almost all the kernel's validation walk from the base chains.
 * Run: {@code bench/run.sh native-dataplane calico.dataplane.nft.NftShapeBench ROUNDS FILE...}
 */
public final class NftShapeBench {

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        List<Path> files = Arrays.stream(args).skip(1).map(Path::of).toList();
        String first = Files.readString(files.get(0));
        Matcher chain = Pattern.compile("chain (cali-pi-[^ ]+) \\{").matcher(first);
        Matcher set = Pattern.compile("ip saddr @(cali40[A-Za-z0-9_-]+)").matcher(first);
        if (!chain.find() || !set.find()) {
            throw new IllegalArgumentException(files.get(0) + ": no cali-pi- chain or cali40 set in table inet calico");
        }
        String policy = chain.group(1);
        String setName = set.group(1);
        List<NetNs> namespaces = new ArrayList<>();
        List<NamespaceThread> threads = new ArrayList<>();
        List<NftablesSocket> sockets = new ArrayList<>();
        try {
            for (int f = 0; f < files.size(); f++) {
                NetNs ns = NetNs.create("nlshape" + f);
                namespaces.add(ns);
                ns.exec("nft", "-f", files.get(f).toString());
                NamespaceThread t = new NamespaceThread(ns);
                threads.add(t);
                sockets.add(t.call(NftablesSocket::new));
            }
            double[][] ms = new double[files.size()][rounds];
            for (int i = 0; i < rounds; i++) {
                for (int k = 0; k < files.size(); k++) {
                    int f = (i + k) % files.size();
                    List<NftablesSocket.Message> m = NftNetlink.encode(NftNetlinkBench.change(policy, setName, 1000 + i));
                    NftablesSocket socket = sockets.get(f);
                    long t0 = System.nanoTime();
                    threads.get(f).run(() -> socket.commit(m));
                    ms[f][i] = (System.nanoTime() - t0) / 1e6;
                }
            }
            System.out.printf("chain %s rewritten as our netlink messages, %d rounds each, interleaved%n", policy, rounds);
            for (int f = 0; f < files.size(); f++) {
                double[] s = ms[f].clone();
                Arrays.sort(s);
                System.out.printf("%-40s median %6.2f ms  p90 %6.2f  min %6.2f%n", files.get(f).getFileName(),
                        s[s.length / 2], s[(int) (s.length * 0.9)], s[0]);
            }
        } finally {
            for (int f = 0; f < threads.size(); f++) {
                NftablesSocket socket = f < sockets.size() ? sockets.get(f) : null;
                if (socket != null) {
                    threads.get(f).run(socket::close);
                }
                threads.get(f).close();
            }
            for (NetNs ns : namespaces) {
                ns.close();
            }
        }
    }
}
