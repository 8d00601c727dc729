package calico.felix.flows;

import calico.dataplane.netfilter.ConntrackReader;
import calico.dataplane.netfilter.ConntrackSettings;
import calico.dataplane.netfilter.NflogReader;
import calico.dataplane.netlink.NetNamespace;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Flow logs for the kernel dataplane: mirrors the dataplane stream into a {@link DataplaneModel}
 * (for the {@link FlowContext}), and while {@code flowLogsGoldmaneServer} is set reads NFLOG
 * groups 1 and 2 and conntrack in the dataplane's namespace, aggregates ({@link FlowAggregator})
 * and sends every {@code flowLogsFlushInterval} to goldmane ({@link GoldmaneClient}).
 *
 * <p>{@link #apply} runs on the syncer's thread with every batch and never throws; starting,
 * stopping and flushing run on a thread of its own that entered the dataplane's namespace
 * (kernel sockets belong to the namespace of the thread that opens them).
 */
public final class FlowLogs implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FlowLogs.class);

    /** What a running collection was started with; a change restarts it. */
    private record Wanted(String server, Duration flush, String cert, String key, String ca) {
    }

    private final String node;
    private final String netns;
    private final Clock clock;
    private final DataplaneModel model = new DataplaneModel();
    private final FlowLookups lookups = new FlowLookups();
    private volatile FlowContext context = FlowContext.EMPTY;
    private final FlowAggregator aggregator = new FlowAggregator(() -> context);
    private final ScheduledExecutorService thread;
    /** Started on the constructing thread, in felix's own namespace. */
    private final java.util.concurrent.ExecutorService outside;

    // Touched on the flow-logs thread only.
    private Wanted running;
    private GoldmaneClient client;
    private NflogReader nflog;
    private ConntrackReader conntrack;
    private AutoCloseable destroyed;
    private ScheduledFuture<?> flusher;
    private long intervalStart;
    private volatile String lastError = "";

    /**
     * @param node  this node's name (reported with every flow)
     * @param netns the dataplane's network namespace; empty for felix's own
     */
    public FlowLogs(String node, String netns, Clock clock, MeterRegistry meters) {
        this.node = node;
        this.netns = netns == null ? "" : netns;
        this.clock = clock;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "felix-flow-logs");
            t.setDaemon(true);
            return t;
        });
        this.outside = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "felix-flow-logs-client");
            t.setDaemon(true);
            return t;
        });
        outside.execute(() -> { }); // the thread is born now, here
        if (!this.netns.isEmpty()) {
            thread.execute(() -> NetNamespace.enterNamed(this.netns));
        }
        Gauge.builder("felix_flowlogs_reports_sent", this, f -> f.client == null ? 0 : f.client.sent())
                .description("flow reports handed to goldmane, replays included").register(meters);
        Gauge.builder("felix_flowlogs_reports_acked", this, f -> f.client == null ? 0 : f.client.acked())
                .description("highest report sequence number goldmane acknowledged").register(meters);
        Gauge.builder("felix_flowlogs_reports_dropped", this, f -> f.client == null ? 0 : f.client.dropped())
                .description("reports dropped from a full replay cache").register(meters);
        Gauge.builder("felix_flowlogs_nflog_overruns", this, f -> f.nflog == null ? 0 : f.nflog.overruns())
                .description("NFLOG socket overruns (ENOBUFS)").register(meters);
        Gauge.builder("felix_flowlogs_nflog_lost", this, f -> f.nflog == null ? 0 : f.nflog.lost())
                .description("NFLOG packets the kernel could not deliver").register(meters);
        Gauge.builder("felix_flowlogs_unknown_prefixes", aggregator, FlowAggregator::unknownPrefixes)
                .description("NFLOG hits whose prefix this felix did not render").register(meters);
    }

    /** Mirrors one batch; (re)starts or stops collection when the configuration asks. Never throws. */
    public void apply(List<DataplaneUpdate> batch) {
        try {
            Wanted wanted = null;
            boolean config = false;
            boolean local = false;
            for (DataplaneUpdate u : batch) {
                if (u instanceof DataplaneUpdate.FlowLookup) {
                    lookups.apply(u); // live: no new context for a remote change...
                    local |= hostEndpointLookup(u); // ...but a local host endpoint's labels are copied
                    continue;
                }
                local = true;
                model.apply(u);
                if (u instanceof DataplaneUpdate.ConfigUpdate c) {
                    config = true;
                    wanted = wanted(c.values());
                }
            }
            if (local && (running != null || wanted != null)) {
                context = FlowContext.of(model, lookups);
            }
            if (config) {
                Wanted w = wanted;
                // Waited for (bounded), so the NFLOG reader is bound before the dataplane programs
                // the rules that log to it: else the first connections' hits are lost.
                java.util.concurrent.Future<?> started = thread.submit(() -> reconcile(w));
                try {
                    started.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    log.warn("flow logs: still starting after 10 s; the dataplane goes on meanwhile");
                } catch (java.util.concurrent.ExecutionException e) {
                    log.error("flow logs: start failed", e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        } catch (RuntimeException e) {
            lastError = "flow logs: " + e;
            log.error("flow logs: batch not mirrored", e);
        }
    }

    private static boolean hostEndpointLookup(DataplaneUpdate u) {
        return u instanceof DataplaneUpdate.FlowLookupUpdate l && l.type() == DataplaneUpdate.FlowLookupType.HOST_ENDPOINT
                || u instanceof DataplaneUpdate.FlowLookupRemove r && r.key().startsWith("HostEndpoint/");
    }

    private static Wanted wanted(Map<String, String> v) {
        String server = v.get("flowLogsGoldmaneServer");
        if (server == null || server.isBlank()) {
            return null;
        }
        Duration flush = FelixSettings.GoDurations.parse(v.getOrDefault("flowLogsFlushInterval", "15s"));
        if (flush.isZero() || flush.isNegative()) {
            flush = Duration.ofSeconds(15);
        }
        return new Wanted(server.strip(), flush, v.get("typhaCertFile"), v.get("typhaKeyFile"), v.get("typhaCAFile"));
    }

    private void reconcile(Wanted w) {
        if (Objects.equals(w, running)) {
            return;
        }
        stop();
        if (w == null) {
            return;
        }
        try {
            ConntrackSettings ct = new ConntrackSettings();
            ct.enableAccounting();
            ct.enableEvents();
            GoldmaneClient.Settings gs = new GoldmaneClient.Settings(w.server(), node, blankToNull(w.cert()),
                    blankToNull(w.key()), blankToNull(w.ca()), Duration.ofMinutes(5), 100_000, Duration.ofSeconds(1));
            // Goldmane is reached from felix's own namespace: the client's threads (and the gRPC
            // event loops they start) must not be born on this thread, which entered the dataplane's.
            client = outside.submit(() -> new GoldmaneClient(gs, clock)).get(30, TimeUnit.SECONDS);
            conntrack = ConntrackReader.open();
            destroyed = conntrack.subscribeDestroyed(aggregator::onConntrack);
            nflog = NflogReader.open(List.of(NflogPrefix.INBOUND_GROUP, NflogPrefix.OUTBOUND_GROUP),
                    aggregator::onNflog);
            intervalStart = clock.instant().getEpochSecond();
            flusher = thread.scheduleAtFixedRate(this::flush, w.flush().toMillis(), w.flush().toMillis(),
                    TimeUnit.MILLISECONDS);
            running = w;
            lastError = "";
            log.info("flow logs: sending to goldmane at {} every {}", w.server(), w.flush());
        } catch (RuntimeException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            lastError = "flow logs: cannot start: " + e.getMessage();
            log.error("flow logs: cannot start", e);
            stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop();
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /** One interval: fresh conntrack counters, then the reports, then goldmane. */
    private void flush() {
        try {
            aggregator.onConntrackDump(conntrack.dump());
            long end = clock.instant().getEpochSecond();
            List<calico.libcalico.goldmane.proto.Flow> flows = aggregator.flush(intervalStart, Math.max(end,
                    intervalStart + 1));
            intervalStart = Math.max(end, intervalStart + 1);
            client.submit(flows);
        } catch (RuntimeException e) {
            lastError = "flow logs: flush failed: " + e.getMessage();
            log.warn("flow logs: flush failed", e);
        }
    }

    private void stop() {
        if (flusher != null) {
            flusher.cancel(false);
            flusher = null;
        }
        closeQuietly(nflog);
        closeQuietly(destroyed);
        closeQuietly(conntrack);
        closeQuietly(client);
        nflog = null;
        destroyed = null;
        conntrack = null;
        client = null;
        running = null;
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                log.debug("flow logs: close", e);
            }
        }
    }

    /** {@return the current problem, or empty} */
    public List<String> errors() {
        String e = lastError;
        return e.isEmpty() ? List.of() : List.of(e);
    }

    @Override
    public void close() {
        try {
            thread.submit(this::stop).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            log.debug("flow logs: stop", e);
        }
        thread.shutdownNow();
        outside.shutdownNow();
    }
}
