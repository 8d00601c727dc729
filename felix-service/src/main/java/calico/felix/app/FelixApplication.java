package calico.felix.app;

import calico.felix.dataplane.Dataplane;
import calico.felix.dataplane.DataplaneObserver;
import calico.felix.dataplane.EndpointStatusFiles;
import calico.felix.dataplane.KernelDataplane;
import calico.felix.dataplane.KernelPolicyDrivers;
import calico.felix.dataplane.ModelDataplane;
import calico.felix.dataplane.mtu.MtuFile;
import calico.felix.dataplane.wireguard.WireguardHost;
import calico.felix.flows.FlowLogs;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.kubernetes.OwnedKubernetesClient;
import calico.libcalico.health.CalicoMetricTable;
import calico.libcalico.health.DebugProfileServer;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthMetrics;
import calico.libcalico.health.HttpAnswers;
import calico.libcalico.health.JvmMeters;
import calico.libcalico.health.PathServer;
import calico.libcalico.health.Probe;
import calico.libcalico.health.PrometheusMetricsServer;
import calico.libcalico.typha.TyphaDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.JvmCompilationMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmHeapPressureMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.logging.LogbackMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Felix, the per-node agent: datastore → syncer → calculation graph → dataplane. A plain main (no Spring):
 * {@link FelixConfiguration} read from the environment (and {@code --NAME=value} arguments, which win), the
 * parts built here as the settings choose them (kernel or model dataplane, typha or the datastore, typha found
 * from Kubernetes or given), the {@link FelixDaemon} started, and calico-health's JDK servers ({@link PathServer}):
 * the health port with {@code /liveness}, {@code /readiness}, {@code /actuator/health} and
 * {@code /actuator/prometheus}, the admin port with {@code /felix/v1/...} ({@link FelixAdminApi}); Calico's
 * metrics and debug ports when enabled. Stopped by SIGTERM (a shutdown hook) or {@link #close()}.
 */
public final class FelixApplication implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FelixApplication.class);

    /**
     * What a test puts in place of a part felix builds itself.
     *
     * @param dataplane  the dataplane, instead of the one FELIX_DATAPLANEDRIVERNAME chooses (null: that one)
     * @param kubernetes the Kubernetes client of typha discovery (a mock API server), instead of one from the
     *                   datastore settings (null: that one)
     */
    public record Parts(Dataplane dataplane, KubernetesClient kubernetes) {
        /** Nothing replaced. */
        public static Parts none() {
            return new Parts(null, null);
        }
    }

    private final FelixConfiguration configuration;
    private final HealthAggregator health = new HealthAggregator(Clock.systemUTC());
    private final PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** Closed after the daemon, last started first closed. */
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final Dataplane dataplane;
    private final ProgrammedState state;
    private final FelixMetricsPort metricsPort;
    private final PrometheusMetricsServer metricsServer;
    private final FelixDaemon daemon;
    private final PathServer healthServer;
    private final PathServer adminServer;
    private final DebugProfileServer debugServer;
    private final CountDownLatch closed = new CountDownLatch(1);

    private FelixApplication(FelixConfiguration configuration, Parts parts) {
        this.configuration = configuration;
        FelixProperties felix = configuration.felix();
        metrics.config().commonTags("application", "felix");
        new HealthMetrics(health).bindTo(metrics);
        // The JVM and process meters Actuator bound: calico-health's common set, and the four more it bound here.
        closing(new JvmMeters(metrics));
        for (MeterBinder binder : new MeterBinder[] {closing(new JvmHeapPressureMetrics()), new JvmInfoMetrics(),
                new JvmCompilationMetrics(), closing(new LogbackMetrics())}) {
            binder.bindTo(metrics);
        }
        try {
            dataplane = parts.dataplane() != null ? parts.dataplane() : felix.kernelDataplane() ? kernelDataplane(felix)
                    : new ModelDataplane();
            FlowLogs flowLogs = null;
            if (parts.dataplane() == null && felix.kernelDataplane()) {
                // Flow logs beside the kernel dataplane, reading its model: idle until flowLogsGoldmaneServer is
                // set; over mutual TLS with felix's typha client files when they are set, as Calico's felix.
                flowLogs = closing(new FlowLogs(felix.hostname(), felix.dataplaneNetns(),
                        configuration.typha().clientCertificate(), dataplane.model(), Clock.systemUTC(), metrics, health,
                        felix.bpfFs().resolve("calico")));
            }
            // Calico's status reports into the datastore, with a client of their own; only etcd keeps them (the
            // other datastores drop them, as Calico's), so no client is opened elsewhere.
            var datastore = configuration.datastore();
            if (datastore.type() == DatastoreConfig.Type.MEMORY) {
                datastore.toConfig(); // reads and checks CALICO_MEMORY_MANIFEST now: a bad one fails start-up, not each open
            }
            FelixStatusReporter statusReporter = closing(new FelixStatusReporter(felix.hostname(),
                    datastore.type() == DatastoreConfig.Type.ETCDV3 ? () -> datastore.toConfig().open() : null,
                    Clock.systemUTC()));
            FelixConfiguration.Listener m = configuration.metrics();
            metricsServer = m.enabled() ? metricsServer(m) : null;
            metricsPort = new FelixMetricsPort(metricsServer, () -> metricsServer(m));
            state = flowLogs == null
                    ? ProgrammedState.of(dataplane, List.of(metricsPort::onBatch, statusReporter::onBatch))
                    : ProgrammedState.of(dataplane, List.of(flowLogs::apply, metricsPort::onBatch,
                            statusReporter::onBatch));
            FelixMetrics felixMetrics = new FelixMetrics(metrics, state.model());
            daemon = new FelixDaemon(felix, datastore, configuration.environment(), state, felixMetrics, health,
                    Clock.systemUTC(), configuration.typha(), typhaDiscovery(configuration, parts.kubernetes()));
        } catch (RuntimeException e) {
            closeParts(); // what was built before the failure (e.g. the kernel dataplane's key publisher)
            throw e;
        }
        FelixConfiguration.Listener d = configuration.debug();
        debugServer = d.enabled() ? new DebugProfileServer(d.host(), d.port(), d.setting()) : null;
        FelixConfiguration.Listener h = configuration.health();
        healthServer = h.enabled() ? new PathServer(h.host(), h.port(), h.setting(), Map.of(
                "/liveness", HttpAnswers.probe(health, Probe.LIVENESS),
                "/readiness", HttpAnswers.probe(health, Probe.READINESS),
                "/actuator/health", HttpAnswers.json(() -> HttpAnswers.health(health, Map.of())),
                "/actuator/prometheus", HttpAnswers.prometheus(metrics, CalicoMetricTable.none()))) : null;
        FelixConfiguration.Listener a = configuration.admin();
        adminServer = new PathServer(a.host(), a.port(), a.setting(), Map.of(FelixAdminApi.ROOT,
                new FelixAdminApi(new FelixAdminController(state, daemon), new KernelDataplaneAdminController(state))
                        .handler()));
    }

    /**
     * The kernel dataplane ({@code kernel}, or its synonym {@code iptables}): the policy backend is not fixed here,
     * the dataplane resolves it from each effective FelixConfiguration ({@code nftablesMode}, {@code iptablesBackend},
     * where {@code FELIX_*} variables win) and restarts its driver when it changes.
     */
    private Dataplane kernelDataplane(FelixProperties felix) {
        KernelDataplaneMetrics kernelMetrics = new KernelDataplaneMetrics(metrics);
        // The policy drivers' tool runs (iptables, ipset, nftables, child processes) under Calico's names.
        ToolCallMetrics tools = new ToolCallMetrics(metrics);
        // Writes this node's WireGuard public key into its Node, with a datastore client of its own.
        var datastore = configuration.datastore();
        WireguardKeyPublisher keys = closing(new WireguardKeyPublisher(felix.hostname(),
                () -> datastore.toConfig().open()));
        String netns = felix.dataplaneNetns();
        // The status files read the dataplane's model, which exists once the dataplane does.
        AtomicReference<KernelDataplane> built = new AtomicReference<>();
        EndpointStatusFiles statusFiles = new EndpointStatusFiles(() -> built.get() == null ? null : built.get().model());
        KernelDataplane dp = new KernelDataplane(netns,
                new KernelPolicyDrivers(KernelDataplane.commandPrefix(netns), felix.bpfFs(), tools,
                        felix.nftablesNetlinkRules()),
                DataplaneObserver.of(kernelMetrics, statusFiles), Optional.of(new MtuFile(felix.mtuFile())),
                new WireguardHost(felix.hostname(), WireguardHost.socketDirFor(netns), keys, keys::acceptV6));
        built.set(dp);
        return closing(dp);
    }

    /** FELIX_TYPHAK8SSERVICENAME without FELIX_TYPHAADDR: typha's addresses from its service; else null. */
    private TyphaDiscovery typhaDiscovery(FelixConfiguration configuration, KubernetesClient given) {
        FelixTyphaProperties typha = configuration.typha();
        if (!typha.discovered()) {
            return null;
        }
        // The given client (a test's), else one from felix's datastore settings (KUBECONFIG, K8S_API_ENDPOINT), else
        // Fabric8's default: the pod's service account inside a cluster, or ~/.kube/config.
        OwnedKubernetesClient k = closing(OwnedKubernetesClient.of(given, configuration.datastore()::kubernetesClientConfig));
        return new TyphaDiscovery(k.client(), typha.typhaK8sNamespace(), typha.typhaK8sServiceName().trim(),
                configuration.felix().hostname(), new Random(), "felix.typha-k8s-service-name (FELIX_TYPHAK8SSERVICENAME)");
    }

    /** Calico's metrics port, beside the health port's {@code /actuator/prometheus}, counters under Calico's names. */
    private PrometheusMetricsServer metricsServer(FelixConfiguration.Listener m) {
        return new PrometheusMetricsServer(metrics, m.host(), m.port(), m.setting(), FelixCalicoMetrics.TABLE);
    }

    /** Closes the parts, last made first closed. */
    private void closeParts() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                log.warn("Closing {}: {}", closeables.get(i).getClass().getSimpleName(), e.toString());
            }
        }
        closeables.clear();
    }

    private <T> T closing(T part) {
        if (part instanceof AutoCloseable c) {
            closeables.add(c);
        }
        return part;
    }

    /**
     * Starts felix with {@code variables} as its environment.
     *
     * @throws IllegalArgumentException naming the variable whose value cannot be used
     */
    public static FelixApplication start(Map<String, String> variables) {
        return start(variables, Parts.none());
    }

    /** As {@link #start(Map)}, with parts a test puts in place. */
    public static FelixApplication start(Map<String, String> variables, Parts parts) {
        FelixConfiguration configuration = FelixConfiguration.fromVariables(variables);
        configuration.logLevel().apply();
        FelixApplication app = new FelixApplication(configuration, parts);
        try {
            // The probes answer (not ready) while the daemon starts.
            if (app.healthServer != null) {
                app.healthServer.start();
            }
            app.adminServer.start();
            if (app.metricsServer != null) {
                app.metricsServer.start();
            }
            if (app.debugServer != null) {
                app.debugServer.start();
            }
            app.daemon.start();
        } catch (RuntimeException e) {
            app.close();
            throw e;
        }
        return app;
    }

    public FelixConfiguration configuration() {
        return configuration;
    }

    public HealthAggregator health() {
        return health;
    }

    /** {@return the registry every meter is in}, scraped on the health port and Calico's metrics port */
    public PrometheusMeterRegistry metrics() {
        return metrics;
    }

    public FelixDaemon daemon() {
        return daemon;
    }

    public ProgrammedState state() {
        return state;
    }

    public FelixMetricsPort metricsPort() {
        return metricsPort;
    }

    /** {@return the metrics server FELIX_PROMETHEUSMETRICSENABLED started}, empty when it is not enabled */
    public Optional<PrometheusMetricsServer> metricsServer() {
        return Optional.ofNullable(metricsServer);
    }

    /** {@return the debug server FELIX_DEBUGPORT started}, empty without one */
    public Optional<DebugProfileServer> debugServer() {
        return Optional.ofNullable(debugServer);
    }

    /** {@return the health port actually bound}, -1 when health is not served (FELIX_HEALTHENABLED=false) */
    public int healthPort() {
        return healthServer == null ? -1 : healthServer.boundPort();
    }

    /** {@return the admin port actually bound} */
    public int adminPort() {
        return adminServer.boundPort();
    }

    /** Stops the daemon, then the servers, then the parts; idempotent. */
    @Override
    public synchronized void close() {
        if (closed.getCount() == 0) {
            return;
        }
        daemon.stop();
        for (var server : new calico.libcalico.health.SideServer[] {adminServer, healthServer, metricsServer, debugServer}) {
            if (server != null) {
                server.stop();
            }
        }
        metricsPort.follow(false);
        closeParts();
        metrics.close();
        log.info("felix stopped");
        closed.countDown();
    }

    /**
     * {@code java -jar felix-service-exec.jar [--NAME=value…]}: felix on this node until SIGTERM. A bad setting is
     * one line naming the variable and the reason, exit status 1.
     */
    public static void main(String[] args) throws InterruptedException {
        calico.libcalico.config.PlainMain.run("felix", args, FelixApplication::start, FelixApplication::started);
    }

    /**
     * The moment felix has started: its settings are read, its ports bound and its daemon running (what Spring's
     * context refresh was). Readiness comes later, when the dataplane is in sync ({@code /readiness}).
     */
    private static void started(FelixApplication app) {
        log.info("felix started: health port {}, admin port {}", app.healthPort(), app.adminPort());
        try {
            // An AppCDS training run (the launcher's) ends here once felix is ready: its archive then holds the
            // classes of the whole start-up (the typha client's gRPC/Netty/protobuf, the graph, the driver).
            calico.libcalico.health.TrainingRun.endOnceReady("felix", () -> app.health().summary().ready());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // stopped before it was ready: the shutdown hook closes it
        }
    }
}
