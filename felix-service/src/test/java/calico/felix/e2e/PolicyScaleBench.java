package calico.felix.e2e;

import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The scale benchmark: 2,000 policies over 500 local endpoints, programmed by the whole
 * felix application (real etcd, or a real kube-apiserver with the kubernetes datastore;
 * {@code FELIX_*} settings) into a throwaway network namespace.
 *
 * <p>Prints (1) the time from the last datastore write to the kernel in sync, taken from felix's
 * admin API (the finish time of the batch after which felix is quiet with every policy and
 * endpoint active; the kernel dataplane's apply returns only once the restore tools have), (2)
 * the kernel's floor measured in the same run: the final ruleset saved ({@code ipset save},
 * {@code iptables-save}, or {@code nft list table inet calico}) and, once felix has stopped,
 * restored into a fresh namespace from the files, timed, (3) their ratio, and (4) one policy change, write to applied,
 * median and p90 over 50 changes after 20 unmeasured warm-up changes, each checked in the kernel
 * afterwards, and for nftables how many of their transactions went as felix's own netlink messages.
 * {@code NFT_BENCH_KEEP=FILE} keeps the final nftables table.
 *
 * <p>Run: {@code bench/run.sh felix-service calico.felix.e2e.PolicyScaleBench NFT|Legacy|nftables|BPF [--no-cold-start]
 * [--datastores=etcd,kubernetes] [--scale=N]}: one full run per datastore, one after the other, then a table of both
 * (as root). Endpoints have no interfaces: felix's rules do not need them (routes for them are
 * skipped until the interface appears). The eBPF driver's tables are per interface, so with
 * {@code BPF} each local endpoint gets its veth (created before felix starts, its peer beside it);
 * there is no floor (no restore tool loads BPF maps), each change is checked in the pinned
 * rule map once, after the loop, and the cold start's fresh namespace gets its veths too.
 */
public final class PolicyScaleBench {

    static final int TIERS = 5;
    private static final int CHANGES = 50;
    /**
     * Changes made, and checked, before the measured ones: the first edits after the catch-up run
     * on code the JIT has not compiled yet (its compiler threads took ~36 % of the JVM's CPU during
     * the change loop), as a felix that has been up for a while does not.
     */
    private static final int WARM_UP_CHANGES = 20;
    /** nftables floor: loads of the final table timed, the fastest taken. */
    private static final int FLOOR_TRIES = 3;
    private static final String[] ROLES = {"web", "api", "db", "cache"};
    /** Prefix for the bench's namespaces ({@code BENCH_NS_PREFIX}), so parallel runs can be told apart. */
    private static final String NS = System.getenv().getOrDefault("BENCH_NS_PREFIX", "");
    /**
     * felix's log severity ({@code BENCH_FELIX_LOG}; Warning unless set): {@code Debug} prints the
     * nftables driver's timings per apply (render, diff, encoding, the kernel), which cost the
     * catch-up ~0.5 s themselves.
     */
    private static final String FELIX_LOG = System.getenv().getOrDefault("BENCH_FELIX_LOG", "Warning");

    private PolicyScaleBench() {
    }

    /**
     * How much is written: at factor 1, 50 namespaces, 100 apps, 500 local and 1,500 remote
     * endpoints, 1,500 namespaced and 500 global policies; every count grows with the factor, so
     * each endpoint keeps its ~20 policies and each app its 5 local endpoints (the table grows
     * linearly: {@code --scale=5} is 10,000 policies over 2,500 local endpoints).
     */
    record Scale(int factor) {
        Scale {
            if (factor < 1) {
                throw new IllegalArgumentException("--scale must be at least 1, not " + factor);
            }
        }

        int namespaces() {
            return 50 * factor;
        }

        int apps() {
            return 100 * factor;
        }

        int local() {
            return 500 * factor;
        }

        int remote() {
            return 1_500 * factor;
        }

        int namespacedPolicies() {
            return 1_500 * factor;
        }

        int globalPolicies() {
            return 500 * factor;
        }

        int policies() {
            return namespacedPolicies() + globalPolicies();
        }
    }

