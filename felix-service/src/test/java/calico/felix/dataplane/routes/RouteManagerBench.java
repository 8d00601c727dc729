package calico.felix.dataplane.routes;

import calico.dataplane.netlink.Sysctls;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Route manager cost in a scratch namespace: N veth pairs (host sides {@code cali…}), one batch
 * of N endpoints (cold: link up, sysctls, routes), a no-op resync, and one endpoint IP change.
 * Usage: {@code bench/run.sh felix-service calico.felix.dataplane.routes.RouteManagerBench [N]}.
 */
public final class RouteManagerBench {

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        try (NetNs host = NetNs.create("rtbench")) {
            Path script = Files.createTempFile("veths", ".ip");
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < n; i++) {
                s.append("link add ").append(iface(i)).append(" type veth peer name w").append(i).append('\n');
            }
            Files.writeString(script, s);
            host.exec("ip", "-batch", script.toString());
            Files.delete(script);
            List<DataplaneUpdate> batch = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                batch.add(endpoint(i, ip(i)));
            }
            try (NetlinkThread t = new NetlinkThread(host)) {
                RouteManager m = new RouteManager(t.netlink(), new Sysctls());
                for (int round = 0; round < 3; round++) {
                    long t0 = System.nanoTime();
                    RouteManager.Stats cold = t.call(() -> m.apply(batch));
                    long t1 = System.nanoTime();
                    RouteManager.Stats idle = t.call(m::resync);
                    long t2 = System.nanoTime();
                    t.call(() -> m.apply(List.of(endpoint(0, "10.66.255.1"))));
                    long t3 = System.nanoTime();
                    t.call(() -> m.apply(List.of(endpoint(0, ip(0)))));
                    System.out.printf("n=%d round %d: cold apply %.1f ms (%d routes, %d ifaces), no-op resync %.1f ms "
                                    + "(%d changes), one IP change %.2f ms%n", n, round, (t1 - t0) / 1e6,
                            cold.routesAdded(), cold.interfacesConfigured(), (t2 - t1) / 1e6,
                            idle.routesAdded() + idle.routesDeleted(), (t3 - t2) / 1e6);
                    // Forget everything for the next cold round.
                    List<DataplaneUpdate> removes = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        removes.add(new DataplaneUpdate.WorkloadEndpointRemove("bench/w" + i));
                    }
                    t.call(() -> m.apply(removes));
                }
            }
        }
    }

    private static String iface(int i) {
        return "calibench" + i;
    }

    private static String ip(int i) {
        return "10.66." + (i / 250) + "." + (i % 250 + 1);
    }

    private static DataplaneUpdate endpoint(int i, String ip) {
        return new DataplaneUpdate.WorkloadEndpointUpdate("bench/w" + i, iface(i), null, List.of(ip + "/32"),
                List.of(), List.of(), List.of(), List.of());
    }
}
