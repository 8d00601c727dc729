package calico.controllers.node;

import calico.api.model.Node;
import calico.controllers.reconcile.Change;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd datastore, {@code syncLabels: Enabled}: each Calico Node of a Kubernetes Node carries that
 * Node's labels. The labels copied last time are kept in the annotation
 * {@value #KUBE_LABELS} (Calico's), so a label removed from the Kubernetes Node is removed from the
 * Calico Node, while labels set on the Calico Node alone stay. Updates carry the resourceVersion read.
 */
public final class LabelSync {

    /** The Kubernetes labels last copied onto the Calico Node, as JSON (Calico's annotation). */
    public static final String KUBE_LABELS = "projectcalico.org/kube-labels";

    private static final Logger LOG = LoggerFactory.getLogger(LabelSync.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> STRINGS = new TypeReference<>() { };

    private LabelSync() {
    }

    /** {@return the Calico Nodes updated} */
    public static List<Change> reconcile(Datastore datastore, ClusterNodes nodes) {
        List<Change> out = new ArrayList<>();
        for (Node n : nodes.calico().values()) {
            Optional<Map<String, String>> k8sLabels = ClusterNodes.kubernetesName(n).map(nodes.kubernetes()::get);
            if (k8sLabels.isEmpty()) {
                continue; // not a Kubernetes node, or its Node is gone (NodeDeletion's business)
            }
            Node desired = desired(n, k8sLabels.get());
            if (desired.equals(n)) {
                continue;
            }
            try {
                datastore.update(desired);
                LOG.info("Calico Node {}: labels synced from its Kubernetes Node", n.metadata().name());
                out.add(new Change.Updated(n.key()));
            } catch (DatastoreException.NotFound | DatastoreException.Conflict e) {
                LOG.info("Calico Node {} changed or went meanwhile; next run syncs it", n.metadata().name());
            }
        }
        return out;
    }

    /** {@return {@code n} carrying {@code k8sLabels}} (itself when it already does). */
    static Node desired(Node n, Map<String, String> k8sLabels) {
        Map<String, String> previous = previous(n);
        Map<String, String> labels = new TreeMap<>(n.metadata().labels());
        previous.keySet().forEach(k -> {
            if (!k8sLabels.containsKey(k)) {
                labels.remove(k);
            }
        });
        labels.putAll(k8sLabels);
        Map<String, String> annotations = new HashMap<>(n.metadata().annotations());
        annotations.put(KUBE_LABELS, json(new TreeMap<>(k8sLabels)));
        if (labels.equals(n.metadata().labels()) && previous.equals(k8sLabels)) {
            return n;
        }
        return n.withMetadata(n.metadata().withLabels(labels).withAnnotations(annotations));
    }

    private static Map<String, String> previous(Node n) {
        String text = n.metadata().annotations().get(KUBE_LABELS);
        if (text == null || text.isEmpty()) {
            return Map.of();
        }
        try {
            return JSON.readValue(text, STRINGS);
        } catch (JsonProcessingException e) {
            LOG.warn("Calico Node {}: annotation {} is not a JSON map of strings; treating it as empty",
                    n.metadata().name(), KUBE_LABELS);
            return Map.of();
        }
    }

    private static String json(Map<String, String> labels) {
        try {
            return JSON.writeValueAsString(labels);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
