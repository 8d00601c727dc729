package calico.controllers.app;

import calico.api.validation.PolicyNaming;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationOptions;
import calico.controllers.leader.LeaderElection;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.health.HealthAggregator;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.Optional;
import java.util.UUID;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** kube-controllers' beans: the datastore, the Kubernetes client, and the daemon. */
@Configuration(proxyBeanMethods = false)
class ControllersConfiguration {

    /**
     * kube-controllers' names for the shared datastore settings: {@code controllers.*} from Calico's generic
     * variables; etcdv3 or kubernetes, as Calico's kube-controllers take.
     */
    static final DatastoreProperties.Source DATASTORE = new DatastoreProperties.Source("controllers", "",
            java.util.Set.of(DatastoreConfig.Type.ETCDV3, DatastoreConfig.Type.KUBERNETES));

    @Bean
    DatastoreProperties controllersDatastore(Environment environment) {
        return DatastoreProperties.bind(environment, DATASTORE);
    }

    /**
     * The datastore. On etcd the controllers write the policies converted from Kubernetes NetworkPolicies,
     * whose {@code knp.default.} names every other writer is refused: only this client's validator accepts them.
     */
    @Bean(destroyMethod = "close")
    Datastore controllersDatastoreClient(DatastoreProperties properties) {
        DatastoreConfig config = properties.toConfig();
        if (config.type() == DatastoreConfig.Type.ETCDV3) {
            return new EtcdDatastore(config.etcd(), ResourceValidator.with(new ValidationOptions(PolicyNaming.TIER_PREFIXED,
                    true)), Clock.systemUTC());
        }
        return config.open();
    }

    /** The cluster's API: Nodes, Pods and the Lease, on either datastore. */
    @Bean(destroyMethod = "close")
    KubernetesClient controllersKubernetesClient(DatastoreProperties properties) {
        return new KubernetesClientBuilder().withConfig(properties.kubernetesClientConfig()).build();
    }

    /**
     * The Lease's own client: a request gives up after the retry period, without fabric8's retries, so
     * that a leader cut off from the API server notices within its renew deadline and stops before a
     * standby can take the Lease (a request held open would otherwise outlast the deadline).
     */
    @Bean(destroyMethod = "close")
    KubernetesClient controllersLeaseClient(DatastoreProperties properties, ControllersProperties controllers) {
        int timeout = (int) controllers.leaderElection().retryPeriod().toMillis();
        return new KubernetesClientBuilder().withConfig(new ConfigBuilder(properties.kubernetesClientConfig())
                .withRequestTimeout(timeout).withConnectionTimeout(timeout).withRequestRetryBackoffLimit(0).build()).build();
    }

    @Bean
    ControllersDaemon controllersDaemon(DatastoreProperties datastore, Datastore client,
                                        @Qualifier("controllersKubernetesClient") KubernetesClient kubernetes,
                                        @Qualifier("controllersLeaseClient") KubernetesClient controllersLeaseClient,
                                        ControllersProperties properties, HealthAggregator health,
                                        ObjectProvider<PrometheusMeterRegistry> registry, ObjectProvider<Clock> clock,
                                        Environment environment) {
        ControllersProperties.LeaderElection le = properties.leaderElection();
        Optional<LeaderElection.Settings> election = le.enabled()
                ? Optional.of(new LeaderElection.Settings(le.leaseName(), le.leaseNamespace(),
                        le.identity().isEmpty() ? "kube-controllers-" + UUID.randomUUID() : le.identity(),
                        le.leaseDuration(), le.renewDeadline(), le.retryPeriod()))
                : Optional.empty();
        PrometheusMeterRegistry prometheus = registry.getIfAvailable();
        if (prometheus == null) {
            throw new IllegalStateException("no Prometheus registry (is micrometer-registry-prometheus on the classpath?)");
        }
        return new ControllersDaemon(client, datastore.type() == DatastoreConfig.Type.KUBERNETES, kubernetes,
                controllersLeaseClient,
                properties.toOverrides(), election, health, properties.loopStuckAfter(),
                prometheus, LoggingSystem.get(ControllersConfiguration.class.getClassLoader()),
                clock.getIfAvailable(Clock::systemUTC));
    }
}