    public static void main(String[] args) throws Exception {
        Backend backend = switch (args.length == 0 ? "NFT" : args[0].toLowerCase(Locale.ROOT)) {
            case "nft" -> Backend.IPTABLES_NFT;
            case "legacy" -> Backend.IPTABLES_LEGACY;
            case "nftables" -> Backend.NFTABLES;
            case "bpf" -> Backend.BPF;
            default -> throw new IllegalArgumentException("backend: NFT | Legacy | nftables | BPF, not " + args[0]);
        };
        String unavailable = backend.unavailableReason();
        if (unavailable != null) {
            System.out.println("backend " + backend + " unavailable: " + unavailable);
            return;
        }
        List<String> options = List.of(args).subList(Math.min(1, args.length), args.length);
        boolean coldStart = !options.contains("--no-cold-start");
        List<String> datastores = List.of("etcd");
        Scale scale = new Scale(1);
        for (String o : options) {
            if (o.startsWith("--datastores=")) {
                datastores = List.of(o.substring("--datastores=".length()).split(","));
            } else if (o.startsWith("--scale=")) {
                scale = new Scale(Integer.parseInt(o.substring("--scale=".length())));
            } else if (!o.equals("--no-cold-start")) {
                throw new IllegalArgumentException("unknown option " + o
                        + " (--no-cold-start, --datastores=etcd,kubernetes, --scale=N)");
            }
        }
        List<String> summary = new ArrayList<>();
        for (String ds : datastores) {
            try (BenchStore store = BenchStore.start(ds); NetNs host = NetNs.create(NS + "benchh")) {
                Result r = run(backend, store, host, coldStart, scale);
                summary.add(String.format("%-10s %8d ms %8d ms %6.2f %8d ms %8d MiB", ds, r.syncMs(), r.floorMs(),
                        r.floorMs() == 0 ? Double.NaN : (double) r.syncMs() / r.floorMs(), r.changeMedianMs(),
                        r.felixHeapBytes() >> 20));
            }
        }
        System.out.printf("%n%s, same run:%n%-10s %11s %11s %6s %11s %11s%n", backend, "datastore", "last write->sync",
                "floor", "ratio", "one change (median)", "felix heap");
        summary.forEach(System.out::println);
        System.exit(0); // felix's non-daemon threads
    }

    /** What one datastore's run measured. */
    record Result(long syncMs, long floorMs, long changeMedianMs, long felixHeapBytes) {
    }

