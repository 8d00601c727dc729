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
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * One of Calico's etcd-mode sync controllers (policy, namespace, serviceaccount, workloadendpoint) on a
 * loop of its own: runs on an event of its Kubernetes kind, a change of its Calico kind in etcd, and every
 * {@code reconcilerPeriod}.
 */
final class SyncController implements AutoCloseable {

    private final ReconcileLoop loop;
    private final DatastoreTrigger stored;
    private final Supplier<SharedIndexInformer<? extends HasMetadata>> inform;
    private SharedIndexInformer<? extends HasMetadata> informer;
    private volatile List<Change> last;

    private SyncController(String name, Duration period, Datastore etcd, ResourceKind kind, Supplier<List<Change>> run,
                           java.util.function.Function<ResourceEventHandler<HasMetadata>,
                                   SharedIndexInformer<? extends HasMetadata>> informer, LoopWatch loops) {
        this.loop = new ReconcileLoop(name, period, Duration.ofSeconds(1), () -> last = run.get(), loops);
        this.stored = new DatastoreTrigger(etcd, kind, loop::trigger);
        ResourceEventHandler<HasMetadata> handler = new TriggerOnChange<>(loop::trigger);
        this.inform = () -> informer.apply(handler);
    }

    /** {@return the controller {@code which} on etcd {@code etcd}}, fed from the cluster {@code client} reads. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static SyncController of(Controller which, Duration period, Datastore etcd, KubernetesClient client,
                             LoopWatch loops) {
        KubernetesDesired desired = new KubernetesDesired(client);
        return switch (which) {
            case POLICY -> new SyncController("policy", period, etcd, ResourceKind.NETWORK_POLICY,
                    () -> ResourceSync.reconcile(etcd, ResourceKind.NETWORK_POLICY,
                            n -> n.startsWith(NetworkPolicyConverter.NAME_PREFIX), desired.networkPolicies()),
                    h -> (SharedIndexInformer) client.network().v1().networkPolicies().inAnyNamespace().inform((ResourceEventHandler) h),
                    loops);
            case NAMESPACE -> new SyncController("namespace", period, etcd, ResourceKind.PROFILE,
                    () -> ResourceSync.reconcile(etcd, ResourceKind.PROFILE,
                            n -> n.startsWith(ProfileConverter.NAMESPACE_PROFILE_PREFIX), desired.namespaceProfiles()),
                    h -> (SharedIndexInformer) client.namespaces().inform((ResourceEventHandler) h), loops);
            case SERVICE_ACCOUNT -> new SyncController("serviceaccount", period, etcd, ResourceKind.PROFILE,
                    () -> ResourceSync.reconcile(etcd, ResourceKind.PROFILE,
                            n -> n.startsWith(ProfileConverter.SERVICE_ACCOUNT_PROFILE_PREFIX), desired.serviceAccountProfiles()),
                    h -> (SharedIndexInformer) client.serviceAccounts().inAnyNamespace().inform((ResourceEventHandler) h),
                    loops);
            case WORKLOAD_ENDPOINT -> new SyncController("workloadendpoint", period, etcd, ResourceKind.WORKLOAD_ENDPOINT,
                    () -> ResourceSync.workloadEndpointLabels(etcd, desired.workloadEndpoints()),
                    h -> (SharedIndexInformer) client.pods().inAnyNamespace().inform((ResourceEventHandler) h), loops);
            default -> throw new IllegalArgumentException(which + " is not a sync controller");
        };
    }

    void start() {
        informer = inform.get();
        stored.start();
        loop.start();
    }

    List<Change> last() {
        return last;
    }

    @Override
    public void close() {
        if (informer != null) {
            informer.close();
        }
        stored.close();
        loop.close();
    }
}
