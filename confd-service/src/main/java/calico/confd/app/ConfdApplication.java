package calico.confd.app;

import calico.confd.daemon.ConfdDaemon;
import calico.confd.daemon.ConfdStatus;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthMetrics;
import calico.libcalico.health.HttpAnswers;
import calico.libcalico.health.JvmMeters;
import calico.libcalico.health.HttpAnswers.Answer;
import calico.libcalico.health.HttpAnswers.Status;
import calico.libcalico.health.PathServer;
import calico.libcalico.health.Probe;
import calico.libcalico.health.TrainingRun;
import calico.libcalico.health.CalicoMetricTable;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * confd: BIRD 2 configuration from the BGP resources, BIRD reloaded over its control socket. A plain
 * main (no Spring): {@link ConfdConfiguration} read from the environment (and {@code --VARIABLE=value}
 * arguments, which win), the {@link ConfdService} started, and two small JDK HTTP servers of
 * calico-health ({@link PathServer}): the health port with {@code /liveness}, {@code /readiness},
 * {@code /actuator/health} and {@code /actuator/prometheus} (the answers the Spring Boot version gave),
 * the admin port with {@code GET /peers}. Stopped by SIGTERM (a shutdown hook) or {@link #close()}.
 */
public final class ConfdApplication implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConfdApplication.class);

    private final HealthAggregator health = new HealthAggregator(Clock.systemUTC());
    private final PrometheusMeterRegistry metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmMeters jvmMeters;
    private final ConfdService service;
    private final PathServer healthServer;
    private final PathServer adminServer;
    private final CountDownLatch closed = new CountDownLatch(1);

    private ConfdApplication(ConfdConfiguration configuration, KubernetesClient kubernetes) {
        metrics.config().commonTags("application", "confd");
        new HealthMetrics(health).bindTo(metrics);
        jvmMeters = new JvmMeters(metrics);
        service = new ConfdService(configuration.confd(), configuration.datastore(), configuration.typha(), metrics, health,
                kubernetes);
        BgpHealth bgp = new BgpHealth(service);
        ConfdConfiguration.Listener h = configuration.health();
        healthServer = h.enabled() ? new PathServer(h.host(), h.port(), h.setting(), Map.of(
                "/liveness", HttpAnswers.probe(health, Probe.LIVENESS),
                "/readiness", HttpAnswers.probe(health, Probe.READINESS),
                "/actuator/health", HttpAnswers.json(() -> overall(bgp.health())),
                "/actuator/prometheus", HttpAnswers.prometheus(metrics, CalicoMetricTable.none()))) : null;
        PeersEndpoint peers = new PeersEndpoint(service);
        ConfdConfiguration.Listener a = configuration.admin();
        adminServer = new PathServer(a.host(), a.port(), a.setting(), Map.of(
                "/peers", HttpAnswers.json(() -> new Answer(200, peers.peers()))));
    }

    /** {@code /actuator/health}: the {@code bgp} component and both probes, the worst status overall (Actuator's). */
    private Answer overall(BgpHealth.Answer bgp) {
        return HttpAnswers.health(health, Map.of("bgp", new HttpAnswers.Component(bgp.up() ? Status.UP : Status.DOWN,
                bgp.details())));
    }

    /**
     * Starts confd with {@code variables} as its environment.
     *
     * @throws IllegalArgumentException naming the variable whose value cannot be used
     */
    public static ConfdApplication start(Map<String, String> variables) {
        return start(variables, null);
    }

    /** As {@link #start(Map)}, with a Kubernetes client for typha discovery (a test's mock API server). */
    public static ConfdApplication start(Map<String, String> variables, KubernetesClient kubernetes) {
        ConfdApplication app = new ConfdApplication(ConfdConfiguration.fromVariables(variables), kubernetes);
        try {
            // The probes answer (not ready) while the service starts.
            if (app.healthServer != null) {
                app.healthServer.start();
            }
            app.adminServer.start();
            app.service.start();
        } catch (RuntimeException e) {
            app.close();
            throw e;
        }
        return app;
    }

    /** {@return the aggregator the service reports to} */
    public HealthAggregator health() {
        return health;
    }

    public ConfdService service() {
        return service;
    }

    /** {@return the health port actually bound}, -1 when health is not served (CONFD_HEALTHENABLED=false) */
    public int healthPort() {
        return healthServer == null ? -1 : healthServer.boundPort();
    }

    /** {@return the admin port actually bound} */
    public int adminPort() {
        return adminServer.boundPort();
    }

    /**
     * {@return whether confd's start-up is done}: ready, or its first configuration pass made (the end of
     * an AppCDS training run: BIRD, which confd's readiness waits for, starts only after that pass).
     */
    boolean startedUp() {
        ConfdDaemon daemon = service.daemon();
        return health.summary().ready() || daemon != null && daemon.status().result() != ConfdStatus.Result.WAITING;
    }

    /** Stops the service, then the servers; idempotent. */
    @Override
    public void close() {
        if (closed.getCount() == 0) {
            return;
        }
        service.stop();
        adminServer.stop();
        if (healthServer != null) {
            healthServer.stop();
        }
        jvmMeters.close();
        metrics.close();
        log.info("confd stopped");
        closed.countDown();
    }

    /**
     * {@code java -jar confd-service-exec.jar [--VARIABLE=value…]}: confd on this node until SIGTERM. A
     * bad setting is one line naming the variable and the reason, exit status 1.
     */
    public static void main(String[] args) throws InterruptedException {
        calico.libcalico.config.PlainMain.run("confd", args, ConfdApplication::start, app -> {
            log.info("confd started: health port {}, admin port {}", app.healthPort(), app.adminPort());
            try {
                TrainingRun.endOnceReady("confd", app::startedUp);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // stopped by SIGTERM before it was ready: the hook closes it
            }
        });
    }
}