    /** {@return the heap in use after a full collection} (System.gc() is a full GC with the JVM's defaults). */
    private static long heapAfterGc() {
        java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static Result run(Backend backend, BenchStore bench, NetNs host, boolean coldStart, Scale scale)
            throws Exception {
        System.out.printf("%n== %s on the %s datastore, scale %d: %,d policies over %,d local endpoints%n", backend,
                bench.name(), scale.factor(), scale.policies(), scale.local());
        host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        Datastore store = bench.datastore();
        Writes.clusterReady(store);
        long floorMs;
        long syncMs;
        Saved saved;
        long changeMedianMs;
        long heapBefore = heapAfterGc();
        long felixHeap;
        if (backend == Backend.BPF) {
            interfaces(host, scale);
        }
        try (FelixProcess felix = new FelixProcess(bench.felixArgs(), host.name(), backend, FELIX_LOG)) {
            felix.awaitReady(Duration.ofSeconds(60));

            // Everything written while felix runs, as fast as the datastore takes it (8 writers; on
            // the kubernetes datastore the profiles become Namespaces and the endpoints Pods).
            List<Resource> all = resources(scale, Cluster.NODE, i -> "node-" + (i % 10));
            // When the datastore delivers the writes to a watcher in this JVM, as it does to felix:
            // a lag here is the datastore's (and the machine's), not felix's.
            WatchArrivals arrivals = new WatchArrivals(store, scale.policies());
            Instant firstWrite = Instant.now();
            Instant lastWrite = writeAll(bench, all, scale);
            System.out.printf("%s: wrote %d resources in %d ms%n", backend, all.size(),
                    Duration.between(firstWrite, lastWrite).toMillis());
            all.clear(); // not counted in felix's heap below
            Instant delivered = arrivals.awaitAll(Duration.ofMinutes(2));
            arrivals.close();
            System.out.printf("%s: the last policy's watch event reached this JVM %d ms after the last write "
                    + "(a watch of the bench's own, as felix's syncer has)%n", backend,
                    Duration.between(lastWrite, delivered).toMillis());

            FelixProcess.LastApply synced = awaitQuiet(felix, lastWrite, scale);
            syncMs = Duration.between(lastWrite, synced.at()).toMillis();
            long fromFirstMs = Duration.between(firstWrite, synced.at()).toMillis();
            int errors = synced.errors();

            String dp = felix.dataplaneStatus();
            System.out.printf("%s: kernel dataplane after the sync: %s%n", backend, dp);
            System.out.printf("%s: last write -> kernel in sync %d ms (first write -> in sync %d ms; %d batches; "
                    + "%d errors)%n", backend, syncMs, fromFirstMs, synced.batches(), errors);
            // Felix runs in this JVM: its heap is what a full GC leaves beyond what was there before it started.
            long heapAfter = heapAfterGc();
            felixHeap = heapAfter - heapBefore;
            System.out.printf("%s: heap after a full GC %,d MiB (%,d MiB before felix started): felix holds ~%,d MiB%n",
                    backend, heapAfter >> 20, heapBefore >> 20, felixHeap >> 20);

            // One policy change at a time: a new port in one namespaced policy.
            long[] ms = new long[CHANGES];
            long[] applyMs = new long[CHANGES];
            long[] writeMicros = new long[CHANGES];
            long[] warmUpMs = new long[WARM_UP_CHANGES];
            double commitsBefore = felix.gauge("felix_nft_calls_total");
            double ownBefore = felix.gauge("felix_nft_netlink_calls_total");
            for (int step = 0; step < WARM_UP_CHANGES + CHANGES; step++) {
                int k = step - WARM_UP_CHANGES; // negative while warming up
                int i = (step * 31) % scale.namespacedPolicies();
                int port = 20_000 + step;
                FelixProcess.LastApply before = felix.lastApply();
                Instant write = Instant.now();
                store.update(namespaced(scale, i, port));
                long wroteMicros = Duration.between(write, Instant.now()).toNanos() / 1_000;
                FelixProcess.LastApply after = awaitBatch(felix, before.batches());
                // An apply that began before the write (a read-back's repair, say) is not this change's.
                while (after.took() != null && after.at().minus(after.took()).isBefore(write)) {
                    after = awaitBatch(felix, after.batches());
                }
                if (k < 0) {
                    warmUpMs[step] = Duration.between(write, after.at()).toMillis();
                } else {
                    ms[k] = Duration.between(write, after.at()).toMillis();
                    applyMs[k] = after.took() == null ? -1 : after.took().toMillis();
                    writeMicros[k] = wroteMicros;
                }
                if (after.batches() != before.batches() + 1) {
                    System.out.printf("  change %d: %d batches%n", step, after.batches() - before.batches());
                }
                if (backend == Backend.BPF) {
                    continue; // the pinned rules read once, after the loop
                }
                // nftables: only the policy's chain (a whole-ruleset listing of this table takes seconds
                // under load, which would slow the loop and load the machine between changes)
                String kernel = backend == Backend.NFTABLES
                        ? host.exec("nft", "list", "chain", "inet", "calico", "cali-pi-default/ns" + i % scale.namespaces() + "/np" + i)
                        : host.exec(backend.dumpCommand().toArray(String[]::new));
                if (!kernel.contains(Integer.toString(port))) {
                    throw new IllegalStateException("change " + step + ": port " + port + " not in the kernel after apply");
                }
            }
            if (backend == Backend.NFTABLES) {
                // Which way the changes went: felix's own netlink messages (FELIX_NFTABLESNETLINKRULES) or libnftables.
                double commits = felix.gauge("felix_nft_calls_total") - commitsBefore;
                double own = felix.gauge("felix_nft_netlink_calls_total") - ownBefore;
                System.out.printf("%s: the %d changes' nftables transactions: %.0f, of which %.0f as felix's own netlink "
                        + "messages, %.0f through libnftables%n", backend, WARM_UP_CHANGES + CHANGES, commits, own, commits - own);
            }
            long[] sorted = ms.clone();
            Arrays.sort(sorted);
            changeMedianMs = sorted[CHANGES / 2];
            System.out.printf("%s: one policy change, write -> applied in the kernel: median %d ms, p90 %d ms, "
                    + "min %d ms, max %d ms over %d changes (goal: median < 25 ms)%n", backend, sorted[CHANGES / 2],
                    sorted[(int) Math.ceil(CHANGES * 0.9) - 1], sorted[0], sorted[CHANGES - 1], CHANGES);
            long[] applySorted = applyMs.clone();
            Arrays.sort(applySorted);
            System.out.printf("%s: of which the kernel dataplane's apply (render, driver, kernel): median %d ms, p90 %d ms; "
                    + "the rest is etcd, watch, syncer, graph and hand-over%n", backend, applySorted[CHANGES / 2],
                    applySorted[(int) Math.ceil(CHANGES * 0.9) - 1]);
            long[] writeSorted = writeMicros.clone();
            Arrays.sort(writeSorted);
            System.out.printf("%s: and the datastore write itself (the update call, until the datastore answered): median "
                    + "%.1f ms, p90 %.1f ms%n", backend, writeSorted[CHANGES / 2] / 1000.0,
                    writeSorted[(int) Math.ceil(CHANGES * 0.9) - 1] / 1000.0);
            long[] warmSorted = warmUpMs.clone();
            Arrays.sort(warmSorted);
            System.out.printf("%s: the %d warm-up changes made before those %d (not in their figures): median %d ms, "
                    + "max %d ms%n", backend, WARM_UP_CHANGES, CHANGES, warmSorted[WARM_UP_CHANGES / 2],
                    warmSorted[WARM_UP_CHANGES - 1]);
            if (backend == Backend.BPF) {
                int lastPort = 20_000 + WARM_UP_CHANGES + CHANGES - 1;
                if (!bpfRulesHold(felix, lastPort)) {
                    throw new IllegalStateException("the last change's port " + lastPort + " is in no pinned BPF rule");
                }
                System.out.printf("%s: the last change's port %d is in the pinned rules%n", backend, lastPort);
            }
            // The floor last: deleting its namespace makes the kernel free the whole table in the
            // background for seconds, which slowed the change loop when it ran in between.
            saved = backend == Backend.BPF ? null : save(backend, host);
        }
        if (saved == null) {
            floorMs = 0; // BPF: no floor (no restore tool loads BPF maps)
        } else {
            // Loaded with felix stopped and the machine idle (see awaitIdleCpu): its read-back after
            // the change loop (a listing of the whole table, parsed and compared; 1-1.3 cores for
            // seconds) ran beside the loads and made one take 9.7 s where the same file takes 3.6 s.
            Floor floor = load(backend, saved);
            System.out.printf("%s: kernel floor %d ms (%s) for %s%n", backend, floor.millis(), floor.detail(),
                    floor.size());
            System.out.printf("%s: ratio %.2f (goal <= 1.1)%n", backend, (double) syncMs / floor.millis());
            floorMs = floor.millis();
        }

        Result result = new Result(syncMs, floorMs, changeMedianMs, felixHeap);
        if (!coldStart) {
            return result;
        }
        // A second felix against the full datastore, programming a fresh namespace: the snapshot path.
        try (NetNs fresh = NetNs.create(NS + "benchc")) {
            fresh.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            if (backend == Backend.BPF) {
                interfaces(fresh, scale);
            }
            Instant start = Instant.now();
            try (FelixProcess cold = new FelixProcess(bench.felixArgs(), fresh.name(), backend, FELIX_LOG)) {
                Instant up = Instant.now();
                cold.awaitReady(Duration.ofMinutes(5));
                FelixProcess.LastApply a = cold.lastApply();
                long fromUp = Duration.between(up, a.at()).toMillis();
                System.out.printf("%s: felix started against the full datastore: context up -> kernel in sync %d ms "
                        + "(JVM start of the context %d ms; %d batches); ratio to the floor %s%n", backend, fromUp,
                        Duration.between(start, up).toMillis(), a.batches(),
                        floorMs == 0 ? "(no floor)" : String.format("%.2f", (double) fromUp / floorMs));
            }
        }
        return result;
    }

    /**
     * {@return everything the bench writes, in write order}: the tiers, one Profile per namespace,
     * the remote endpoints (on {@code remoteNode.apply(i)}), the local ones (on {@code localNode}),
     * the namespaced and the global policies. FootprintBench writes the same at its policy scale.
     */
    static List<Resource> resources(Scale scale, String localNode, java.util.function.IntFunction<String> remoteNode) {
        List<Resource> all = new ArrayList<>();
        for (int t = 0; t < TIERS; t++) {
            all.add(new Tier(ObjectMeta.named("t" + t), new TierSpec(100.0 + t, null)));
        }
        for (int n = 0; n < scale.namespaces(); n++) {
            all.add(new Profile(ObjectMeta.named("kns.ns" + n), new ProfileSpec(List.of(Rule.allow()),
                    List.of(Rule.allow()), Map.of("pcns.team", "t" + n % 5, "pcns.projectcalico.org/name", "ns" + n))));
        }
        for (int i = 0; i < scale.remote(); i++) {
            all.add(endpoint(scale, i, remoteNode.apply(i), "10.90." + i / 250 + "." + (i % 250 + 1)));
        }
        for (int i = 0; i < scale.local(); i++) {
            all.add(endpoint(scale, i, localNode, "10.80." + i / 250 + "." + (i % 250 + 1)));
        }
        for (int i = 0; i < scale.namespacedPolicies(); i++) {
            all.add(namespaced(scale, i, 0));
        }
        for (int i = 0; i < scale.globalPolicies(); i++) {
            all.add(global(scale, i));
        }
        return all;
    }

    /** Writes with 8 threads; {@return when the last write returned}. */
    private static Instant writeAll(BenchStore bench, List<Resource> all, Scale scale) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            // Tiers and profiles (or namespaces) first, endpoints (or pods) next, policies last,
            // each group in parallel.
            int policies = scale.policies();
            int endpoints = scale.remote() + scale.local();
            List<List<Resource>> groups = List.of(all.subList(0, all.size() - policies - endpoints),
                    all.subList(all.size() - policies - endpoints, all.size() - policies),
                    all.subList(all.size() - policies, all.size()));
            for (List<Resource> group : groups) {
                List<Future<?>> done = new ArrayList<>();
                for (Resource r : group) {
                    done.add(pool.submit(() -> bench.write(r)));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            }
            return Instant.now();
        } finally {
            pool.shutdown();
        }
    }

