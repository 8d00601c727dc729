package calico.controllers.app;

import calico.api.k8s.NetworkPolicyConverter;
import calico.api.k8s.ProfileConverter;
import calico.api.model.ResourceKind;
import calico.controllers.config.Controller;
import calico.controllers.reconcile.Change;
import calico.controllers.reconcile.DatastoreTrigger;
import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.controllers.sync.ResourceSync;
import calico.libcalico.datastore.Datastore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * One of Calico's etcd-mode sync controllers (policy, namespace, serviceaccount, workloadendpoint) on a
 * loop of its own: runs on an event of its Kubernetes kind, a change of its Calico kind in etcd, and every
 * {@code reconcilerPeriod}; a run reads its kind from the informer's cache ({@link InformedList}), not a list.
 */
final class SyncController implements AutoCloseable {

    private final ReconcileLoop loop;
    private final DatastoreTrigger stored;
    private final InformedList<?> kubernetes;
    private volatile List<Change> last;

    private <T extends HasMetadata> SyncController(String name, Duration period, Datastore etcd, ResourceKind kind,
                                                   InformedList<T> kubernetes, Function<List<T>, List<Change>> run,
                                                   LoopWatch loops) {
        this.loop = new ReconcileLoop(name, period, Duration.ofSeconds(1), () -> last = run.apply(kubernetes.items()),
                loops);
        this.stored = new DatastoreTrigger(etcd, kind, loop::trigger);
        this.kubernetes = kubernetes;
    }

    /** {@return the controller {@code which} on etcd {@code etcd}}, fed from the cluster {@code client} reads. */
    static SyncController of(Controller which, Duration period, Datastore etcd, KubernetesClient client,
                             LoopWatch loops) {
        KubernetesDesired desired = new KubernetesDesired(client);
        return switch (which) {
            case POLICY -> new SyncController("policy", period, etcd, ResourceKind.NETWORK_POLICY, new InformedList<>(
                    () -> client.network().v1().networkPolicies().inAnyNamespace().list().getItems(),
                    h -> client.network().v1().networkPolicies().inAnyNamespace().inform(h)),
                    items -> ResourceSync.reconcile(etcd, ResourceKind.NETWORK_POLICY,
                            n -> n.startsWith(NetworkPolicyConverter.NAME_PREFIX), desired.networkPolicies(items)), loops);
            case NAMESPACE -> new SyncController("namespace", period, etcd, ResourceKind.PROFILE, new InformedList<>(
                    () -> client.namespaces().list().getItems(), h -> client.namespaces().inform(h)),
                    items -> ResourceSync.reconcile(etcd, ResourceKind.PROFILE,
                            n -> n.startsWith(ProfileConverter.NAMESPACE_PROFILE_PREFIX), desired.namespaceProfiles(items)),
                    loops);
            case SERVICE_ACCOUNT -> new SyncController("serviceaccount", period, etcd, ResourceKind.PROFILE,
                    new InformedList<>(() -> client.serviceAccounts().inAnyNamespace().list().getItems(),
                            h -> client.serviceAccounts().inAnyNamespace().inform(h)),
                    items -> ResourceSync.reconcile(etcd, ResourceKind.PROFILE,
                            n -> n.startsWith(ProfileConverter.SERVICE_ACCOUNT_PROFILE_PREFIX),
                            desired.serviceAccountProfiles(items)), loops);
            case WORKLOAD_ENDPOINT -> new SyncController("workloadendpoint", period, etcd, ResourceKind.WORKLOAD_ENDPOINT,
                    new InformedList<>(() -> client.pods().inAnyNamespace().list().getItems(),
                            h -> client.pods().inAnyNamespace().inform(h)),
                    items -> ResourceSync.workloadEndpointLabels(etcd, desired.workloadEndpoints(items)), loops);
            default -> throw new IllegalArgumentException(which + " is not a sync controller");
        };
    }

    void start() {
        kubernetes.start(loop::trigger);
        stored.start();
        loop.start();
    }

    List<Change> last() {
        return last;
    }

    @Override
    public void close() {
        kubernetes.close();
        stored.close();
        loop.close();
    }
}
