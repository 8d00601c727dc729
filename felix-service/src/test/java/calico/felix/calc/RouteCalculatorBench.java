package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.node;
import static calico.felix.calc.InfraFixtures.pool;
import static calico.felix.calc.InfraFixtures.set;
import static calico.felix.calc.InfraFixtures.wep;

import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.List;

/**
 * Figures for RouteCalculator: snapshot ingest, then the incremental cases that fan out
 * (a node's address change re-routes its endpoints; a pool change re-annotates its range).
 * Run: {@code bench/run.sh felix-service calico.felix.calc.RouteCalculatorBench}
 */
public final class RouteCalculatorBench {

    public static void main(String[] args) {
        int nodes = 200;
        int perNode = 100; // 20,000 endpoints
        for (int round = 0; round < 5; round++) {
            run(nodes, perNode, round == 4);
        }
    }

    private static void run(int nodes, int perNode, boolean print) {
        Dispatcher d = new Dispatcher();
        int[] emitted = {0};
        new RouteCalculator("node-0", u -> emitted[0]++).registerWith(d);
        List<Update> snapshot = new ArrayList<>();
        for (int p = 0; p < 16; p++) {
            snapshot.add(set(pool("pool-" + p, "10." + p + ".0.0/16", p % 2 == 0)));
        }
        for (int n = 0; n < nodes; n++) {
            snapshot.add(set(node("node-" + n, "192.168." + (n / 250) + "." + (n % 250 + 1) + "/16", null)));
            for (int e = 0; e < perNode; e++) {
                int i = n * perNode + e;
                snapshot.add(set(wep("ns", "w" + i, "node-" + n, "cali" + i,
                        "10." + (i % 16) + "." + (i / 4096) + "." + (i / 16 % 256) + "/32")));
            }
        }
        long t0 = System.nanoTime();
        d.onUpdates(snapshot);
        long ingest = System.nanoTime() - t0;

        int changes = 200;
        t0 = System.nanoTime();
        for (int c = 0; c < changes; c++) {
            int n = c % nodes;
            d.onUpdates(List.of(set(node("node-" + n, "172.16." + (c % 250) + "." + (n % 250 + 1) + "/16", null))));
        }
        long nodeChange = (System.nanoTime() - t0) / changes;

        t0 = System.nanoTime();
        for (int c = 0; c < changes; c++) {
            int p = c % 16;
            d.onUpdates(List.of(set(pool("pool-" + p, "10." + p + ".0.0/16", c % 3 == 0))));
        }
        long poolChange = (System.nanoTime() - t0) / changes;

        if (print) {
            System.out.printf("endpoints=%d nodes=%d pools=16 routes emitted=%d%n", nodes * perNode, nodes, emitted[0]);
            System.out.printf("snapshot ingest: %.1f ms (%.2f us/update)%n", ingest / 1e6, ingest / 1e3 / snapshot.size());
            System.out.printf("node address change (%d endpoints re-routed): %.1f us each%n", perNode, nodeChange / 1e3);
            System.out.printf("pool change (~%d routes in range): %.1f us each%n", nodes * perNode / 16, poolChange / 1e3);
        }
    }
}
