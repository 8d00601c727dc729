package calico.controllers.app;

import calico.api.model.Node;
import calico.api.model.ResourceKind;
import calico.controllers.config.RunConfig;
import calico.controllers.ipam.GcResult;
import calico.controllers.ipam.GcState;
import calico.controllers.ipam.IpamGarbageCollector;
import calico.controllers.node.AutoHostEndpoints;
import calico.controllers.node.ClusterNodes;
import calico.controllers.node.LabelSync;
import calico.controllers.node.NodeDeletion;
import calico.controllers.reconcile.Change;
import calico.controllers.reconcile.DatastoreTrigger;
import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.libcalico.datastore.Datastore;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The node controller with one {@link RunConfig.NodeConfig}: each run reads the Kubernetes Nodes and
 * the Calico Nodes once, then deletes Calico Nodes of gone Kubernetes Nodes (etcd), syncs labels
 * (etcd, {@code syncLabels}), keeps the automatic host endpoints, and collects IPAM garbage. Runs on a
 * Kubernetes Node event, a Calico Node event, and every {@code min(reconcilerPeriod, leakGracePeriod / 2)}.
 */
final class NodeControllers implements AutoCloseable {

    /** What one run did. */
    record Run(List<Change> deletedNodes, List<Change> syncedLabels, List<Change> hostEndpoints, GcResult gc) {
    }

    private final Datastore datastore;
    private final KubernetesClient client;
    private final IpamGarbageCollector gc;
    private final KubernetesPods pods;
    private final IpamMetrics metrics;
    private final RunConfig.NodeConfig config;
    private final ReconcileLoop loop;
    private final DatastoreTrigger calicoNodes;
    private SharedIndexInformer<io.fabric8.kubernetes.api.model.Node> kubernetesNodes;
    /** The GC's memory between runs; only the loop thread touches it. */
    private GcState gcState = GcState.empty();
    private volatile Run last;

    NodeControllers(Datastore datastore, KubernetesClient client, IpamGarbageCollector gc, KubernetesPods pods,
                    IpamMetrics metrics,
                    RunConfig.NodeConfig config, LoopWatch loops) {
        this.datastore = datastore;
        this.client = client;
        this.gc = gc;
        this.pods = pods;
        this.metrics = metrics;
        this.config = config;
        Duration period = config.leakGracePeriod().map(g -> g.dividedBy(2)).filter(h -> h.compareTo(config.reconcilerPeriod()) < 0)
                .orElse(config.reconcilerPeriod());
        if (period.compareTo(Duration.ofMillis(500)) < 0) {
            period = Duration.ofMillis(500);
        }
        this.loop = new ReconcileLoop("node", period, Duration.ofSeconds(1), this::reconcile, loops);
        this.calicoNodes = new DatastoreTrigger(datastore, ResourceKind.NODE, loop::trigger);
    }

    void start() {
        pods.startCache();
        kubernetesNodes = client.nodes().inform(new TriggerOnChange<>(loop::trigger));
        calicoNodes.start();
        loop.start();
    }

    /** {@return the last run}, null before the first. */
    Run last() {
        return last;
    }

    private void reconcile() {
        Map<String, Map<String, String>> k8s = new HashMap<>();
        for (io.fabric8.kubernetes.api.model.Node n : client.nodes().list().getItems()) {
            k8s.put(n.getMetadata().getName(), n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels());
        }
        List<Node> calico = datastore.list(ResourceKind.NODE).items().stream().map(Node.class::cast).toList();
        ClusterNodes nodes = ClusterNodes.of(k8s, calico);
        List<Change> deleted = config.deleteNodes() ? NodeDeletion.reconcile(datastore, nodes) : List.of();
        List<Change> labels = config.syncLabels() ? LabelSync.reconcile(datastore, nodes) : List.of();
        if (!deleted.isEmpty() || !labels.isEmpty()) {
            calico = datastore.list(ResourceKind.NODE).items().stream().map(Node.class::cast).toList();
            nodes = ClusterNodes.of(k8s, calico);
        }
        List<Change> heps = AutoHostEndpoints.reconcile(datastore, nodes, config.hostEndpoints());
        GcResult result = gc.reconcile(nodes, config.leakGracePeriod(), gcState);
        gcState = result.state();
        metrics.record(result);
        last = new Run(deleted, labels, heps, result);
    }

    @Override
    public void close() {
        if (kubernetesNodes != null) {
            kubernetesNodes.close();
        }
        calicoNodes.close();
        loop.close();
        pods.stopCache();
    }
}
