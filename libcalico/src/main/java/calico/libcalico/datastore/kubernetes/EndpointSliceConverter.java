package calico.libcalico.datastore.kubernetes;

import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesEndpointSliceSpec;
import calico.api.model.KubernetesEndpointSliceSpec.Endpoint;
import calico.api.model.KubernetesEndpointSliceSpec.EndpointPort;
import calico.api.model.ObjectMeta;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kubernetes {@code discovery.k8s.io/v1} EndpointSlice as the {@link KubernetesEndpointSlice}
 * felix resolves {@code services} matches with: the service it belongs to (its
 * {@code kubernetes.io/service-name} label), each endpoint's addresses and the ports. Conditions,
 * topology, hints and FQDN slices' meaning are left out: Calico's felix matches every listed
 * address whatever its conditions, and every field kept is carried to every felix.
 */
final class EndpointSliceConverter {

    private EndpointSliceConverter() {
    }

    static KubernetesEndpointSlice convert(JsonNode slice) {
        JsonNode m = slice.path("metadata");
        Map<String, String> labels = new HashMap<>();
        m.path("labels").fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
        List<Endpoint> endpoints = new ArrayList<>();
        for (JsonNode e : slice.path("endpoints")) {
            List<String> addresses = new ArrayList<>();
            e.path("addresses").forEach(a -> {
                if (!a.asText("").isEmpty()) {
                    addresses.add(a.asText());
                }
            });
            endpoints.add(new Endpoint(addresses));
        }
        List<EndpointPort> ports = new ArrayList<>();
        for (JsonNode p : slice.path("ports")) {
            JsonNode port = p.path("port");
            ports.add(new EndpointPort(p.path("name").asText(""), p.path("protocol").asText(""),
                    port.isNumber() ? port.asInt() : null));
        }
        String rv = m.path("resourceVersion").asText("");
        ObjectMeta meta = new ObjectMeta(m.path("name").asText(), m.path("namespace").asText(), null,
                m.path("uid").asText(null), rv.isEmpty() ? null : rv, null, m.path("creationTimestamp").asText(null),
                null, labels, null, null, null);
        return new KubernetesEndpointSlice(meta, new KubernetesEndpointSliceSpec(
                labels.getOrDefault(KubernetesEndpointSliceSpec.SERVICE_NAME_LABEL, ""), endpoints, ports));
    }
}
