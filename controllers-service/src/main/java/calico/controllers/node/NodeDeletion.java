package calico.controllers.node;

import calico.api.model.Node;
import calico.controllers.reconcile.Change;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd datastore: a Calico Node whose Kubernetes Node is gone is deleted (on the Kubernetes
 * datastore they are one object, so Kubernetes deletes both). Calico Nodes of no Kubernetes node
 * (no {@code k8s} orchRef) are never touched. Deletes carry the resourceVersion read: a Node
 * changed meanwhile is left to the next run.
 */
public final class NodeDeletion {

    private static final Logger LOG = LoggerFactory.getLogger(NodeDeletion.class);

    private NodeDeletion() {
    }

    /** {@return the Calico Nodes deleted} */
    public static List<Change> reconcile(Datastore datastore, ClusterNodes nodes) {
        List<Change> out = new ArrayList<>();
        for (Node n : nodes.calico().values()) {
            Optional<String> k8s = ClusterNodes.kubernetesName(n);
            if (k8s.isEmpty() || nodes.kubernetes().containsKey(k8s.get())) {
                continue;
            }
            try {
                datastore.delete(n.key(), n.metadata().resourceVersion());
                LOG.info("deleted Calico Node {}: its Kubernetes Node {} is gone", n.metadata().name(), k8s.get());
                out.add(new Change.Deleted(n.key()));
            } catch (DatastoreException.NotFound | DatastoreException.Conflict e) {
                LOG.info("Calico Node {} changed or went meanwhile; next run decides", n.metadata().name());
            }
        }
        return out;
    }
}