    /**
     * Waits until felix has every policy and endpoint active, the kernel dataplane has applied
     * every batch handed to it and no apply has finished for 2 s; {@return the last apply} (its
     * finish time is when the kernel was in sync).
     */
    private static FelixProcess.LastApply awaitQuiet(FelixProcess felix, Instant lastWrite, Scale scale) throws Exception {
        long until = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        FelixProcess.LastApply last = null;
        long quietSince = System.nanoTime();
        List<FelixProcess.LastApply> seen = new ArrayList<>();
        while (System.nanoTime() < until) {
            FelixProcess.LastApply now = felix.lastApply();
            if (last == null || now.batches() != last.batches()) {
                last = now;
                quietSince = System.nanoTime();
                seen.add(now);
            } else if (System.nanoTime() - quietSince > 2_000_000_000L && now.queued() == 0 && now.at() != null
                    && now.at().isAfter(lastWrite)
                    && felix.gauge("felix_active_policies") == scale.policies()
                    && felix.gauge("felix_local_endpoints") == scale.local()) {
                printCatchUpTail(seen, lastWrite);
                return now;
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("felix never settled: " + felix.lastApply() + ", policies "
                + felix.gauge("felix_active_policies") + ", endpoints " + felix.gauge("felix_local_endpoints"));
    }

    private static FelixProcess.LastApply awaitBatch(FelixProcess felix, long batchesBefore) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < until) {
            FelixProcess.LastApply a = felix.lastApply();
            if (a.batches() > batchesBefore) {
                return a;
            }
            // What is measured is the apply's own finish time (felix's clock), not when this poll
            // sees it: polling faster only takes CPU from felix (each poll is an HTTP request and
            // JSON) on a 2-core machine.
            Thread.sleep(10);
        }
        throw new IllegalStateException("no batch applied within 30 s");
    }

