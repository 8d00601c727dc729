package calico.felix.flows;

import calico.api.net.IpAddress;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.FlowLookupType;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Flow logs' lookups at cluster scale: 100,000 remote workloads (/32, 5 labels each), 1,000
 * host endpoints and 10,000 network sets (two CIDRs each, prefix lengths /8 to /30). Prints
 * the retained heap of the lookups alone and the lookup latency for addresses that hit a
 * workload, a network set, or nothing (the slowest case: every prefix length is probed).
 *
 * <p>Run: {@code bench/run.sh felix-service calico.felix.flows.FlowLookupsBench}
 */
public final class FlowLookupsBench {

    private static final int WORKLOADS = 100_000;
    private static final int HOSTS = 1_000;
    private static final int NET_SETS = 10_000;

    public static void main(String[] args) {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        long base = usedAfterGc(mem);
        FlowLookups l = new FlowLookups();
        Random rnd = new Random(6);
        long t0 = System.nanoTime();
        for (int i = 0; i < WORKLOADS; i++) {
            String ip = "10." + (64 + (i >> 16)) + "." + ((i >> 8) & 0xff) + "." + (i & 0xff);
            l.apply(new DataplaneUpdate.FlowLookupUpdate("WorkloadEndpoint/ns-" + (i % 500) + "/node--" + (i % 100)
                    + "-k8s-app--" + i + "-eth0", FlowLookupType.REMOTE_WORKLOAD, "node--" + (i % 100) + "-k8s-app--"
                    + i + "-eth0", "ns-" + (i % 500), "app-" + (i % 2000) + "-", Map.of("app", "app-" + (i % 2000),
                    "tier", "t" + (i % 7), "version", "v" + (i % 3), "team", "team-" + (i % 40), "env", "prod"),
                    List.of(ip + "/32")));
        }
        for (int i = 0; i < HOSTS; i++) {
            l.apply(new DataplaneUpdate.FlowLookupUpdate("HostEndpoint/host-" + i, FlowLookupType.HOST_ENDPOINT,
                    "host-" + i, "", "", Map.of("node", "node-" + i), List.of("192.168." + (i >> 8) + "." + (i & 0xff))));
        }
        for (int i = 0; i < NET_SETS; i++) {
            int len = 8 + rnd.nextInt(23);
            String a = (100 + rnd.nextInt(100)) + "." + rnd.nextInt(256) + "." + rnd.nextInt(256) + ".0/" + len;
            String b = (100 + rnd.nextInt(100)) + "." + rnd.nextInt(256) + "." + rnd.nextInt(256) + ".0/" + len;
            l.apply(new DataplaneUpdate.FlowLookupUpdate("NetworkSet/ns-" + (i % 500) + "/set-" + i,
                    FlowLookupType.NETWORK_SET, "set-" + i, "ns-" + (i % 500), "", Map.of("kind", "ext-" + (i % 20)),
                    List.of(a, b)));
        }
        long loadNs = System.nanoTime() - t0;
        long heap = usedAfterGc(mem) - base;
        System.out.printf("loaded %d lookups in %.0f ms; retained heap %.1f MiB (%.0f bytes per resource)%n",
                l.size(), loadNs / 1e6, heap / (1024.0 * 1024.0), heap / (double) l.size());

        IpAddress[] workload = new IpAddress[10_000];
        IpAddress[] set = new IpAddress[10_000];
        IpAddress[] none = new IpAddress[10_000];
        for (int i = 0; i < workload.length; i++) {
            int w = rnd.nextInt(WORKLOADS);
            workload[i] = IpAddress.parse("10." + (64 + (w >> 16)) + "." + ((w >> 8) & 0xff) + "." + (w & 0xff));
            set[i] = IpAddress.parse((100 + rnd.nextInt(100)) + "." + rnd.nextInt(256) + "." + rnd.nextInt(256) + "."
                    + rnd.nextInt(256));
            none[i] = IpAddress.parse("8." + rnd.nextInt(256) + "." + rnd.nextInt(256) + "." + rnd.nextInt(256));
        }
        measure("workload hit (endpoint map)", () -> hits(l, workload, false));
        measure("network-set probe (endpoints miss, then sets)", () -> hits(l, set, true));
        measure("no match (both probed, every length)", () -> hits(l, none, true));
    }

    private static int hits(FlowLookups l, IpAddress[] ips, boolean sets) {
        int n = 0;
        for (IpAddress ip : ips) {
            if (l.endpoint(ip) != null || sets && l.networkSet(ip) != null) {
                n++;
            }
        }
        return n;
    }

    private static void measure(String what, java.util.function.IntSupplier batch) {
        int rounds = 60;
        long[] ns = new long[rounds];
        int hits = 0;
        for (int r = 0; r < rounds; r++) {
            long t = System.nanoTime();
            hits = batch.getAsInt();
            ns[r] = (System.nanoTime() - t) / 10_000;
        }
        long[] tail = Arrays.copyOfRange(ns, rounds / 2, rounds);
        Arrays.sort(tail);
        System.out.printf("%s: median %d ns per lookup (hits %d of 10,000)%n", what, tail[tail.length / 2], hits);
    }

    private static long usedAfterGc(MemoryMXBean mem) {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return mem.getHeapMemoryUsage().getUsed();
    }
}
