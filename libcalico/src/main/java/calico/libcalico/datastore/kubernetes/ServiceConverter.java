package calico.libcalico.datastore.kubernetes;

import calico.api.model.KubernetesService;
import calico.api.model.KubernetesServiceSpec;
import calico.api.model.KubernetesServiceSpec.ServicePort;
import calico.api.model.ObjectMeta;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Kubernetes {@code v1} Service as the {@link KubernetesService} felix indexes: the addresses a
 * client may dial (cluster IPs, external IPs, load-balancer ingress IPs) and the ports. Selector,
 * session affinity, traffic policies and the rest are left out: nothing that reads this kind uses
 * them, and every field kept is carried to every felix.
 */
final class ServiceConverter {

    private ServiceConverter() {
    }

    static KubernetesService convert(JsonNode svc) {
        JsonNode m = svc.path("metadata");
        JsonNode spec = svc.path("spec");
        // clusterIPs is the whole list (dual stack); clusterIP alone is what an older server or client wrote.
        Set<String> cluster = new LinkedHashSet<>(texts(spec.path("clusterIPs")));
        String single = spec.path("clusterIP").asText("");
        if (!single.isEmpty()) {
            cluster.add(single);
        }
        cluster.remove("None"); // a headless service has no address of its own
        List<String> ingress = new ArrayList<>();
        for (JsonNode in : svc.path("status").path("loadBalancer").path("ingress")) {
            String ip = in.path("ip").asText("");
            if (!ip.isEmpty()) {
                ingress.add(ip);
            }
        }
        List<ServicePort> ports = new ArrayList<>();
        for (JsonNode p : spec.path("ports")) {
            ports.add(new ServicePort(p.path("name").asText(""), p.path("protocol").asText(""),
                    p.path("port").asInt(), p.path("nodePort").asInt()));
        }
        Map<String, String> labels = new HashMap<>();
        m.path("labels").fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
        String rv = m.path("resourceVersion").asText("");
        ObjectMeta meta = new ObjectMeta(m.path("name").asText(), m.path("namespace").asText(), null,
                m.path("uid").asText(null), rv.isEmpty() ? null : rv, null, m.path("creationTimestamp").asText(null),
                null, labels, null, null, null);
        return new KubernetesService(meta, new KubernetesServiceSpec(List.copyOf(cluster),
                texts(spec.path("externalIPs")), ingress, ports));
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> {
            if (!n.asText("").isEmpty()) {
                out.add(n.asText());
            }
        });
        return out;
    }
}
