package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.flows.InProcessGoldmane;
import calico.felix.testing.LogCapture;
import calico.goldmane.store.Buckets;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.typha.TyphaClient;
import ch.qos.logback.classic.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 29's typha fault, focused: felix reads through a real typha (over a real etcd) with flow
 * logs on; dev/client opens a TCP connection to prod/api:8080 every 100 ms; typha is closed and a
 * new one started on its port while the traffic goes on. Every connection must be in goldmane, for
 * both reporters (client and api are both on this felix's node), and in the bucket of the time it
 * was made: the fault suite compares per 15 s bucket, and its typha fault once showed 16
 * destination-side connections "lost" that were counted into the previous bucket, as felix's
 * reports covered intervals from whenever collection started, not goldmane's buckets.
 *
 * <p>Buckets here are 5 s (goldmane's {@code AGGREGATION_WINDOW} and felix's
 * {@code flowLogsFlushInterval}); no connection is made in a guard band around each boundary
 * (the time from a SYN to its NFLOG hit reaching the aggregator, and a flush's lateness, are not
 * the point).
 */
class FlowLogsThroughTyphaE2ETest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static final long BUCKET_SECONDS = 5;
    private static final long BUCKET_MILLIS = BUCKET_SECONDS * 1000;
    private static final long GUARD_BEFORE_MILLIS = 1_000;
    private static final long GUARD_AFTER_MILLIS = 500;
    /** Felix's reconnect backoff grows while typha is down (capped at a few seconds), the shared machine adds more. */
    private static final Duration RECONNECT_DEADLINE = Duration.ofSeconds(30);
    private static final Duration FLOW_DEADLINE = Duration.ofSeconds(40);

    private final TestDatastore etcd = new TestDatastore.Etcd(ETCD);
    private final List<AutoCloseable> open = new ArrayList<>();
    private InProcessTypha typha;
    private FelixProcess felix;
    private Cluster cluster;
    private ScheduledExecutorService traffic;

    @AfterEach
    void tearDown() throws Exception {
        if (traffic != null) {
            traffic.shutdownNow();
        }
        if (felix != null) {
            felix.close();
        }
        if (typha != null) {
            typha.close();
        }
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void everyConnectionIsReportedInItsBucketAcrossATyphaRestart() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        Backend backend = Stream.of(Backend.NFTABLES, Backend.IPTABLES_NFT).filter(b -> b.unavailableReason() == null)
                .findFirst().orElse(null);
        assumeTrue(backend != null, "neither nft nor iptables-nft-restore is installed");
        etcd.reset();
        Datastore store = etcd.open();
        open.add(store);
        cluster = new Cluster(etcd.clusterObjects());
        Writes.clusterReady(store);
        InProcessGoldmane goldmane = new InProcessGoldmane(0, null, null, new Buckets(BUCKET_SECONDS, 720, 60));
        open.add(goldmane);

        typha = new InProcessTypha(etcd);
        int port = typha.start(0);
        felix = new FelixProcess(etcd.felixArgsThroughTypha(), cluster.host.name(), backend, "Warning",
                "--FELIX_TYPHAADDR=127.0.0.1:" + port, "--FELIX_FLOWLOGSGOLDMANESERVER=" + goldmane.target(),
                "--FELIX_FLOWLOGSFLUSHINTERVAL=" + BUCKET_SECONDS + "s");
        felix.awaitReady(Duration.ofSeconds(60));
        Workload client = cluster.client;
        Workload api = cluster.api;
        Await.until("client -> api:8080 connects", Duration.ofSeconds(20),
                () -> client.netns().tcpConnects(api.ip(), 8080, Duration.ofMillis(500)));
        Await.until("flow logs running: the first connection reported", FLOW_DEADLINE,
                () -> !connections(goldmane, 0, 0).isEmpty());

        // The traffic: every 100 ms outside the guard bands, from the next boundary on.
        long from = boundaryAfter(System.currentTimeMillis() + GUARD_BEFORE_MILLIS);
        long[] to = {Long.MAX_VALUE};
        List<Long> made = Collections.synchronizedList(new ArrayList<>());
        traffic = Executors.newSingleThreadScheduledExecutor();
        traffic.scheduleAtFixedRate(() -> {
            long at = System.currentTimeMillis();
            if (at >= from && at < to[0] && !inGuardBand(at)
                    && client.netns().tcpConnects(api.ip(), 8080, Duration.ofSeconds(2))) {
                made.add(at);
            }
        }, 0, 100, TimeUnit.MILLISECONDS);
        awaitTime(from + 2 * BUCKET_MILLIS);

        // typha goes; felix sees its stream end and a reconnect fail; a new typha on the same port.
        try (LogCapture typhaClient = new LogCapture(TyphaClient.class, Level.INFO)) {
            typha.stop();
            Await.until("felix's typha stream ended and a reconnect failed", RECONNECT_DEADLINE,
                    () -> typhaClient.containing("Typha stream ended"), ended -> ended.size() >= 2);
        }
        typha.restart();
        Await.until("felix back on the new typha", RECONNECT_DEADLINE, () -> typha.connectionCount() == 1);
        to[0] = boundaryAfter(System.currentTimeMillis() + 2 * BUCKET_MILLIS);
        awaitTime(to[0]);
        traffic.shutdown();
        assertThat(traffic.awaitTermination(10, TimeUnit.SECONDS)).as("the traffic's last connection").isTrue();

        Map<Long, Long> sent = new TreeMap<>();
        for (long b = from; b < to[0]; b += BUCKET_MILLIS) {
            sent.put(b / 1000, 0L);
        }
        synchronized (made) {
            made.forEach(at -> sent.merge(Math.floorDiv(at, BUCKET_MILLIS) * BUCKET_SECONDS, 1L, Long::sum));
        }
        long total = sent.values().stream().mapToLong(Long::longValue).sum();
        assertThat(total).as("connections made").isPositive();
        Map<Reporter, Map<Long, Long>> recorded = Await.until("every connection reported by both ends, " + total
                        + " made", FLOW_DEADLINE, () -> connections(goldmane, from / 1000, to[0] / 1000),
                r -> Stream.of(Reporter.Dst, Reporter.Src).allMatch(rep -> sum(r.get(rep)) >= total));
        System.out.printf("[flow logs through typha] %d connections, per %d s bucket: sent %s, Dst %s, Src %s%n",
                total, BUCKET_SECONDS, sent, recorded.get(Reporter.Dst), recorded.get(Reporter.Src));
        assertThat(recorded.get(Reporter.Dst)).as("destination side, per bucket").isEqualTo(sent);
        assertThat(recorded.get(Reporter.Src)).as("source side, per bucket").isEqualTo(sent);
    }

    /**
     * {@return connections started client → api:8080 per reporter and bucket start (seconds)} in
     * {@code [gte, lt)} (0, 0: everything retained), every bucket of the range present.
     */
    private static Map<Reporter, Map<Long, Long>> connections(InProcessGoldmane goldmane, long gte, long lt) {
        List<FlowResult> results;
        try {
            results = goldmane.list(FlowListRequest.newBuilder().setStartTimeGte(gte).setStartTimeLt(lt)
                    .setAggregationInterval(BUCKET_SECONDS).build()).getFlowsList();
        } catch (Exception e) {
            throw new IllegalStateException("goldmane's flow list: " + e.getMessage(), e);
        }
        Map<Reporter, Map<Long, Long>> out = new TreeMap<>();
        for (Reporter r : List.of(Reporter.Dst, Reporter.Src)) {
            Map<Long, Long> buckets = new TreeMap<>();
            for (long b = gte; b < lt; b += BUCKET_SECONDS) {
                buckets.put(b, 0L);
            }
            out.put(r, buckets);
        }
        for (FlowResult res : results) {
            Flow f = res.getFlow();
            if (f.getKey().getSourceName().equals("client") && f.getKey().getDestName().equals("api")
                    && f.getKey().getDestPort() == 8080 && out.containsKey(f.getKey().getReporter())
                    && f.getNumConnectionsStarted() > 0) {
                out.get(f.getKey().getReporter()).merge(f.getStartTime(), f.getNumConnectionsStarted(), Long::sum);
            }
        }
        if (gte == 0) {
            out.values().removeIf(Map::isEmpty);
        }
        return out;
    }

    private static long sum(Map<Long, Long> m) {
        return m == null ? 0 : m.values().stream().mapToLong(Long::longValue).sum();
    }

    private static long boundaryAfter(long at) {
        return (Math.floorDiv(at, BUCKET_MILLIS) + 1) * BUCKET_MILLIS;
    }

    private static boolean inGuardBand(long at) {
        long since = Math.floorMod(at, BUCKET_MILLIS);
        return since < GUARD_AFTER_MILLIS || BUCKET_MILLIS - since <= GUARD_BEFORE_MILLIS;
    }

    private static void awaitTime(long at) {
        Await.until("the clock at " + at, Duration.ofMillis(Math.max(0, at - System.currentTimeMillis()) + 30_000),
                () -> System.currentTimeMillis() >= at);
    }
}
