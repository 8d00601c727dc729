package calico.felix.calc;

import static calico.felix.calc.Res.*;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.WorkloadEndpoint;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The calculation graph on a generated cluster seen from one node: 10,000 endpoints on 100
 * nodes, 2,000 policies in 50 tiers, 500 namespaces, 1,000 network sets. Prints the initial
 * computation time and retained heap, and for a label change, a policy change and a burst of
 * 1,000 endpoint adds and deletes: time to the emitted updates and how many there were.
 *
 * <p>Run: {@code bench/run.sh felix-service calico.felix.calc.CalcGraphBench}
 */
public final class CalcGraphBench {

    private static final int NODES = 100;
    private static final int ENDPOINTS = 10_000;
    private static final int NAMESPACES = 500;
    private static final int TIERS = 50;
    private static final int POLICIES = 2_000;
    private static final int NET_SETS = 1_000;
    private static final int APPS = 200;
    private static final String ME = "node-0";

    private static long emitted;

    public static void main(String[] args) {
        Random rnd = new Random(42);
        List<Resource> cluster = generate(rnd);
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        long base = usedAfterGc(mem);

        // Cold: the first graph in a fresh JVM (class loading and JIT included), then dropped.
        long coldNs = initial(CalculationGraph.create(ME, batch -> emitted += batch.size()), cluster);
        emitted = 0;
        base = usedAfterGc(mem);
        CalculationGraph g = CalculationGraph.create(ME, batch -> emitted += batch.size());
        long initialNs = initial(g, cluster);
        long initialUpdates = emitted;
        long heap = usedAfterGc(mem) - base;
        System.out.printf("cluster: %d resources (%d endpoints on %d nodes, %d policies in %d tiers, %d namespaces, %d network sets)%n",
                cluster.size(), ENDPOINTS, NODES, POLICIES, TIERS, NAMESPACES, NET_SETS);
        System.out.printf("initial: cold JVM %.1f ms, warm %.1f ms, %d updates, retained heap %.1f MiB%n",
                coldNs / 1e6, initialNs / 1e6, initialUpdates, heap / (1024.0 * 1024.0));

        // One label change on a remote endpoint, alternating between two apps (warm up, then measure).
        WorkloadEndpoint remote = (WorkloadEndpoint) cluster.stream()
                .filter(r -> r instanceof WorkloadEndpoint w && !ME.equals(w.spec().node())).findFirst().orElseThrow();
        measure("label change (remote endpoint)", 2000, i -> List.of(Update.of(UpdateType.UPDATED,
                remote.withMetadata(remote.metadata().withLabels(Map.of("app", "app-" + (i % 2), "env", "prod"))), 2)), g);
        WorkloadEndpoint local = (WorkloadEndpoint) cluster.stream()
                .filter(r -> r instanceof WorkloadEndpoint w && ME.equals(w.spec().node())).findFirst().orElseThrow();
        measure("label change (local endpoint)", 2000, i -> List.of(Update.of(UpdateType.UPDATED,
                local.withMetadata(local.metadata().withLabels(Map.of("app", "app-" + (i % 2), "env", "prod"))), 2)), g);
        measure("policy change (rule selector)", 500, i -> List.of(Update.of(UpdateType.UPDATED,
                gnp("gp-0", "tier-0", 1.0, "all()", List.of(allowFrom("app == 'app-" + (i % 7) + "'")), List.of()), 2)), g);

        // A burst of 1,000 endpoint adds (10 on this node), then their deletes.
        List<Update> adds = new ArrayList<>();
        List<Update> deletes = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            WorkloadEndpoint w = endpoint(rnd, ENDPOINTS + i);
            adds.add(Update.of(UpdateType.NEW, w, 3));
            deletes.add(Update.deleted(w.key(), 4));
        }
        long before = emitted;
        long t = System.nanoTime();
        g.onUpdates(adds);
        long addNs = System.nanoTime() - t;
        long addUpdates = emitted - before;
        before = emitted;
        t = System.nanoTime();
        g.onUpdates(deletes);
        long delNs = System.nanoTime() - t;
        System.out.printf("burst: 1000 endpoint adds %.1f ms (%d updates), 1000 deletes %.1f ms (%d updates)%n",
                addNs / 1e6, addUpdates, delNs / 1e6, emitted - before);
    }

    /** Feeds the snapshot in syncer-sized batches, then IN_SYNC; returns the elapsed time. */
    private static long initial(CalculationGraph g, List<Resource> cluster) {
        List<List<Update>> batches = new ArrayList<>();
        for (int i = 0; i < cluster.size(); i += 1000) {
            batches.add(cluster.subList(i, Math.min(cluster.size(), i + 1000)).stream()
                    .map(r -> Update.of(UpdateType.NEW, r, 1)).toList());
        }
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        batches.forEach(g::onUpdates);
        g.onStatus(SyncerStatus.IN_SYNC);
        long wall = System.nanoTime() - t0;
        // CPU time of this thread: what the graph costs, without other processes' load.
        System.out.printf("  initial pass: wall %.1f ms, cpu %.1f ms%n", wall / 1e6,
                (threads.getCurrentThreadCpuTime() - cpu0) / 1e6);
        return wall;
    }

    private static void measure(String what, int n, java.util.function.IntFunction<List<Update>> change,
                                CalculationGraph g) {
        long[] ns = new long[n];
        long before = emitted;
        for (int i = 0; i < n; i++) {
            List<Update> u = change.apply(i);
            long t = System.nanoTime();
            g.onUpdates(u);
            ns[i] = System.nanoTime() - t;
        }
        long[] tail = Arrays.copyOfRange(ns, n / 2, n); // second half: warmed up
        Arrays.sort(tail);
        System.out.printf("%s: median %.3f ms, p99 %.3f ms, %.1f updates per change%n", what,
                tail[tail.length / 2] / 1e6, tail[(int) (tail.length * 0.99)] / 1e6, (emitted - before) / (double) n);
    }

    private static long usedAfterGc(MemoryMXBean mem) {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return mem.getHeapMemoryUsage().getUsed();
    }

    private static List<Resource> generate(Random rnd) {
        List<Resource> out = new ArrayList<>();
        for (int t = 0; t < TIERS; t++) {
            out.add(tier("tier-" + t, (double) t, t % 5 == 0 ? Action.Pass : null));
        }
        out.add(tier("default", null, null));
        for (int n = 0; n < NAMESPACES; n++) {
            out.add(nsProfile("ns-" + n, "team", "team-" + (n % 20), "env", n % 2 == 0 ? "prod" : "dev"));
        }
        for (int i = 0; i < ENDPOINTS; i++) {
            out.add(endpoint(rnd, i));
        }
        for (int i = 0; i < NET_SETS; i++) {
            Map<String, String> l = labels("role", "ext-" + (i % 100));
            out.add(i % 2 == 0 ? gns("gns-" + i, l, "172." + (16 + i % 16) + "." + (i / 16 % 256) + ".0/24")
                    : netset("ns-" + (i % NAMESPACES), "ns-set-" + i, l, "100.64." + (i % 256) + ".0/24"));
        }
        for (int p = 0; p < POLICIES; p++) {
            String tier = "tier-" + (p % TIERS);
            String app = "app-" + rnd.nextInt(APPS);
            String peer = "app-" + rnd.nextInt(APPS);
            Rule in = switch (p % 4) {
                case 0 -> allowFrom("app == '" + peer + "'");
                case 1 -> allowFromNs("app == '" + peer + "'", "team == 'team-" + (p % 20) + "'");
                case 2 -> allowFrom("role == 'ext-" + (p % 100) + "'");
                default -> Rule.allow().withProtocol(Protocol.TCP).withSource(EntityRule.empty()
                        .withSelector("app == '" + peer + "'")).withDestination(EntityRule.empty()
                        .withPorts(List.of(Port.named("http"), Port.of(8443))));
            };
            Rule out2 = Rule.allow().withDestination(EntityRule.empty().withSelector("app == '" + peer + "'"));
            if (p % 2 == 0) {
                out.add(gnp("gp-" + p, tier, (double) (p % 40), "app == '" + app + "'", List.of(in), List.of(out2),
                        PolicyType.Ingress, PolicyType.Egress));
            } else {
                out.add(np("ns-" + (p % NAMESPACES), "np-" + p, tier, (double) (p % 40), "app == '" + app + "'",
                        List.of(in), List.of(out2), PolicyType.Ingress, PolicyType.Egress));
            }
        }
        return out;
    }

    private static WorkloadEndpoint endpoint(Random rnd, int i) {
        String ns = "ns-" + (i % NAMESPACES);
        String node = "node-" + (i % NODES);
        String ip = "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255);
        return wep(ns, "ep-" + i, node, ip, labels("app", "app-" + rnd.nextInt(APPS), "env", i % 2 == 0 ? "prod" : "dev"),
                List.of(port("http", 8080)), "kns." + ns);
    }

}
