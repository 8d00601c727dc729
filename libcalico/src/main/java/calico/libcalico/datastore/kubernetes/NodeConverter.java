package calico.libcalico.datastore.kubernetes;

import calico.api.model.ASNumber;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kubernetes Node as the Calico Node the kubernetes datastore presents for it. Calico keeps
 * its per-node data in the Kubernetes Node's annotations ({@code projectcalico.org/IPv4Address},
 * {@code projectcalico.org/ASNumber}, the tunnel addresses, WireGuard keys); labels are the
 * Kubernetes labels merged with the Calico-only labels kept in {@code projectcalico.org/labels}.
 * A malformed annotation is left out (and logged), as Calico does, rather than hiding the node.
 */
final class NodeConverter {

    private static final Logger LOG = LoggerFactory.getLogger(NodeConverter.class);

    static final String IPV4_ADDRESS = "projectcalico.org/IPv4Address";
    static final String IPV6_ADDRESS = "projectcalico.org/IPv6Address";
    static final String AS_NUMBER = "projectcalico.org/ASNumber";
    static final String RR_CLUSTER_ID = "projectcalico.org/RouteReflectorClusterID";
    static final String IPIP_TUNNEL_ADDR = "projectcalico.org/IPv4IPIPTunnelAddr";
    static final String VXLAN_TUNNEL_ADDR = "projectcalico.org/IPv4VXLANTunnelAddr";
    static final String VXLAN_TUNNEL_MAC = "projectcalico.org/VXLANTunnelMACAddr";
    static final String VXLAN_TUNNEL_ADDR_V6 = "projectcalico.org/IPv6VXLANTunnelAddr";
    static final String VXLAN_TUNNEL_MAC_V6 = "projectcalico.org/VXLANTunnelMACAddrV6";
    static final String WIREGUARD_ADDR = "projectcalico.org/IPv4WireguardInterfaceAddr";
    static final String WIREGUARD_ADDR_V6 = "projectcalico.org/IPv6WireguardInterfaceAddr";
    static final String WIREGUARD_KEY = "projectcalico.org/WireguardPublicKey";
    static final String WIREGUARD_KEY_V6 = "projectcalico.org/WireguardPublicKeyV6";
    static final String CALICO_LABELS = "projectcalico.org/labels";
    static final String CALICO_ANNOTATIONS = "projectcalico.org/annotations";

    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() { };

    private final ObjectMapper json;

    NodeConverter(ObjectMapper json) {
        this.json = json;
    }

    Node convert(JsonNode k8sNode) {
        JsonNode m = k8sNode.path("metadata");
        String name = m.path("name").asText();
        Map<String, String> annotations = strings(m.path("annotations"));

        Map<String, String> labels = new HashMap<>(strings(m.path("labels")));
        labels.putAll(jsonMap(name, annotations.get(CALICO_LABELS), CALICO_LABELS));
        Map<String, String> calicoAnnotations = jsonMap(name, annotations.get(CALICO_ANNOTATIONS), CALICO_ANNOTATIONS);

        ASNumber asn = null;
        String rawAsn = annotations.get(AS_NUMBER);
        if (rawAsn != null && !rawAsn.isEmpty()) {
            try {
                asn = ASNumber.parse(rawAsn);
            } catch (IllegalArgumentException e) {
                LOG.info("Node {}: ignoring annotation {}=\"{}\": {}", name, AS_NUMBER, rawAsn, e.getMessage());
            }
        }
        String v4 = nonEmpty(annotations.get(IPV4_ADDRESS));
        String v6 = nonEmpty(annotations.get(IPV6_ADDRESS));
        NodeSpec.BGP bgp = new NodeSpec.BGP(asn, v4, v6, nonEmpty(annotations.get(IPIP_TUNNEL_ADDR)),
                nonEmpty(annotations.get(RR_CLUSTER_ID)));
        if (bgp.equals(new NodeSpec.BGP(null, null, null, null, null))) {
            bgp = null;
        }
        NodeSpec.Wireguard wg = new NodeSpec.Wireguard(nonEmpty(annotations.get(WIREGUARD_ADDR)),
                nonEmpty(annotations.get(WIREGUARD_ADDR_V6)));
        if (wg.interfaceIPv4Address() == null && wg.interfaceIPv6Address() == null) {
            wg = null;
        }

        List<NodeSpec.Address> addresses = new ArrayList<>();
        if (v4 != null) {
            addresses.add(new NodeSpec.Address(v4, "CalicoNodeIP"));
        }
        if (v6 != null) {
            addresses.add(new NodeSpec.Address(v6, "CalicoNodeIP"));
        }
        for (JsonNode a : k8sNode.path("status").path("addresses")) {
            String type = a.path("type").asText();
            if (type.equals("InternalIP") || type.equals("ExternalIP")) {
                addresses.add(new NodeSpec.Address(a.path("address").asText(), type));
            }
        }

        NodeSpec spec = new NodeSpec(bgp, nonEmpty(annotations.get(VXLAN_TUNNEL_ADDR)),
                nonEmpty(annotations.get(VXLAN_TUNNEL_MAC)), nonEmpty(annotations.get(VXLAN_TUNNEL_ADDR_V6)),
                nonEmpty(annotations.get(VXLAN_TUNNEL_MAC_V6)), List.of(new NodeSpec.OrchRef(name, "k8s")), wg,
                addresses, null);

        List<String> podCidrs = new ArrayList<>();
        k8sNode.path("spec").path("podCIDRs").forEach(c -> podCidrs.add(c.asText()));
        NodeStatus status = new NodeStatus(nonEmpty(annotations.get(WIREGUARD_KEY)),
                nonEmpty(annotations.get(WIREGUARD_KEY_V6)), podCidrs);
        if (status.wireguardPublicKey() == null && status.wireguardPublicKeyV6() == null && podCidrs.isEmpty()) {
            status = null;
        }

        ObjectMeta meta = new ObjectMeta(name, null, null, nonEmpty(m.path("uid").asText(null)),
                nonEmpty(m.path("resourceVersion").asText(null)), null,
                nonEmpty(m.path("creationTimestamp").asText(null)), null, labels, calicoAnnotations, null, null);
        return new Node(meta, spec, status);
    }

