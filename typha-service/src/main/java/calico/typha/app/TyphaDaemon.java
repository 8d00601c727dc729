package calico.typha.app;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.DatastoreMetrics;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import calico.typha.server.TyphaServer;
import calico.typha.server.TyphaTls;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Opens the datastore and runs the {@link TyphaServer} for the application's lifetime. Its
 * {@value #STARTUP} health reporter is registered when the bean is made, before any probe is
 * served, and turns ready only once the server has started: with no reporter registered yet the
 * aggregate would say ready while typha could not serve a client (the fault suite saw typha ready
 * ~35 s early after a restart).
 */
@Component
public class TyphaDaemon implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(TyphaDaemon.class);
    /** The name of the reporter that is not ready until the server has started. */
    static final String STARTUP = "TyphaStartup";

    private final TyphaProperties properties;
    private final DatastoreProperties datastoreProperties;
    private final MeterRegistry meters;
    private final HealthAggregator health;
    private final ObjectProvider<KubernetesRebalanceTarget> kubernetesTarget;
    private final HealthReporter startup;
    private Datastore datastore;
    private TyphaServer server;

    public TyphaDaemon(TyphaProperties properties, DatastoreProperties datastoreProperties, MeterRegistry meters,
                       HealthAggregator health, ObjectProvider<KubernetesRebalanceTarget> kubernetesTarget) {
        this.properties = properties;
        this.datastoreProperties = datastoreProperties;
        this.meters = meters;
        this.health = health;
        this.kubernetesTarget = kubernetesTarget;
        this.startup = health.registerReporter(STARTUP, false, true, null);
        this.startup.report(false, false, "not started");
    }

    @Override
    public synchronized void start() {
        if (server != null) {
            return;
        }
        KubernetesRebalanceTarget k8sTarget = null;
        if (properties.connectionRebalancingMode().equals("kubernetes")) {
            k8sTarget = kubernetesTarget.getIfAvailable();
            if (k8sTarget == null) {
                throw new IllegalStateException("typha.connection-rebalancing-mode (TYPHA_CONNECTIONREBALANCINGMODE): "
                        + "kubernetes mode has no Kubernetes rebalancing source (TyphaKubernetesConfiguration)");
            }
        }
        datastore = datastoreProperties.toConfig().open();
        new DatastoreMetrics(datastore).bindTo(meters); // calico_datastore_invalid_objects_total (kubernetes datastore)
        var credentials = properties.tls() ? TyphaTls.serverCredentials(properties.caFile(), properties.serverCertFile(),
                properties.serverKeyFile()) : null;
        server = new TyphaServer(datastore, properties.serverSettings(), credentials, meters, health,
                version(), properties.tls() ? TyphaTls.clientIdentityCheck(properties.clientCn(),
                properties.clientUriSan()) : null);
        if (k8sTarget != null) {
            server.rebalanceTarget(k8sTarget);
        }
        server.start();
        startup.report(false, true, "serving on port " + server.port());
    }

    private static String version() {
        String v = TyphaDaemon.class.getPackage().getImplementationVersion();
        return v == null ? "calico-java" : v;
    }

    /** {@return the gRPC port in use} */
    public synchronized int port() {
        return server.port();
    }

    @Override
    public synchronized void stop() {
        if (server != null) {
            server.close();
            server = null;
        }
        if (datastore != null) {
            datastore.close();
            datastore = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return server != null;
    }
}
