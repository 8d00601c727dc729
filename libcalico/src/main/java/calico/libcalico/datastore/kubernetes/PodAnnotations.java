package calico.libcalico.datastore.kubernetes;

import calico.api.k8s.PodConverter;
import calico.api.model.WorkloadEndpoint;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * WorkloadEndpoint writes as Calico's KDD makes them for the CNI plugin: the endpoint lives in
 * its Pod, so a create or update records the endpoint's IPs and container ID in the Pod's
 * {@code cni.projectcalico.org/*} annotations, and a delete blanks the IP annotations (which is
 * also what tells Calico a terminating pod has released its IPs). Nothing else in the Pod changes.
 */
final class PodAnnotations {

    private PodAnnotations() {
    }

    /** {@return the Pod carrying {@code wep}'s IPs and container ID}. */
    static ObjectNode record(JsonNode pod, WorkloadEndpoint wep) {
        ObjectNode out = ((ObjectNode) pod).deepCopy();
        ObjectNode annotations = out.with("metadata").with("annotations");
        var nets = wep.spec() == null ? java.util.List.<String>of() : wep.spec().ipNetworks();
        if (nets.isEmpty()) {
            annotations.remove(PodConverter.ANNOTATION_POD_IP);
            annotations.remove(PodConverter.ANNOTATION_POD_IPS);
        } else {
            annotations.put(PodConverter.ANNOTATION_POD_IP, nets.get(0));
            annotations.put(PodConverter.ANNOTATION_POD_IPS, String.join(",", nets));
        }
        String containerId = wep.spec() == null ? null : wep.spec().containerID();
        if (containerId != null && !containerId.isEmpty()) {
            annotations.put(PodConverter.ANNOTATION_CONTAINER_ID, containerId);
        }
        return out;
    }

    /** {@return the Pod with its IP annotations blanked}: the IPs are released. */
    static ObjectNode release(JsonNode pod) {
        ObjectNode out = ((ObjectNode) pod).deepCopy();
        ObjectNode annotations = out.with("metadata").with("annotations");
        annotations.put(PodConverter.ANNOTATION_POD_IP, "");
        annotations.put(PodConverter.ANNOTATION_POD_IPS, "");
        return out;
    }
}
