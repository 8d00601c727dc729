package calico.confd.app;

import calico.confd.bird.BirdValidator;
import calico.confd.bird.ConfigFile;
import calico.confd.daemon.ConfdDaemon;
import calico.confd.daemon.ConfdStatus;
import calico.confd.model.BgpStore;
import calico.confd.nodestatus.NodeStatusReporter;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.DirectorySecrets;
import calico.confd.render.KubernetesSecrets;
import calico.confd.render.SecretSource;
import calico.confd.services.KubernetesServices;
import calico.confd.status.PeerStatusMonitor;
import calico.libcalico.bird.BirdControl;
import calico.libcalico.bird.NodeStatusReader;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.DatastoreMetrics;
import calico.libcalico.datastore.kubernetes.OwnedKubernetesClient;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import calico.libcalico.syncer.WatcherSyncer;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import calico.libcalico.typha.TyphaDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds the {@link ConfdDaemon} and runs the peer-state poller for the application's lifetime.
 * With a typha address (CALICO_/FELIX_/CONFD_TYPHAADDR), or a typha service to discover one from
 * (…TYPHAK8SSERVICENAME), the BGP kinds come from typha's {@code bgp} syncer and the datastore is never opened (its settings still tell where password
 * Secrets live); without one, confd opens the datastore and watches it through libcalico's syncer.
 */
public class ConfdService {

    private static final Logger log = LoggerFactory.getLogger(ConfdService.class);

    private final ConfdProperties properties;
    private final DatastoreProperties datastoreProperties;
    private final ConfdTyphaProperties typha;
    private final MeterRegistry meters;
    private final HealthReporter health;
    /** Through typha only: not ready once typha has been away longer than its read timeout. */
    private final HealthReporter typhaHealth;
    private final BirdControl bird;
    private final PeerStatusMonitor monitor;
    private final ConfdLogLevel logLevel;
    private Datastore datastore;
    /** Through typha: the CalicoNodeStatus reporter's own client (Calico's status reporter has one too). */
    private Datastore statusDatastore;
    private NodeStatusReporter nodeStatus;
    private ConfdDaemon daemon;
    private volatile AutoCloseable syncer;
    private final Object typhaReportLock = new Object();
    private ScheduledExecutorService poller;
    /** A Kubernetes client given by the caller (a test's mock API server), else {@code null}. */
    private final KubernetesClient givenKubernetes;
    private OwnedKubernetesClient kubernetes;
    private KubernetesServices services;

    public ConfdService(ConfdProperties properties, DatastoreProperties datastoreProperties,
                        ConfdTyphaProperties typha, MeterRegistry meters,
                        HealthAggregator health, KubernetesClient givenKubernetes) {
        this.givenKubernetes = givenKubernetes;
        this.properties = properties;
        this.datastoreProperties = datastoreProperties;
        this.typha = typha;
        this.meters = meters;
        this.health = health.registerReporter("confd", true, true, Duration.ZERO);
        this.typhaHealth = this.typha.enabled() ? health.registerReporter("TyphaConnection", false, true, null) : null;
        this.bird = new BirdControl(properties.birdSocket(), Duration.ofSeconds(10));
        this.monitor = new PeerStatusMonitor(bird, meters);
        this.logLevel = new ConfdLogLevel(properties.logSeverity(), ConfdLogLevel.processContext());
    }

