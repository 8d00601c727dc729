package calico.controllers.app;

import calico.api.model.ResourceKind;
import calico.controllers.config.ConfigController;
import calico.controllers.config.EnvOverrides;
import calico.controllers.config.RunConfig;
import calico.controllers.ipam.IpamGarbageCollector;
import calico.controllers.leader.LeaderElection;
import calico.controllers.loadbalancer.LoadBalancerIpam;
import calico.controllers.reconcile.DatastoreTrigger;
import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import calico.libcalico.health.DebugProfileServer;
import calico.libcalico.health.PrometheusMetricsServer;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.SmartLifecycle;

/**
 * kube-controllers' life: wins the Lease (or runs at once without leader election), then keeps
 * KubeControllersConfiguration {@code default} in step ({@link ConfigController}) and runs what it
 * enables with the settings it gives, restarting a controller when its settings change; applies
 * {@code logSeverityScreen}, serves {@code /metrics} on {@code prometheusMetricsPort} and, on etcd,
 * compacts every {@code etcdV3CompactionPeriod}. Losing the
 * Lease stops the controllers; this replica then stands again.
 */
final class ControllersDaemon implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(ControllersDaemon.class);

    private final Datastore datastore;
    private final boolean kubernetes;
    private final KubernetesClient client;
    private final KubernetesClient leaseClient;
    private final EnvOverrides env;
    private final Optional<LeaderElection.Settings> election;
    private final HealthReporter health;
    private final LoopWatch loops = new LoopWatch();
    private final LoopHealth loopHealth;
    private final PrometheusMeterRegistry registry;
    private final LoggingSystem logging;
    private final IpamMetrics metrics;
    private final IpamGarbageCollector gc;
    private final KubernetesPods pods;
    private LeaderElection leader;
    private ReconcileLoop configLoop;
    private DatastoreTrigger configTrigger;
    private NodeControllers node;
    private LoadBalancerController loadBalancer;
    private EtcdCompactor compactor;
    /** etcd only: the policy, namespace, serviceaccount and workloadendpoint controllers that run. */
    private final java.util.Map<calico.controllers.config.Controller, SyncController> syncs =
            new java.util.EnumMap<>(calico.controllers.config.Controller.class);
    private final LoadBalancerIpam lbIpam;
    private final KubernetesServices services;
    private RunConfig running;
    private PrometheusMetricsServer metricsServer;
    private DebugProfileServer debugServer;
    private boolean started;

    @SuppressWarnings("checkstyle:ParameterNumber")
    ControllersDaemon(Datastore datastore, boolean kubernetes, KubernetesClient client, KubernetesClient leaseClient,
                      EnvOverrides env,
                      Optional<LeaderElection.Settings> election, HealthAggregator healthAggregator,
                      Duration loopStuckAfter, PrometheusMeterRegistry registry, LoggingSystem logging, Clock clock) {
        this.datastore = datastore;
        this.kubernetes = kubernetes;
        this.client = client;
        this.leaseClient = leaseClient;
        this.env = env;
        this.election = election;
        this.health = healthAggregator.registerReporter("KubeControllers", true, true, null);
        this.loopHealth = new LoopHealth(healthAggregator, loops, loopStuckAfter, env.healthEnabled().orElse(true), clock);
        this.registry = registry;
        this.logging = logging;
        this.metrics = new IpamMetrics(registry);
        IpamClient ipam = new IpamClient(datastore, IpamOptions.defaults());
        this.pods = new KubernetesPods(client);
        this.gc = new IpamGarbageCollector(datastore, ipam, pods, clock);
        this.services = new KubernetesServices(client);
        this.lbIpam = new LoadBalancerIpam(datastore, ipam, services);
    }

    @Override
    public synchronized void start() {
        started = true;
        loopHealth.start();
        if (election.isPresent()) {
            health.report(true, true, "standby: waiting for the Lease");
            leader = new LeaderElection(leaseClient, election.get(), this::lead, this::standBy);
            leader.start();
        } else {
            lead();
        }
    }

    private synchronized void lead() {
        health.report(true, true, "leading");
        ConfigController config = new ConfigController(datastore, env, kubernetes, this::apply);
        configLoop = new ReconcileLoop("config", Duration.ofMinutes(5), Duration.ofSeconds(1), config::reconcile, loops);
        configTrigger = new DatastoreTrigger(datastore, ResourceKind.KUBE_CONTROLLERS_CONFIGURATION, configLoop::trigger);
        configTrigger.start();
        configLoop.start();
    }

    private synchronized void standBy() {
        stopControllers();
        health.report(true, true, "standby: another replica leads");
    }

    /** A new running configuration: restart what changed. */
    private synchronized void apply(RunConfig next) {
        logging.setLogLevel("calico", level(next.logSeverity()));
        loopHealth.enabled(next.healthEnabled());
        if (running == null || running.prometheusPort() != next.prometheusPort()) {
            if (metricsServer != null) {
                metricsServer.stop();
                metricsServer = null;
            }
            if (next.prometheusPort() > 0) {
                metricsServer = new PrometheusMetricsServer(registry, "", next.prometheusPort(),
                        "KubeControllersConfiguration default spec.prometheusMetricsPort", ControllersCalicoMetrics.TABLE);
                metricsServer.start();
            }
        }
        if (running == null || running.debugProfilePort() != next.debugProfilePort()) {
            if (debugServer != null) {
                debugServer.stop();
                debugServer = null;
            }
            if (next.debugProfilePort() > 0) {
                debugServer = new DebugProfileServer("", next.debugProfilePort(),
                        "KubeControllersConfiguration default spec.debugProfilePort");
                debugServer.start();
            }
        }
        if (datastore instanceof EtcdDatastore etcd
                && (running == null || !running.compactionPeriod().equals(next.compactionPeriod()))) {
            if (compactor != null) {
                compactor.close();
                compactor = null;
            }
            if (!next.compactionPeriod().isZero()) {
                compactor = new EtcdCompactor(etcd, next.compactionPeriod(), loops);
                compactor.start();
            }
        }
        if (running == null || !running.node().equals(next.node())) {
            if (node != null) {
                node.close();
                node = null;
            }
            if (next.node().isPresent()) {
                node = new NodeControllers(datastore, client, gc, pods, metrics, next.node().get(), loops);
                node.start();
            }
        }
        if (running == null || !running.loadBalancer().equals(next.loadBalancer())) {
            if (loadBalancer != null) {
                loadBalancer.close();
                loadBalancer = null;
            }
            if (next.loadBalancer().isPresent()) {
                loadBalancer = new LoadBalancerController(datastore, services, lbIpam, next.loadBalancer().get(),
                        loops);
                loadBalancer.start();
            }
        }
        if (!kubernetes && (running == null || !running.reconcilerPeriods().equals(next.reconcilerPeriods()))) {
            syncs.values().forEach(SyncController::close);
            syncs.clear();
            next.reconcilerPeriods().forEach((which, period) -> {
                SyncController c = SyncController.of(which, period, datastore, client, loops);
                syncs.put(which, c);
                c.start();
            });
        }
        running = next;
        LOG.info("kube-controllers running: {}", next.enabled());
    }

    /** {@return the node controller's last run} (tests), null when it has not run. */
    synchronized NodeControllers.Run lastNodeRun() {
        return node == null ? null : node.last();
    }

    synchronized Optional<RunConfig> running() {
        return Optional.ofNullable(running);
    }

    private void stopControllers() {
        if (configTrigger != null) {
            configTrigger.close();
            configTrigger = null;
        }
        if (configLoop != null) {
            configLoop.close();
            configLoop = null;
        }
        if (node != null) {
            node.close();
            node = null;
        }
        if (loadBalancer != null) {
            loadBalancer.close();
            loadBalancer = null;
        }
        syncs.values().forEach(SyncController::close);
        syncs.clear();
        if (compactor != null) {
            compactor.close();
            compactor = null;
        }
        if (metricsServer != null) {
            metricsServer.stop();
            metricsServer = null;
        }
        if (debugServer != null) {
            debugServer.stop();
            debugServer = null;
        }
        running = null;
    }

    private static LogLevel level(String severity) {
        return switch (severity) {
            case "Trace" -> LogLevel.TRACE;
            case "Debug" -> LogLevel.DEBUG;
            case "Warning" -> LogLevel.WARN;
            case "Error", "Fatal" -> LogLevel.ERROR;
            default -> LogLevel.INFO;
        };
    }

    @Override
    public void stop() {
        LeaderElection l;
        synchronized (this) {
            started = false;
            l = leader;
            leader = null;
        }
        if (l != null) {
            l.close(); // releases the Lease: a standby takes over at once
        }
        synchronized (this) {
            stopControllers();
        }
        loopHealth.close();
    }

    @Override
    public synchronized boolean isRunning() {
        return started;
    }
}
