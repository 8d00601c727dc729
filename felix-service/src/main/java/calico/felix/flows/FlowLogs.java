package calico.felix.flows;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.dataplane.netfilter.ConntrackReader;
import calico.dataplane.netfilter.ConntrackSettings;
import calico.dataplane.netfilter.NflogReader;
import calico.dataplane.netlink.NetNamespace;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.NflogPrefix;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Flow logs for the kernel dataplane: names endpoints and decodes NFLOG prefixes from the
 * dataplane's one {@link DataplaneModel} (a {@link FlowContext} built from it when a hit needs it
 * and the model has changed), indexes the graph's flow-log lookups ({@link FlowLookups}), and
 * while {@code flowLogsGoldmaneServer} is set reads NFLOG
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
    private record Wanted(String server, Duration flush) {
    }

    private final String node;
    private final String netns;
    /** Felix's client certificate for goldmane (Calico's typha client files); null: plain text. */
    private final ClientCertificate tls;
    private final Clock clock;
    /** The dataplane's model: written by the dataplane, read here under its lock. */
    private final DataplaneModel model;
    private final FlowLookups lookups = new FlowLookups();

    /** A context and what it was built from: the model's version and the host endpoint label changes seen. */
    private record Built(long modelVersion, long hostEndpointLabels, FlowContext context) {
    }

    private volatile Built built = new Built(-1, -1, FlowContext.EMPTY);
    /** Counts lookup changes of host endpoints, whose labels a context copies. */
    private final AtomicLong hostEndpointLabels = new AtomicLong();
    private final FlowAggregator aggregator = new FlowAggregator(this::context);
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
    /** The running collection's flush times. */
    private FlushGrid grid;
    /** The eBPF driver's pins (its flow events), or null; read while they exist. */
    private final java.nio.file.Path bpfPins;
    private calico.dataplane.bpf.FlowEvents bpfEvents;
    private ScheduledFuture<?> bpfPoller;
    private long intervalStart;
    private volatile String lastError = "";
    /** The last flush's failure; cleared by a flush that works. */
    private volatile String flushError = "";
    private final java.util.concurrent.atomic.AtomicLong flushErrors = new java.util.concurrent.atomic.AtomicLong();
    /** Null without a health aggregator (tests); reports liveness only, never readiness. */
    private final calico.libcalico.health.HealthReporter health;
    /** What {@link #status()} last said, so a change is logged once. */
    private volatile String status = "off";

    /**
     * @param node  this node's name (reported with every flow)
     * @param netns the dataplane's network namespace; empty for felix's own
     * @param model the dataplane's model (what its rules are rendered from)
     */
    public FlowLogs(String node, String netns, DataplaneModel model, Clock clock, MeterRegistry meters) {
        this(node, netns, null, model, clock, meters, null);
    }

    /**
     * @param tls    felix's client certificate and goldmane's CA (Calico's {@code typhaCertFile},
     *               {@code typhaKeyFile}, {@code typhaCAFile}); null for plain text
     * @param health where the {@code FlowLogs} reporter goes (null: none). It counts towards
     *               liveness only and always says live: a goldmane outage or lost NFLOG packets
     *               are shown in its detail and the metrics, but never fail felix's probes (its
     *               policy work does not depend on flow logs).
     */
    public FlowLogs(String node, String netns, ClientCertificate tls, DataplaneModel model, Clock clock,
                    MeterRegistry meters, calico.libcalico.health.HealthAggregator health) {
        this(node, netns, tls, model, clock, meters, health, null);
    }

    /**
     * @param bpfPins the eBPF driver's pin directory: while its flow-event ring buffer is pinned
     *                there (the driver runs), its events feed the same aggregator as NFLOG
     */
    public FlowLogs(String node, String netns, ClientCertificate tls, DataplaneModel model, Clock clock,
                    MeterRegistry meters, calico.libcalico.health.HealthAggregator health,
                    java.nio.file.Path bpfPins) {
        this.bpfPins = bpfPins;
        this.model = Objects.requireNonNull(model, "model");
        this.tls = tls;
        this.health = health == null ? null : health.registerReporter("FlowLogs", true, false, null);
        if (this.health != null) {
            this.health.report(true, false, status);
        }
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
        Gauge.builder("felix_flowlogs_nflog_malformed", this, f -> f.nflog == null ? 0 : f.nflog.malformed())
                .description("NFLOG messages that could not be decoded").register(meters);
        Gauge.builder("felix_flowlogs_nflog_socket_errors", this, f -> f.nflog == null ? 0 : f.nflog.socketErrors())
                .description("NFLOG socket read errors other than overruns").register(meters);
        Gauge.builder("felix_flowlogs_conntrack_malformed", this, f -> f.conntrack == null ? 0
                        : f.conntrack.malformed())
                .description("conntrack messages that could not be decoded").register(meters);
        Gauge.builder("felix_flowlogs_conntrack_overruns", this, f -> f.conntrack == null ? 0
                        : f.conntrack.overruns())
                .description("conntrack event socket overruns (DESTROY events lost; the dump catches up)")
                .register(meters);
        Gauge.builder("felix_flowlogs_flush_errors", flushErrors, java.util.concurrent.atomic.AtomicLong::get)
                .description("flushes that failed (e.g. the conntrack dump)").register(meters);
        Gauge.builder("felix_flowlogs_goldmane_reachable", this, f -> f.client != null && f.client.reachable() ? 1 : 0)
                .description("1 while the gRPC channel to goldmane is up; 0 when off or unreachable").register(meters);
        Gauge.builder("felix_flowlogs_goldmane_stream_errors", this, f -> f.client == null ? 0
                        : f.client.streamErrors())
                .description("collector streams to goldmane that failed or were ended").register(meters);
        Gauge.builder("felix_flowlogs_reports_cached", this, f -> f.client == null ? 0 : f.client.cached())
                .description("reports held for replay to goldmane").register(meters);
        Gauge.builder("felix_flowlogs_lookups", lookups, FlowLookups::size)
                .description("remote endpoints and network sets known to flow logs").register(meters);
    }

    /**
     * {@return one line on the collection: off, or where it sends and what is wrong} (goldmane
     * unreachable, NFLOG overruns or lost packets, conntrack errors, the last failed flush or start)
     */
    public String status() {
        GoldmaneClient c = client;
        Wanted w = running;
        if (w == null || c == null) {
            String e = lastError;
            return e.isEmpty() ? "off" : "not running: " + e;
        }
        List<String> problems = new java.util.ArrayList<>();
        String g = c.problem();
        if (g != null) {
            problems.add(g);
        }
        NflogReader n = nflog;
        if (n != null && (n.overruns() > 0 || n.lost() > 0 || n.socketErrors() > 0)) {
            problems.add("NFLOG: " + n.overruns() + " overruns, " + n.lost() + " packets lost, " + n.socketErrors()
                    + " socket errors");
        }
        ConntrackReader ct = conntrack;
        if (ct != null && (ct.malformed() > 0 || ct.overruns() > 0)) {
            problems.add("conntrack: " + ct.malformed() + " malformed, " + ct.overruns() + " event overruns");
        }
        errors().forEach(problems::add);
        String head = "sending to goldmane at " + w.server() + (tls == null ? "" : " over mutual TLS") + " every "
                + w.flush();
        return problems.isEmpty() ? head + "; healthy" : head + "; " + String.join("; ", problems);
    }

    /** Refreshes the health detail; logs a change of status once. */
    private void reportStatus() {
        String now = status();
        if (!now.equals(status)) {
            log.info("flow logs: {}", now);
        }
        status = now;
        if (health != null) {
            health.report(true, false, now);
        }
    }

    /**
     * Indexes the batch's flow-log lookups; (re)starts or stops collection when the configuration
     * asks. Runs before the dataplane gets the batch. Never throws.
     */
    public void apply(List<DataplaneUpdate> batch) {
        try {
            Wanted wanted = null;
            boolean config = false;
            for (DataplaneUpdate u : batch) {
                if (u instanceof DataplaneUpdate.FlowLookup) {
                    lookups.apply(u); // live: no new context for a remote change...
                    if (hostEndpointLookup(u)) {
                        hostEndpointLabels.incrementAndGet(); // ...but a local host endpoint's labels are copied
                    }
                } else if (u instanceof DataplaneUpdate.ConfigUpdate c) {
                    config = true;
                    wanted = wanted(c.settings());
                }
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
            log.error("flow logs: batch not taken", e);
        }
    }

    /**
     * {@return the context for the model as it is now}: rebuilt (under the model's lock, on the
     * asking collector thread) only when the model or a local host endpoint's labels changed since
     * the last one; a hit needs it, so nothing is built while flow logs are off.
     */
    FlowContext context() {
        Built b = built;
        long labels = hostEndpointLabels.get();
        if (b.modelVersion() == model.version() && b.hostEndpointLabels() == labels) {
            return b.context();
        }
        synchronized (this) {
            b = built;
            if (b.modelVersion() != model.version() || b.hostEndpointLabels() != labels) {
                b = model.read(m -> new Built(m.version(), labels, FlowContext.of(m, lookups)));
                built = b;
            }
            return b.context();
        }
    }

    private static boolean hostEndpointLookup(DataplaneUpdate u) {
        return u instanceof DataplaneUpdate.FlowLookupUpdate l && l.type() == DataplaneUpdate.FlowLookupType.HOST_ENDPOINT
                || u instanceof DataplaneUpdate.FlowLookupRemove r && r.key().startsWith("HostEndpoint/");
    }

    private static Wanted wanted(FelixSettings s) {
        if (!s.flowLogsEnabled()) {
            return null;
        }
        Duration flush = s.flowLogsFlushInterval();
        if (flush.isZero() || flush.isNegative()) {
            flush = Duration.ofSeconds(15);
        }
        return new Wanted(s.flowLogsGoldmaneServer(), flush);
    }

    private void reconcile(Wanted w) {
        if (Objects.equals(w, running)) {
            return;
        }
        stop();
        if (w == null) {
            lastError = "";
            reportStatus();
            return;
        }
        try {
            ConntrackSettings ct = new ConntrackSettings();
            ct.enableAccounting();
            ct.enableEvents();
            GoldmaneClient.Settings gs = new GoldmaneClient.Settings(w.server(), node, tls,
                    Duration.ofMinutes(5), 100_000, Duration.ofSeconds(1));
            // Goldmane is reached from felix's own namespace: the client's threads (and the gRPC
            // event loops they start) must not be born on this thread, which entered the dataplane's.
            client = outside.submit(() -> new GoldmaneClient(gs, clock)).get(30, TimeUnit.SECONDS);
            conntrack = ConntrackReader.open();
            destroyed = conntrack.subscribeDestroyed(aggregator::onConntrack);
            // What conntrack holds now was opened before this collection could see it (felix was
            // down, or flow logs off): reported as partial records from the first flush with the
            // model in sync.
            try {
                aggregator.onStart(dump());
            } catch (RuntimeException e) {
                log.warn("flow logs: conntrack unreadable at start: connections opened before now go unreported", e);
            }
            nflog = NflogReader.open(List.of(NflogPrefix.INBOUND_GROUP, NflogPrefix.OUTBOUND_GROUP),
                    aggregator::onNflog);
            intervalStart = clock.instant().getEpochSecond();
            grid = FlushGrid.of(w.flush());
            scheduleFlush();
            if (bpfPins != null) {
                bpfPoller = thread.scheduleWithFixedDelay(this::pollBpf, 0, 100, TimeUnit.MILLISECONDS);
            }
            running = w;
            lastError = "";
            log.info("flow logs: sending to goldmane at {}{} every {}", w.server(),
                    tls == null ? " in plain text" : " over mutual TLS", w.flush());
            reportStatus();
        } catch (RuntimeException | java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            lastError = "flow logs: cannot start: " + e.getMessage();
            log.error("flow logs: cannot start", e);
            stop();
            reportStatus();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop();
        }
    }

    /**
     * {@return the kernel's conntrack and the eBPF driver's} (its pinned map, while there is one):
     * with BPF the kernel tracks nothing of the workloads' flows in a namespace without netfilter
     * rules, and the BPF programs' conntrack counts each way and sees the end of TCP.
     */
    private List<calico.dataplane.netfilter.ConntrackEntry> dump() {
        List<calico.dataplane.netfilter.ConntrackEntry> kernel = conntrack.dump();
        List<calico.dataplane.netfilter.ConntrackEntry> bpf = BpfConntrack.dump(bpfPins, System.nanoTime());
        if (bpf.isEmpty()) {
            return kernel;
        }
        List<calico.dataplane.netfilter.ConntrackEntry> all = new java.util.ArrayList<>(kernel);
        all.addAll(bpf);
        return all;
    }

    /** The next flush at the next point of the grid, reckoned from the clock each time (no drift). */
    private void scheduleFlush() {
        flusher = thread.schedule(this::flushAndReschedule, grid.delayToNext(clock.millis()), TimeUnit.MILLISECONDS);
    }

    private void flushAndReschedule() {
        try {
            flush();
        } finally {
            if (running != null) { // stop() runs on this thread too: a stopped collection schedules nothing
                scheduleFlush();
            }
        }
    }

    /** One interval: the eBPF ring drained (its flows known before their counters), fresh conntrack counters, then the reports, then goldmane. */
    private void flush() {
        try {
            if (bpfPins != null) {
                pollBpf();
            }
            aggregator.onConntrackDump(dump());
            long end = grid.end(clock.millis(), intervalStart);
            List<calico.libcalico.goldmane.proto.Flow> flows = aggregator.flush(intervalStart, end);
            intervalStart = end;
            client.submit(flows);
            flushError = "";
        } catch (RuntimeException e) {
            flushErrors.incrementAndGet();
            flushError = "flow logs: flush failed: " + e.getMessage();
            log.warn("flow logs: flush failed", e);
        }
        reportStatus();
    }

    /**
     * The eBPF driver's flow events as NFLOG packets (one per hit, with its prefix, in walk order):
     * opened when the driver's ring buffer is pinned, re-opened when it was pinned anew (a switch
     * away and back), closed when it is gone.
     */
    private void pollBpf() {
        try {
            if (bpfEvents != null && !bpfEvents.stillPinned()) {
                closeQuietly(bpfEvents);
                bpfEvents = null;
            }
            if (bpfEvents == null && calico.dataplane.bpf.FlowEvents.pinned(bpfPins)) {
                bpfEvents = calico.dataplane.bpf.FlowEvents.open(bpfPins, this::onBpfEvent);
                log.info("flow logs: reading the eBPF driver's flow events ({})", bpfPins);
            }
            if (bpfEvents != null) {
                bpfEvents.poll(0);
            }
        } catch (RuntimeException e) {
            lastError = "flow logs: eBPF flow events: " + e.getMessage();
            log.warn("flow logs: eBPF flow events", e);
            closeQuietly(bpfEvents);
            bpfEvents = null;
        }
    }

    private void onBpfEvent(calico.dataplane.bpf.PolicyMaps.FlowEvent e, List<String> prefixes) {
        boolean inbound = e.dir() == calico.dataplane.bpf.PolicyMaps.Dir.TO_ENDPOINT;
        boolean ports = e.proto() == 6 || e.proto() == 17 || e.proto() == 132; // ICMP: ports 0, as NFLOG's parser
        calico.dataplane.netfilter.FlowTuple t = new calico.dataplane.netfilter.FlowTuple(e.src(), e.dst(), e.proto(),
                ports ? e.srcPort() : 0, ports ? e.dstPort() : 0);
        java.time.Instant now = clock.instant();
        for (String p : prefixes) {
            aggregator.onNflog(new calico.dataplane.netfilter.NflogPacket(NflogPrefix.group(inbound), p, t, e.length(),
                    inbound ? 0 : e.ifindex(), inbound ? e.ifindex() : 0, now));
        }
    }

    private void stop() {
        if (flusher != null) {
            flusher.cancel(false);
            flusher = null;
        }
        if (bpfPoller != null) {
            bpfPoller.cancel(false);
            bpfPoller = null;
        }
        closeQuietly(bpfEvents);
        bpfEvents = null;
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

    /** {@return the last failed start or flush, or empty} */
    public List<String> errors() {
        return java.util.stream.Stream.of(lastError, flushError).filter(x -> !x.isEmpty()).toList();
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
