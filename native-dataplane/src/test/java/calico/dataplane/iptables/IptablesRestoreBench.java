package calico.dataplane.iptables;

import calico.dataplane.testing.NetNs;
import java.util.ArrayList;
import java.util.List;

/**
 * Prints how long one restore takes to write N rules (spread over 10 chains) and to rewrite
 * one chain afterwards, per backend, inside a throwaway namespace. Also an ipset replace of N
 * members. Run: {@code bench/run.sh native-dataplane calico.dataplane.iptables.IptablesRestoreBench}
 */
public final class IptablesRestoreBench {

    public static void main(String[] args) {
        int[] sizes = {100, 1000, 10000};
        for (IptablesBackend backend : IptablesBackend.values()) {
            for (int n : sizes) {
                try (NetNs ns = NetNs.create("iptbench")) {
                    IptablesRestore r = new IptablesRestore(backend, XtablesLockSettings.defaults(),
                            List.of("ip", "netns", "exec", ns.name()));
                    RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER);
                    for (int c = 0; c < 10; c++) {
                        tx.declareChain("cali-bench-" + c);
                    }
                    for (int i = 0; i < n; i++) {
                        tx.appendRule("cali-bench-" + (i % 10), Rule.of("-s", "10." + (i / 65536 % 256) + "." + (i / 256 % 256) + "." + (i % 256),
                                "-p", "tcp", "--dport", Integer.toString(1000 + i % 5000), "-j", "ACCEPT").withComment("cali:r" + i));
                    }
                    long t0 = System.nanoTime();
                    r.apply(IpVersion.V4, tx);
                    long full = System.nanoTime() - t0;
                    RestoreTransaction one = RestoreTransaction.forTable(Table.FILTER).flushChain("cali-bench-0")
                            .appendRule("cali-bench-0", Rule.of("-j", "RETURN"));
                    t0 = System.nanoTime();
                    r.apply(IpVersion.V4, one);
                    long update = System.nanoTime() - t0;
                    t0 = System.nanoTime();
                    r.save(IpVersion.V4, Table.FILTER);
                    long save = System.nanoTime() - t0;
                    System.out.printf("%-6s rules=%-6d full restore %7.1f ms   one-chain rewrite %6.1f ms   save %6.1f ms%n",
                            backend, n, full / 1e6, update / 1e6, save / 1e6);
                }
            }
        }
        for (int n : sizes) {
            try (NetNs ns = NetNs.create("ipsbench")) {
                Ipset ipset = new Ipset(List.of("ip", "netns", "exec", ns.name()));
                List<String> members = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    members.add("10." + (i / 65536 % 256) + "." + (i / 256 % 256) + "." + (i % 256));
                }
                long t0 = System.nanoTime();
                ipset.restore(IpsetTransaction.create().replace("cali40bench", IpsetType.HASH_IP, IpsetFamily.INET, 1 << 20, members));
                System.out.printf("ipset  members=%-6d replace (create tmp, fill, swap, destroy) %7.1f ms%n", n, (System.nanoTime() - t0) / 1e6);
            }
        }
    }
}