    /** Starts reading (typha or the datastore), rendering and polling BIRD; idles when BGP is off. */
    public synchronized void start() {
        if (isRunning()) {
            return;
        }
        if (!properties.bgpEnabled()) {
            log.info("CALICO_NETWORKING_BACKEND={}: BGP is off, confd renders nothing", properties.networkingBackend());
            health.report(true, true, "BGP disabled (CALICO_NETWORKING_BACKEND=" + properties.networkingBackend() + ")");
            return;
        }
        health.report(true, false, typha.enabled() ? "waiting for typha" : "waiting for the datastore");
        DatastoreConfig datastoreConfig = datastoreProperties.toConfig();
        SecretSource secrets = secrets(datastoreConfig);
        daemon = new ConfdDaemon(properties.nodename(), properties.routerId(), new BirdConfigBuilder(secrets),
                new ConfigFile(properties.birdConfig(), new BirdValidator(properties.birdBinary())), bird,
                properties.resyncInterval());
        Gauge.builder("confd_config_generation", daemon, d -> d.status().generation())
                .description("configurations installed and loaded by BIRD").register(meters);
        daemon.onStatus(this::onStatus);
        daemon.onConfiguration(c -> logLevel.followConfiguration(c.logSeverityScreen()));
        // Per-service advertisement (Local traffic policy, LB aggregation off) needs the Services
        // themselves: watched from the Kubernetes API when there is one, as Calico's confd does.
        if (kubernetes(datastoreConfig) != null) {
            services = new KubernetesServices(kubernetes.client(), properties.nodename(), daemon::onServices);
            services.start();
        }
        if (typha.discovered()) {
            startDiscoveredTypha();
        } else if (typha.enabled()) {
            startTypha(typha.options(properties.nodename(), typha.addresses()));
        } else {
            datastore = datastoreConfig.open();
            new DatastoreMetrics(datastore).bindTo(meters); // calico_datastore_invalid_objects_total (kubernetes datastore)
            WatcherSyncer watcher = new WatcherSyncer(datastore, BgpStore.KINDS, daemon);
            syncer = watcher;
            watcher.start();
        }
        poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "confd-peer-poll");
            t.setDaemon(true);
            return t;
        });
        long ms = properties.peerPollInterval().toMillis();
        poller.scheduleWithFixedDelay(monitor::refresh, 0, ms, TimeUnit.MILLISECONDS);
        if (typhaHealth != null) {
            typhaHealth.report(false, false, "not connected");
            poller.scheduleWithFixedDelay(this::reportTypha, 1, 1, TimeUnit.SECONDS);
        }
        // CalicoNodeStatus: reported where this node's BIRD is known (its socket, its node name); last,
        // so that nothing above waits for its datastore client.
        if (datastore == null) {
            statusDatastore = datastoreConfig.open();
        }
        nodeStatus = new NodeStatusReporter(datastore != null ? datastore : statusDatastore, properties.nodename(),
                new NodeStatusReader(bird), Clock.systemUTC());
        nodeStatus.start();
    }

    /**
     * TyphaConnection: not ready once typha has been unreachable for longer than …TYPHAREADTIMEOUT; BIRD keeps
     * the configuration it has meanwhile.
     */
    private void reportTypha() {
        synchronized (typhaReportLock) { // the poller and the client's callbacks: the latest state wins
            reportTyphaNow();
        }
    }

    private void reportTyphaNow() {
        if (!(syncer instanceof TyphaClient client)) {
            typhaHealth.report(false, false, "typha not found yet");
            return;
        }
        TyphaClient.ConnectionStats c = client.connectionStats();
        if (c.disconnectedFor().compareTo(typha.readTimeout()) > 0) {
            typhaHealth.report(false, false, "typha has been unreachable for " + c.disconnectedFor().toSeconds()
                    + " s (over " + typha.readTimeout() + "; " + c.attempts() + " connection attempts so far)");
        } else {
            typhaHealth.report(false, true, c.connected() ? "connected to typha at " + c.address() : "typha away");
        }
    }

    private void startTypha(TyphaClientOptions options) {
        log.info("confd for node {} reading typha's bgp syncer at {}", properties.nodename(), options.addresses());
        // TyphaConnection follows the stream as it connects or ends, not the 1 s poll.
        TyphaClient client = new TyphaClient(options, daemon, connection -> reportTypha());
        syncer = client;
        client.start();
    }

    /**
     * …TYPHAK8SSERVICENAME without an address: typha's replicas from its service's EndpointSlices,
     * as felix finds them, read on a thread of its own until there is one (start() must not block)
     * and again whenever a reconnect has tried them all.
     */
    private void startDiscoveredTypha() {
        TyphaDiscovery discovery = new TyphaDiscovery(kubernetesForDiscovery(), typha.k8sNamespace(),
                typha.k8sServiceName(), properties.nodename(), new Random(),
                "confd.typha.k8s-service-name (TYPHAK8SSERVICENAME, CALICO_, FELIX_ or CONFD_ prefix)");
        health.report(true, false, "discovering typha from service " + discovery.describe());
        Thread t = new Thread(() -> {
            List<String> found = discovery.await(this::isRunning, Duration.ofSeconds(1), Duration.ofSeconds(30), why -> {
                log.warn("Typha discovery: {}", why);
                health.report(true, false, "discovering typha from service " + discovery.describe() + ": " + why);
            });
            synchronized (this) {
                if (found != null && isRunning() && syncer == null) {
                    startTypha(typha.options(properties.nodename(), found).withRediscovery(discovery::addresses));
                }
            }
        }, "confd-typha-discovery");
        t.setDaemon(true);
        t.start();
    }

    /**
     * The Kubernetes API for typha discovery: the given client if there is one (a test's), else
     * one from confd's datastore settings (KUBECONFIG, K8S_API_ENDPOINT), else fabric8's default.
     */
    private KubernetesClient kubernetesForDiscovery() {
        if (kubernetes == null) {
            kubernetes = OwnedKubernetesClient.of(givenKubernetes,
                    datastoreProperties::kubernetesClientConfig);
        }
        return kubernetes.client();
    }

    /** Mounted secrets when CALICO_BGP_SECRETS_DIR is set, else the Kubernetes API on the kubernetes datastore. */
    private SecretSource secrets(DatastoreConfig datastoreConfig) {
        if (properties.secretsDir() != null && !properties.secretsDir().isBlank()) {
            return new DirectorySecrets(Path.of(properties.secretsDir()));
        }
        if (kubernetes(datastoreConfig) != null) {
            return new KubernetesSecrets(kubernetes.client(), properties.namespace());
        }
        return SecretSource.none();
    }

    /** {@return the Kubernetes API client} on the kubernetes datastore (made once), else {@code null} */
    private OwnedKubernetesClient kubernetes(DatastoreConfig datastoreConfig) {
        if (kubernetes == null && datastoreConfig.kubernetes() != null) {
            kubernetes = OwnedKubernetesClient.of(null, () -> datastoreConfig.kubernetes().client());
        }
        return kubernetes;
    }

    private void onStatus(ConfdStatus s) {
        Counter.builder("confd_render_passes_total").description("render passes by result")
                .tag("result", s.result().name().toLowerCase(Locale.ROOT)).register(meters).increment();
        // Ready once BIRD runs a configuration from this datastore; a rejected or refused new one
        // keeps the old one running, which is reported but still ready.
        boolean ready = s.generation() > 0 || s.result() == ConfdStatus.Result.UNCHANGED;
        health.report(true, ready, s.result() + (s.message() == null ? "" : ": " + s.message()));
    }

    /** {@return the reconcile loop}, or {@code null} when BGP is off */
    public synchronized ConfdDaemon daemon() {
        return daemon;
    }

    /** {@return the datastore confd reads}, {@code null} when reading through typha (tests write to the memory one) */
    public synchronized Datastore datastore() {
        return datastore;
    }

    public PeerStatusMonitor monitor() {
        return monitor;
    }

    public ConfdProperties properties() {
        return properties;
    }

    /** Stops everything {@link #start()} started; the installed file stays for BIRD. */
    public synchronized void stop() {
        if (poller != null) {
            poller.shutdownNow();
            poller = null;
        }
        if (syncer != null) {
            try {
                syncer.close();
            } catch (Exception e) {
                log.warn("closing the syncer: {}", e.toString());
            }
            syncer = null;
        }
        if (nodeStatus != null) {
            nodeStatus.close();
            nodeStatus = null;
        }
        if (statusDatastore != null) {
            statusDatastore.close();
            statusDatastore = null;
        }
        if (services != null) {
            services.close();
            services = null;
        }
        if (daemon != null) {
            daemon.close();
            daemon = null;
        }
        if (datastore != null) {
            datastore.close();
            datastore = null;
        }
        if (kubernetes != null) {
            kubernetes.close();
            kubernetes = null;
        }
    }

    public synchronized boolean isRunning() {
        return daemon != null;
    }
}
