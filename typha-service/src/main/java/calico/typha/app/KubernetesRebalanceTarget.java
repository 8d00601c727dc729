package calico.typha.app;

import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.SmartLifecycle;

/**
 * The rebalancing target for {@code TYPHA_CONNECTIONREBALANCINGMODE=kubernetes}: every poll
 * interval, the replica count is the number of ready endpoints of typha's own service
 * (TYPHA_K8SSERVICENAME in TYPHA_K8SNAMESPACE, port TYPHA_K8SPORTNAME) in its EndpointSlices,
 * or, when it has none, in its Endpoints as Spring Cloud Kubernetes discovery sees them, and the expected clients are TYPHA_EXPECTEDCLIENTS when set,
 * otherwise the cluster's node count (one felix per node, as Calico counts). The target is
 * Calico's ({@link TyphaKubernetesProperties#target}): per syncer type, 20% over an even share
 * across one replica fewer, between TYPHA_MAXCONNECTIONSLOWERLIMIT and
 * TYPHA_MAXCONNECTIONSUPPERLIMIT; 0 (no rebalancing) for a lone typha.
 *
 * <p>Falls back to configuration when Kubernetes does not answer or lists no endpoint (TYPHA_REPLICAS),
 * and to no rebalancing (0) when the client count is unknown: moving clients on a guess is
 * worse than not moving them. The typha timer reads {@link #getAsInt()} from the cached value;
 * the API calls happen on this class's own thread.
 */
public final class KubernetesRebalanceTarget implements IntSupplier, SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(KubernetesRebalanceTarget.class);

    /** Where a poll's replica count came from. */
    public enum ReplicaSource {
        /** Ready endpoints in the service's {@code discovery.k8s.io/v1} EndpointSlices. */
        ENDPOINT_SLICES,
        /** Ready addresses of the service's {@code v1} Endpoints (through the discovery client). */
        ENDPOINTS,
        /** Neither listed a ready typha (or Kubernetes did not answer): TYPHA_REPLICAS. */
        CONFIGURATION
    }

    /** What one poll found, for tests and logs. */
    public record Counts(int replicas, ReplicaSource source, int clients, int target) {
        public boolean replicasFromKubernetes() {
            return source != ReplicaSource.CONFIGURATION;
        }
    }

    private final DiscoveryClient discovery;
    private final KubernetesClient client;
    private final TyphaKubernetesProperties k8s;
    private final TyphaProperties config;
    private volatile Counts last = new Counts(0, ReplicaSource.CONFIGURATION, 0, 0);
    private ScheduledExecutorService poller;

    public KubernetesRebalanceTarget(DiscoveryClient discovery, KubernetesClient client, TyphaKubernetesProperties k8s,
                                     TyphaProperties config) {
        this.discovery = discovery;
        this.client = client;
        this.k8s = k8s;
        this.config = config;
    }

    @Override
    public int getAsInt() {
        return last.target();
    }

    /** {@return the last poll's counts} */
    public Counts counts() {
        return last;
    }

    /**
     * Reads the counts now (the poller calls this; tests may too). Replicas: the service's
     * EndpointSlices first (what current Kubernetes and Calico's typha read), then its Endpoints
     * (older clusters, or a controller that only mirrors Endpoints), then TYPHA_REPLICAS.
     */
    public Counts poll() {
        int replicas = 0;
        ReplicaSource source = ReplicaSource.CONFIGURATION;
        try {
            replicas = sliceReplicas();
            source = ReplicaSource.ENDPOINT_SLICES;
        } catch (RuntimeException e) {
            log.debug("Cannot read the EndpointSlices of {}/{}: {}", k8s.k8sNamespace(), k8s.k8sServiceName(),
                    e.toString());
        }
        if (replicas == 0) {
            try {
                List<ServiceInstance> instances = discovery.getInstances(k8s.k8sServiceName());
                replicas = (int) instances.stream().map(ServiceInstance::getHost).distinct().count();
                source = ReplicaSource.ENDPOINTS;
            } catch (RuntimeException e) {
                log.warn("Cannot read the endpoints of {}/{}: {}", k8s.k8sNamespace(), k8s.k8sServiceName(),
                        e.toString());
            }
        }
        if (replicas == 0) {
            log.warn("Service {}/{} has no ready endpoint (EndpointSlices or Endpoints): using TYPHA_REPLICAS={}",
                    k8s.k8sNamespace(), k8s.k8sServiceName(), config.replicas());
            replicas = config.replicas();
            source = ReplicaSource.CONFIGURATION;
        }
        int clients = config.expectedClients();
        if (clients <= 0) {
            try {
                clients = client.nodes().list().getItems().size();
            } catch (RuntimeException e) {
                log.warn("Cannot count the cluster's nodes: {}; not rebalancing until it can", e.toString());
                clients = 0;
            }
        }
        Counts c = new Counts(replicas, source, clients, k8s.target(clients, replicas,
                SyncerType.values().length, config.maxConnectionsUpperLimit()));
        if (!c.equals(last)) {
            log.info("Rebalancing: {} replicas ({}), {} clients, target {} connections per typha", c.replicas(),
                    c.source(), c.clients(), c.target());
        }
        last = c;
        return c;
    }

    /**
     * {@return the ready endpoint addresses serving port TYPHA_K8SPORTNAME in the service's
     * EndpointSlices}, read as felix and confd read them to find typha; 0 when there is none.
     */
    int sliceReplicas() {
        return TyphaDiscovery.readyEndpoints(client, k8s.k8sNamespace(), k8s.k8sServiceName(), k8s.k8sPortName())
                .size();
    }

    @Override
    public synchronized void start() {
        if (poller != null) {
            return;
        }
        poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "typha-k8s-poll");
            t.setDaemon(true);
            return t;
        });
        poller.scheduleWithFixedDelay(() -> {
            try {
                poll();
            } catch (RuntimeException e) {
                log.warn("Rebalancing poll failed: {}", e.toString());
            }
        }, 0, k8s.k8sPollInterval().toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void stop() {
        if (poller != null) {
            poller.shutdownNow();
            poller = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return poller != null;
    }
}