    /**
     * {@return the Kubernetes Node {@code k8sNode} carrying {@code calico}'s data}, as Calico's
     * KDD writes a Node update: Calico fields into their annotations (an absent field removes
     * its annotation), labels that are not the Kubernetes Node's own into
     * {@value #CALICO_LABELS}, annotations into {@value #CALICO_ANNOTATIONS}. The Kubernetes
     * labels, spec and status are never changed. Addresses, orchRefs and pod CIDRs are derived
     * on read and not stored.
     */
    ObjectNode merge(Node calico, JsonNode k8sNode) {
        ObjectNode out = ((ObjectNode) k8sNode).deepCopy();
        ObjectNode meta = out.with("metadata");
        ObjectNode annotations = meta.with("annotations");
        Map<String, String> k8sLabels = strings(k8sNode.path("metadata").path("labels"));
        Map<String, String> own = new java.util.TreeMap<>();
        calico.metadata().labels().forEach((k, v) -> {
            if (!v.equals(k8sLabels.get(k))) {
                own.put(k, v);
            }
        });
        putJson(annotations, CALICO_LABELS, own);
        putJson(annotations, CALICO_ANNOTATIONS, new java.util.TreeMap<>(calico.metadata().annotations()));
        NodeSpec spec = calico.spec() == null ? new NodeSpec(null, null, null, null, null, null, null, null, null)
                : calico.spec();
        NodeSpec.BGP bgp = spec.bgp();
        put(annotations, IPV4_ADDRESS, bgp == null ? null : bgp.ipv4Address());
        put(annotations, IPV6_ADDRESS, bgp == null ? null : bgp.ipv6Address());
        put(annotations, AS_NUMBER, bgp == null || bgp.asNumber() == null ? null : Long.toString(bgp.asNumber().value()));
        put(annotations, RR_CLUSTER_ID, bgp == null ? null : bgp.routeReflectorClusterID());
        put(annotations, IPIP_TUNNEL_ADDR, bgp == null ? null : bgp.ipv4IPIPTunnelAddr());
        put(annotations, VXLAN_TUNNEL_ADDR, spec.ipv4VXLANTunnelAddr());
        put(annotations, VXLAN_TUNNEL_MAC, spec.vxlanTunnelMACAddr());
        put(annotations, VXLAN_TUNNEL_ADDR_V6, spec.ipv6VXLANTunnelAddr());
        put(annotations, VXLAN_TUNNEL_MAC_V6, spec.vxlanTunnelMACAddrV6());
        NodeSpec.Wireguard wg = spec.wireguard();
        put(annotations, WIREGUARD_ADDR, wg == null ? null : wg.interfaceIPv4Address());
        put(annotations, WIREGUARD_ADDR_V6, wg == null ? null : wg.interfaceIPv6Address());
        NodeStatus status = calico.status();
        put(annotations, WIREGUARD_KEY, status == null ? null : status.wireguardPublicKey());
        put(annotations, WIREGUARD_KEY_V6, status == null ? null : status.wireguardPublicKeyV6());
        return out;
    }

    private static void put(ObjectNode annotations, String key, String value) {
        if (value == null || value.isEmpty()) {
            annotations.remove(key);
        } else {
            annotations.put(key, value);
        }
    }

    private void putJson(ObjectNode annotations, String key, Map<String, String> value) {
        if (value.isEmpty()) {
            annotations.remove(key);
            return;
        }
        try {
            annotations.put(key, json.writeValueAsString(value));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings always serialises", e);
        }
    }

    private Map<String, String> jsonMap(String node, String value, String annotation) {
        if (value == null || value.isEmpty()) {
            return Map.of();
        }
        try {
            Map<String, String> m = json.readValue(value, STRING_MAP);
            return m == null ? Map.of() : m;
        } catch (JsonProcessingException e) {
            LOG.info("Node {}: ignoring annotation {}: not a JSON map of strings", node, annotation);
            return Map.of();
        }
    }

    private static Map<String, String> strings(JsonNode obj) {
        Map<String, String> out = new HashMap<>();
        obj.fields().forEachRemaining(f -> out.put(f.getKey(), f.getValue().asText()));
        return out;
    }

    private static String nonEmpty(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