    record Floor(long millis, String detail, String size) {
    }

    /** Watches both policy kinds and notes when the {@code expected}-th event arrived. */
    private static final class WatchArrivals implements AutoCloseable {
        private final java.util.concurrent.CountDownLatch all;
        private final java.util.concurrent.atomic.AtomicReference<Instant> last = new java.util.concurrent.atomic.AtomicReference<>();
        private final List<calico.libcalico.datastore.Watch> watches = new ArrayList<>();

        WatchArrivals(Datastore store, int expected) {
            all = new java.util.concurrent.CountDownLatch(expected);
            long from = store.currentRevision();
            for (calico.api.model.ResourceKind kind : List.of(calico.api.model.ResourceKind.NETWORK_POLICY,
                    calico.api.model.ResourceKind.GLOBAL_NETWORK_POLICY)) {
                watches.add(store.watch(kind, null, from, e -> {
                    if (e instanceof calico.libcalico.datastore.WatchEvent.Added) {
                        last.set(Instant.now());
                        all.countDown();
                    }
                }));
            }
        }

        Instant awaitAll(Duration timeout) throws InterruptedException {
            if (!all.await(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the bench's watch still missed " + all.getCount()
                        + " policies " + timeout + " after the writes began");
            }
            return last.get();
        }

        @Override
        public void close() {
            watches.forEach(calico.libcalico.datastore.Watch::close);
        }
    }

