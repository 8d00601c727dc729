package calico.dataplane.netlink;

import calico.dataplane.testing.NetNs;

/**
 * Route programming rate through one Netlink socket inside a throw-away namespace: N /32
 * device routes added (each acknowledged), one main-table dump, N deletes.
 * Run: {@code bench/run.sh native-dataplane calico.dataplane.netlink.NetlinkBench [N]}.
 */
public final class NetlinkBench {
    private NetlinkBench() {
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        try (NetNs ns = NetNs.create("calico-nlb")) {
            ns.exec("ip", "link", "add", "b0", "type", "veth", "peer", "name", "b1");
            ns.exec("ip", "link", "set", "b0", "up");
            for (int round = 1; round <= 3; round++) {
                int r = round;
                ns.run(() -> {
                    try (Netlink nl = new Netlink()) {
                        int idx = nl.linkIndex("b0");
                        long t0 = System.nanoTime();
                        for (int i = 0; i < n; i++) {
                            nl.addRoute(Route.device(IpPrefix.parse(host(i) + "/32"), idx));
                        }
                        long t1 = System.nanoTime();
                        int listed = nl.routes().size();
                        long t2 = System.nanoTime();
                        for (int i = 0; i < n; i++) {
                            nl.deleteRoute(Route.device(IpPrefix.parse(host(i) + "/32"), idx));
                        }
                        long t3 = System.nanoTime();
                        System.out.printf("round %d: add %d routes %.0f ms (%.1f us/route), dump %d routes %.1f ms, delete %.0f ms%n",
                                r, n, (t1 - t0) / 1e6, (t1 - t0) / 1e3 / n, listed, (t2 - t1) / 1e6, (t3 - t2) / 1e6);
                    }
                });
            }
        }
    }

    private static String host(int i) {
        return "10." + (64 + (i >> 16)) + "." + ((i >> 8) & 0xff) + "." + (i & 0xff);
    }
}
