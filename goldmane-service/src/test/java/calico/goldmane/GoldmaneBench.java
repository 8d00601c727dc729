package calico.goldmane;

import calico.goldmane.engine.Aggregator;
import calico.goldmane.engine.IngestStats;
import calico.goldmane.query.Requests;
import calico.goldmane.server.GoldmaneMetrics;
import calico.goldmane.server.GoldmaneServer;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.FlowStore;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Filter;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.goldmane.proto.MatchType;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.goldmane.proto.SortBy;
import calico.libcalico.goldmane.proto.SortOption;
import calico.libcalico.goldmane.proto.StringMatch;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Goldmane's figures: ingest throughput (20,000 distinct keys, 8 producers), List latency with a
 * filter and a sort over a full hour of 15 s buckets, and the heap that hour takes.
 * Run: bench/run.sh goldmane-service calico.goldmane.GoldmaneBench
 */
public final class GoldmaneBench {

    static final int KEYS = 20_000;
    static final int PRODUCERS = 8;
    static final Buckets BUCKETS = new Buckets(15, 240, 20);

    public static void main(String[] args) throws Exception {
        System.out.printf("cores=%d load=%s%n", Runtime.getRuntime().availableProcessors(), load());
        // Optional argument: "ingest" or "hour" runs only that part.
        String only = args.length > 0 ? args[0] : "all";
        Flow[] flows = flows(1_700_000_000L);
        if (!only.equals("hour")) {
            ingest(flows, false, 2_000_000);
            ingest(flows, false, 8_000_000);
            ingest(flows, true, PRODUCERS * KEYS * 20);
        }
        if (!only.equals("ingest")) {
            hour(flows);
        }
    }

    static String load() throws Exception {
        return Files.readString(Path.of("/proc/loadavg")).trim();
    }

    static Flow[] flows(long start) {
        Flow[] out = new Flow[KEYS];
        for (int i = 0; i < KEYS; i++) {
            String srcNs = "ns-" + (i % 50);
            String dstNs = "ns-" + ((i * 7) % 50);
            var trace = PolicyTrace.newBuilder().addEnforcedPolicies(PolicyHit.newBuilder()
                    .setKind(PolicyKind.CalicoNetworkPolicy).setTier("default").setNamespace(dstNs)
                    .setName("policy-" + (i % 300)).setAction(i % 10 == 0 ? Action.Deny : Action.Allow)
                    .setPolicyIndex(0).setRuleIndex(i % 5));
            if (i % 3 == 0) {
                trace.addPendingPolicies(PolicyHit.newBuilder().setKind(PolicyKind.StagedNetworkPolicy)
                        .setTier("security").setNamespace(dstNs).setName("staged-" + (i % 40)).setAction(Action.Deny));
            }
            FlowKey key = FlowKey.newBuilder().setSourceNamespace(srcNs).setSourceName("app-" + (i % 400) + "-")
                    .setSourceType(EndpointType.WorkloadEndpoint).setDestNamespace(dstNs)
                    .setDestName("svc-" + (i % 1000) + "-").setDestType(EndpointType.WorkloadEndpoint)
                    .setDestPort(1024 + i).setProto(i % 4 == 0 ? "udp" : "tcp")
                    .setReporter(i % 2 == 0 ? Reporter.Dst : Reporter.Src).setAction(i % 10 == 0 ? Action.Deny
                            : Action.Allow).setPolicies(trace).build();
            out[i] = Flow.newBuilder().setKey(key).setStartTime(start).setEndTime(start + 15)
                    .addSourceLabels("app=app-" + (i % 400)).addSourceLabels("team=t" + (i % 7))
                    .addDestLabels("app=svc-" + (i % 1000)).addSourceIps("10.0." + (i % 250) + "." + (i % 200))
                    .addDestIps("10.1." + (i % 250) + "." + (i % 100)).setPacketsIn(10).setPacketsOut(8)
                    .setBytesIn(1000).setBytesOut(800).setNumConnectionsStarted(1).setNumConnectionsLive(1).build();
        }
        return out;
    }