    /** A veth per local endpoint, named as its interface, in {@code host} (one {@code ip -batch}). */
    private static void interfaces(NetNs host, Scale scale) throws IOException {
        Path batch = Files.createTempFile("scale-bench-", ".ip");
        try {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < scale.local(); i++) {
                String ns = "ns" + i % scale.namespaces();
                String name = WorkloadEndpointNames.interfaceName(ns, "l" + i);
                b.append("link add ").append(name).append(" type veth peer name sp").append(i).append('\n');
                b.append("link set ").append(name).append(" up\n").append("link set sp").append(i).append(" up\n");
            }
            Files.writeString(batch, b.toString());
            host.exec("ip", "-batch", batch.toString());
        } finally {
            Files.deleteIfExists(batch);
        }
    }

    /** {@return whether a rule of the pinned {@code cali_rules2} has {@code port} as a destination port} */
    private static boolean bpfRulesHold(FelixProcess felix, int port) {
        Path pin = felix.bpfPins().resolve(calico.dataplane.bpf.PolicyMaps.RULES);
        return calico.dataplane.bpf.BpfMap.withPinned(pin, 12, calico.dataplane.bpf.PolicyMaps.RULE_SIZE, m -> {
            for (byte[] k : m.keys()) {
                byte[] v = m.get(k);
                if (v != null && calico.dataplane.bpf.PolicyMaps.decodeRule(v).ports().stream()
                        .anyMatch(p -> p.lo() <= port && port <= p.hi())) {
                    return true;
                }
            }
            return false;
        });
    }

    /**
     * The catch-up's applies from 3 s before the last write on (polled every 20 ms: the apply counter says when
     * one was missed): when each started and ended after the last write, its size and what the driver wrote.
     */
    private static void printCatchUpTail(List<FelixProcess.LastApply> seen, Instant lastWrite) {
        System.out.println("  the catch-up's applies around the last write (start / end ms after it, took, updates, "
                + "graph batches, applies counter, driver stats):");
        for (FelixProcess.LastApply a : seen) {
            if (a.at() == null || a.at().isBefore(lastWrite.minusSeconds(3))) {
                continue;
            }
            long end = Duration.between(lastWrite, a.at()).toMillis();
            long took = a.took() == null ? 0 : a.took().toMillis();
            System.out.printf("    %6d / %6d ms  took %5d ms  %6d updates  %3d batches  #%d  %s%n", end - took, end, took,
                    a.batchSize(), a.merged(), a.batches(), a.stats());
        }
    }

    private static long timedLoad(NetNs into, Path rules) {
        awaitIdleCpu();
        long t0 = System.nanoTime();
        into.exec("nft", "-f", rules.toString());
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /**
     * Waits (up to 60 s) until the machine's CPUs are less than 10 % busy over a quarter second:
     * felix's last read-back (a listing of the whole table, in native code that closing the
     * context does not stop) and the kernel freeing a deleted namespace's table both ran on after
     * the previous step and took a floor load from 2.6 s to 8-10 s.
     */
    private static void awaitIdleCpu() {
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        long[] before = cpuTicks();
        while (System.nanoTime() < until) {
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long[] now = cpuTicks();
            long total = now[0] - before[0];
            long busy = total - (now[1] - before[1]);
            before = now;
            if (total > 0 && busy * 10 < total) {
                return;
            }
        }
        System.out.println("  (the machine did not go idle within 60 s before a floor load)");
    }

    /** {@return all CPU ticks and idle ticks (idle + iowait)} from {@code /proc/stat} */
    private static long[] cpuTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < f.length; i++) {
                total += Long.parseLong(f[i]);
            }
            return new long[] {total, Long.parseLong(f[4]) + Long.parseLong(f[5])};
        } catch (IOException e) {
            throw new IllegalStateException("read /proc/stat", e);
        }
    }

    /** The final ruleset as the kernel lists it, in files: the floor's input. */
    record Saved(Path dir, Path rules, Path sets, String tool, long saveMs) {
    }

    /** Saves the final ruleset ({@code nft list table}, or {@code ipset save} and {@code iptables-save}). */
    private static Saved save(Backend backend, NetNs host) throws IOException {
        Path dir = Files.createTempDirectory("calico-floor");
        if (backend == Backend.NFTABLES) {
            Path rules = dir.resolve("calico.nft");
            Files.writeString(rules, host.exec("nft", "list", "table", "inet", "calico"));
            String keep = System.getenv("NFT_BENCH_KEEP");
            if (keep != null) {
                // For taking one change apart on this table (native-dataplane's NftNetlinkBench).
                Files.copy(rules, Path.of(keep), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            return new Saved(dir, rules, null, "nft", 0);
        }
        String tool = backend == Backend.IPTABLES_NFT ? "iptables-nft" : "iptables-legacy";
        Path sets = dir.resolve("ipsets");
        Path rules = dir.resolve("filter");
        Files.writeString(sets, host.exec("ipset", "save"));
        long s0 = System.nanoTime();
        Files.writeString(rules, host.exec(tool + "-save", "-t", "filter"));
        return new Saved(dir, rules, sets, tool, (System.nanoTime() - s0) / 1_000_000);
    }

    /** Restores the saved ruleset into a fresh namespace, timed. */
    private static Floor load(Backend backend, Saved saved) throws IOException {
        try (NetNs fresh = NetNs.create(NS + "benchf")) {
            if (backend == Backend.NFTABLES) {
                // The fastest of three loads, each into a namespace of its own: a floor must not be
                // inflated by the kernel's background work (a deleted namespace's table is freed
                // for seconds after).
                List<Long> tries = new ArrayList<>();
                tries.add(timedLoad(fresh, saved.rules()));
                for (int t = 1; t < FLOOR_TRIES; t++) {
                    try (NetNs again = NetNs.create(NS + "benchf")) {
                        tries.add(timedLoad(again, saved.rules()));
                    }
                }
                return new Floor(java.util.Collections.min(tries), "nft -f, fastest of " + tries + " ms",
                        Files.size(saved.rules()) + " bytes");
            }
            String tool = saved.tool();
            awaitIdleCpu();
            long t0 = System.nanoTime();
            fresh.exec("ipset", "restore", "-file", saved.sets().toString());
            long t1 = System.nanoTime();
            fresh.exec("sh", "-c", tool + "-restore < " + saved.rules());
            long t2 = System.nanoTime();
            long rulesCount = Files.readAllLines(saved.rules()).stream().filter(l -> l.startsWith("-A ")).count();
            List<String> setFile = Files.readAllLines(saved.sets());
            long setLines = setFile.stream().filter(l -> l.startsWith("add ")).count();
            long setCount = setFile.stream().filter(l -> l.startsWith("create ")).count();
            return new Floor((t2 - t0) / 1_000_000, String.format("ipset restore %d ms + %s-restore %d ms; "
                    + "for scale: one %s-save of the table %d ms", (t1 - t0) / 1_000_000, tool, (t2 - t1) / 1_000_000,
                    tool, saved.saveMs()),
                    String.format("%d rules, %d sets with %d members", rulesCount, setCount, setLines));
        } finally {
            try (var files = Files.list(saved.dir())) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(saved.dir());
        }
    }

    /** Endpoint {@code i}: namespace ns(i%50), app(i%100), a role and a version, two named ports. */
    static WorkloadEndpoint endpoint(Scale scale, int i, String node, String ip) {
        String ns = "ns" + i % scale.namespaces();
        String pod = (node.equals(Cluster.NODE) ? "l" : "r") + i;
        Map<String, String> labels = Map.of("app", "app" + i % scale.apps(), "role", ROLES[i % 4], "version", "v" + i % 3,
                "projectcalico.org/namespace", ns, "projectcalico.org/orchestrator", "k8s");
        return new WorkloadEndpoint(new ObjectMeta(WorkloadEndpointNames.forPod(node, pod), ns, null, null, null,
                null, null, null, labels, null, null, null),
                new WorkloadEndpointSpec("k8s", null, node, null, pod, "eth0", null, List.of(ip + "/32"), null, null,
                        null, List.of("kns." + ns), WorkloadEndpointNames.interfaceName(ns, pod), null,
                        List.of(new WorkloadEndpointSpec.EndpointPort("http", Protocol.TCP, 8080, null, null),
                                new WorkloadEndpointSpec.EndpointPort("metrics", Protocol.TCP, 9090, null, null)),
                        null));
    }

    /**
     * Namespaced policy {@code i} in ns(i%50) selecting app(i%100) there (5 local endpoints):
     * ingress from a role (TCP, a port and a range, or {@code extraPort} when changed), from a
     * team's namespaces (UDP 53), to the named port; egress to another app on 5432 and to a /16.
     */
    static NetworkPolicy namespaced(Scale scale, int i, int extraPort) {
        Port first = Port.of(extraPort == 0 ? 1000 + i % 500 : extraPort);
        List<Rule> ingress = List.of(
                Rule.allow().withProtocol(Protocol.TCP)
                        .withSource(EntityRule.empty().withSelector("role == '" + ROLES[i % 4] + "'"))
                        .withDestination(EntityRule.empty().withPorts(List.of(first, Port.range(3000 + i % 7, 3100 + i % 7)))),
                Rule.allow().withProtocol(Protocol.UDP)
                        .withSource(EntityRule.empty().withNamespaceSelector("team == 't" + i % 5 + "'"))
                        .withDestination(EntityRule.empty().withPorts(List.of(Port.of(53)))),
                Rule.allow().withProtocol(Protocol.TCP).withDestination(EntityRule.empty().withPorts(List.of(Port.named(i % 2 == 0 ? "http" : "metrics")))));
        List<Rule> egress = List.of(
                Rule.allow().withProtocol(Protocol.TCP).withDestination(EntityRule.empty()
                        .withSelector("app == 'app" + (i * 7) % scale.apps() + "'").withPorts(List.of(Port.of(5432)))),
                Rule.allow().withDestination(EntityRule.empty().withNets(List.of("10." + (100 + i % 50) + ".0.0/16"))));
        return new NetworkPolicy(ObjectMeta.namespaced("ns" + i % scale.namespaces(), "np" + i),
                new NetworkPolicySpec(null, 100.0 + i % 10, ingress, egress, "app == 'app" + i % scale.apps() + "'",
                        List.of(PolicyType.Ingress, PolicyType.Egress), null, null));
    }

    /** Global policy {@code i} in tier t(i%5) selecting app(i%100): deny a blocked /24, pass a version. */
    static GlobalNetworkPolicy global(Scale scale, int i) {
        String tier = "t" + i % TIERS;
        List<Rule> ingress = List.of(
                Rule.deny().withSource(EntityRule.empty().withNets(List.of("198.51." + i % 250 + ".0/24"))),
                new Rule(Action.Pass, null, null, null, null, null,
                        EntityRule.empty().withSelector("version == 'v" + i % 3 + "' && role != 'db'"), null, null, null));
        List<Rule> egress = List.of(
                Rule.deny().withProtocol(Protocol.TCP).withDestination(EntityRule.empty()
                        .withNotNets(List.of("10.0.0.0/8")).withPorts(List.of(Port.of(25)))),
                new Rule(Action.Pass, null, null, null, null, null, null, null, null, null));
        return new GlobalNetworkPolicy(ObjectMeta.named(tier + ".gnp" + i), new GlobalNetworkPolicySpec(tier,
                (double) i, ingress, egress, "app == 'app" + i % scale.apps() + "'", List.of(PolicyType.Ingress, PolicyType.Egress),
                null, null, null, null, null, null));
    }
}
