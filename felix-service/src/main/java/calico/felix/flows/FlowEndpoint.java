package calico.felix.flows;

import calico.felix.calc.TierPolicies;
import java.util.List;

/**
 * One end of a flow as goldmane names it.
 *
 * @param type      workload, host endpoint, or a network not known to Calico
 * @param name      a workload's aggregated name as Calico reports it ({@code <generateName>*} when its
 *                  pod has a generate-name, else the pod name), a host endpoint's name,
 *                  {@code pub} or {@code pvt} for networks
 * @param namespace the pod's namespace; empty otherwise
 * @param ingress   the local endpoint's ingress tiers (staged policies included); empty when remote
 * @param egress    the same for egress
 * @param profiles  the local endpoint's profiles, in order
 * @param labels    the endpoint's labels as sorted {@code key=value} strings; empty for networks
 */
public record FlowEndpoint(Type type, String name, String namespace, List<TierPolicies> ingress,
                           List<TierPolicies> egress, List<String> profiles, boolean local, List<String> labels) {

    public enum Type { WORKLOAD, HOST_ENDPOINT, NETWORK_SET, NETWORK }

    public FlowEndpoint {
        ingress = List.copyOf(ingress);
        egress = List.copyOf(egress);
        profiles = List.copyOf(profiles);
        labels = List.copyOf(labels);
    }

    static FlowEndpoint network(boolean privateNet) {
        return new FlowEndpoint(Type.NETWORK, privateNet ? "pvt" : "pub", "", List.of(), List.of(), List.of(), false,
                List.of());
    }

    /** A workload's name in flows: the generate-name set when its pod has one, as Calico aggregates. */
    static String workloadName(String id, String generateName) {
        return generateName.isEmpty() ? podName(id) : generateName + "*";
    }

    static List<String> labelStrings(java.util.Map<String, String> labels) {
        return labels.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).sorted().toList();
    }

    /**
     * The pod name from a workload endpoint's ID {@code <namespace>/<node>-k8s-<pod>-<iface>},
     * where each dash inside a part is doubled (Calico's endpoint names); the ID's own name
     * otherwise.
     */
    static String podName(String id) {
        int slash = id.indexOf('/');
        String wep = slash < 0 ? id : id.substring(slash + 1);
        List<String> parts = new java.util.ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < wep.length(); i++) {
            char c = wep.charAt(i);
            if (c == '-' && i + 1 < wep.length() && wep.charAt(i + 1) == '-') {
                cur.append('-');
                i++;
            } else if (c == '-') {
                parts.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        parts.add(cur.toString());
        int k8s = parts.indexOf("k8s");
        if (k8s >= 0 && parts.size() == k8s + 3) {
            return parts.get(k8s + 1);
        }
        return wep;
    }

    static String namespaceOf(String id) {
        int slash = id.indexOf('/');
        return slash < 0 ? "" : id.substring(0, slash);
    }
}