    /**
     * Producers decode each flow from its wire bytes, as gRPC hands the collector fresh messages
     * (so key hashing and equality do real work); decoding runs on the producer threads, which
     * share the two cores with the writer.
     */
    static void ingest(Flow[] flows, boolean dedup, int total) throws Exception {
        long start = flows[0].getStartTime();
        int rounds = dedup ? 20 : 1;
        byte[][][] wire = new byte[rounds][KEYS][];
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < KEYS; k++) {
                long s = start + 15L * r;
                wire[r][k] = flows[k].toBuilder().setStartTime(s).setEndTime(s + 15).build().toByteArray();
            }
        }
        // De-dup run: each producer is one node sending every key once per bucket for 20 buckets, all
        // inside the replay horizon: the steady state of 8 nodes x 20,000 keys every 15 s (3.2 M claims).
        Clock clock = Clock.fixed(Instant.ofEpochSecond(start + 1 + 15L * (rounds - 1)), ZoneOffset.UTC);
        FlowStore store = new FlowStore(BUCKETS, 100, BUCKETS.index(clock.millis() / 1000));
        Aggregator agg = new Aggregator(store, clock, 262_144, 2048, IngestStats.NONE);
        agg.start();
        int each = total / PRODUCERS;
        Thread[] ts = new Thread[PRODUCERS];
        long t0 = System.nanoTime();
        long cpu0 = processCpuNanos();
        long writerCpu0 = writerCpuNanos();
        for (int p = 0; p < PRODUCERS; p++) {
            int id = p;
            ts[p] = new Thread(() -> {
                try {
                    String node = dedup ? "node-" + id : null;
                    for (int i = 0; i < each; i++) {
                        int k = (i + id * 2500) % KEYS;
                        int r = dedup ? (i / KEYS) % rounds : 0;
                        agg.ingest(Flow.parseFrom(wire[r][k]), node, null, 0, 60_000);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    throw new IllegalStateException(e);
                }
            });
            ts[p].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        agg.flush().get(5, TimeUnit.MINUTES);
        double secs = (System.nanoTime() - t0) / 1e9;
        double cpuUs = (processCpuNanos() - cpu0) / 1e3 / ((double) each * PRODUCERS);
        double writerUs = (writerCpuNanos() - writerCpu0) / 1e3 / ((double) each * PRODUCERS);
        int keys = agg.call(FlowStore::uniqueKeys).get();
        agg.close();
        System.out.printf("ingest%s: %,d flows from %d producers over %,d keys in %.2f s = %,.0f flows/s (load %s)%n",
                dedup ? " (8 nodes, de-dup claims on)" : " (no node, no claims)", (long) each * PRODUCERS,
                PRODUCERS, keys, secs, each * PRODUCERS / secs, load());
        // CPU per flow does not depend on what else shares the cores: the writer is one thread, so
        // it caps ingest at 1/writer; all threads together share 2 cores.
        System.out.printf("  cpu per flow: %.2f us all threads (GC and JIT included), %.2f us on the writer"
                + " => on 2 idle cores at most %,.0f flows/s%n", cpuUs, writerUs,
                Math.min(1e6 / writerUs, 2e6 / cpuUs));
    }

    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** {@return the CPU time of the live goldmane-writer threads (0 when none)} */
    static long writerCpuNanos() {
        var mx = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("goldmane-writer")) {
                sum += Math.max(0, mx.getThreadCpuTime(t.getId()));
            }
        }
        return sum;
    }

    static long heapUsed() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** A full hour: 240 buckets, every key in every bucket (4.8 million rows), then List over gRPC. */
    static void hour(Flow[] template) throws Exception {
        long base = heapUsed();
        long start = 1_700_000_000L - 1_700_000_000L % 15;
        int first = BUCKETS.index(start);
        FlowStore store = new FlowStore(BUCKETS, 100, first);
        long t0 = System.nanoTime();
        for (int b = 0; b < BUCKETS.retained(); b++) {
            if (b > 0) {
                store.advanceTo(first + b);
            }
            long s = BUCKETS.start(first + b);
            for (Flow f : template) {
                store.apply(f.toBuilder().setStartTime(s).setEndTime(s + 15).build(), "node-1");
            }
        }
        double fillSecs = (System.nanoTime() - t0) / 1e9;
        long used = heapUsed() - base;
        System.out.printf("hour: %d buckets x %,d keys filled in %.1f s; heap for the hour %.0f MiB (load %s)%n",
                BUCKETS.retained(), store.uniqueKeys(), fillSecs, used / 1048576.0, load());

        long now = BUCKETS.start(first + BUCKETS.retained() - 1) + 5;
        Clock clock = Clock.fixed(Instant.ofEpochSecond(now), ZoneOffset.UTC);
        var metrics = new GoldmaneMetrics(new SimpleMeterRegistry());
        Aggregator agg = new Aggregator(store, clock, 262_144, 2048, metrics);
        GoldmaneServer server = new GoldmaneServer(agg, new Requests(BUCKETS, 1000), clock, metrics, null,
                "127.0.0.1", 0, Duration.ofSeconds(10));
        agg.start();
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext()
                .maxInboundMessageSize(64 << 20).build();
        var stub = FlowsGrpc.newBlockingStub(ch);
        var filtered = FlowListRequest.newBuilder().setPageSize(100).setPage(2)
                .addSortBy(SortOption.newBuilder().setSortBy(SortBy.DestName))
                .setFilter(Filter.newBuilder().addSourceNamespaces(StringMatch.newBuilder().setValue("ns-1")
                        .setType(MatchType.Fuzzy))).build(); // ns-1, ns-10..19: 11 of 50 namespaces
        var unfiltered = FlowListRequest.newBuilder().setPageSize(100)
                .addSortBy(SortOption.newBuilder().setSortBy(SortBy.SourceName)).build();
        var result = stub.list(filtered);
        System.out.printf("List filter+sort: %,d of %,d keys match, page of %d, first flow sums %d buckets (%d packets)%n",
                result.getMeta().getTotalResults(), KEYS, result.getFlowsCount(),
                (result.getFlows(0).getFlow().getEndTime() - result.getFlows(0).getFlow().getStartTime()) / 15,
                result.getFlows(0).getFlow().getPacketsIn());
        latency("List filter(fuzzy source namespace)+sort(dest name), page 100", () -> stub.list(filtered), 300);
        latency("List no filter, sort(source name), page 100", () -> stub.list(unfiltered), 100);

        // The same Lists while 8 producers ingest as fast as they can into the open bucket (the
        // writer is saturated: the worst case for a query that runs in slices between batches).
        byte[][] wire = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            wire[k] = template[k].toBuilder().setStartTime(now - 5).setEndTime(now).build().toByteArray();
        }
        var stop = new java.util.concurrent.atomic.AtomicBoolean();
        var sent = new java.util.concurrent.atomic.AtomicLong();
        Thread[] ts = new Thread[PRODUCERS];
        for (int p = 0; p < PRODUCERS; p++) {
            int id = p;
            ts[p] = new Thread(() -> {
                try {
                    for (int i = id * 2500; !stop.get(); i++) {
                        agg.ingest(Flow.parseFrom(wire[i % KEYS]), null, null, 0, 60_000);
                        sent.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    throw new IllegalStateException(e);
                }
            });
            ts[p].start();
        }
        Thread.sleep(2000);
        long l0 = System.nanoTime();
        long s0 = sent.get();
        latency("loaded: List filter(fuzzy source namespace)+sort(dest name), page 100", () -> stub.list(filtered), 300);
        latency("loaded: List no filter, sort(source name), page 100", () -> stub.list(unfiltered), 100);
        double loadedRate = (sent.get() - s0) / ((System.nanoTime() - l0) / 1e9);
        stop.set(true);
        for (Thread t : ts) {
            t.join();
        }
        System.out.printf("  ingest meanwhile: %,.0f flows/s queued by 8 producers%n", loadedRate);
        ch.shutdownNow();
        server.close();
        agg.close();
    }

    static void latency(String what, Runnable call, int n) throws Exception {
        for (int i = 0; i < 20; i++) {
            call.run();
        }
        long[] ns = new long[n];
        long cpu0 = processCpuNanos();
        long writer0 = writerCpuNanos();
        for (int i = 0; i < n; i++) {
            long t = System.nanoTime();
            call.run();
            ns[i] = System.nanoTime() - t;
        }
        double cpuMs = (processCpuNanos() - cpu0) / 1e6 / n;
        double writerMs = (writerCpuNanos() - writer0) / 1e6 / n;
        Arrays.sort(ns);
        System.out.printf("%s: p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d calls (load %s)%n", what,
                ns[n / 2] / 1e6, ns[(int) (n * 0.99)] / 1e6, ns[n - 1] / 1e6, n, load());
        // Without concurrent ingest, the CPU a call costs (does not depend on the machine's load).
        System.out.printf("  cpu per call: %.1f ms all threads (client, gRPC, GC included), %.1f ms on the writer%n",
                cpuMs, writerMs);
    }
}
