package calico.api.k8s;

import calico.api.k8s.policy.LabelSelector;
import calico.api.k8s.policy.NetworkPolicyEgressRule;
import calico.api.k8s.policy.NetworkPolicyIngressRule;
import calico.api.k8s.policy.NetworkPolicyPeer;
import calico.api.k8s.policy.NetworkPolicyPort;
import calico.api.model.EntityRule;
import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Rule;
import calico.api.net.Cidr;
import calico.api.validation.FieldError;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Converts a {@code networking.k8s.io/v1} NetworkPolicy into the Calico NetworkPolicy
 * {@code knp.default.<name>} (tier {@code default}, order 1000) that enforces it.
 *
 * <p>Each Kubernetes rule becomes one Calico Allow rule per (protocol, peer) pair: ports are
 * grouped by protocol (sorted by protocol name; TCP when not given) and merged into the fewest
 * ranges; each peer becomes the selector/namespaceSelector or nets/notNets of the rule's
 * source (ingress) or destination (egress). A rule that cannot be converted is dropped and
 * reported (see {@link Conversion}); the rest of the policy still applies.
 */
public final class NetworkPolicyConverter {

    public static final String NAME_PREFIX = "knp.default.";
    public static final String TIER = "default";
    public static final double ORDER = 1000.0;

    private static final String DEFAULT_PROTOCOL = "TCP";

    /** {@return the Calico policy name for a Kubernetes policy name}. */
    public static String policyName(String kubernetesName) {
        return NAME_PREFIX + kubernetesName;
    }

    /** {@return the Kubernetes policy name behind a {@code knp.default.} Calico name}, empty for other policies. */
    public static java.util.Optional<String> kubernetesName(String calicoName) {
        if (calicoName == null || !calicoName.startsWith(NAME_PREFIX) || calicoName.length() == NAME_PREFIX.length()) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(calicoName.substring(NAME_PREFIX.length()));
    }

    public Conversion<NetworkPolicy> convert(KubeNetworkPolicy np) {
        KubeObjectMeta m = np.metadata();
        String what = "NetworkPolicy " + (m == null ? "<no metadata>" : m.namespace() + "/" + m.name());
        requireNamed(what, m);
        String uid = DerivedUid.ofObject(what, m);
        ObjectMeta meta = new ObjectMeta(policyName(m.name()), m.namespace(), null, uid, m.resourceVersion(),
                null, m.creationTimestamp(), null, null, null, null, null);
        KubeNetworkPolicy.Spec spec = np.spec() == null ? new KubeNetworkPolicy.Spec(null, null, null, null) : np.spec();
        Conversion<NetworkPolicySpec> s = convertSpec(what, spec.podSelector(), spec.ingress(), spec.egress(),
                spec.policyTypes());
        return new Conversion<>(new NetworkPolicy(meta, s.value()), s.droppedRules());
    }

    static void requireNamed(String what, KubeObjectMeta m) {
        List<FieldError> errors = new ArrayList<>();
        if (m == null || m.name() == null || m.name().isEmpty()) {
            errors.add(new FieldError("metadata.name", "is required"));
        }
        if (m == null || m.namespace() == null || m.namespace().isEmpty()) {
            errors.add(new FieldError("metadata.namespace", "is required"));
        }
        if (!errors.isEmpty()) {
            throw new KubernetesConversionException(what, errors);
        }
    }

    /** Converts the spec fields shared by NetworkPolicy and StagedKubernetesNetworkPolicy. */
    Conversion<NetworkPolicySpec> convertSpec(String what, LabelSelector podSelector,
                                              List<NetworkPolicyIngressRule> ingress,
                                              List<NetworkPolicyEgressRule> egress,
                                              List<PolicyType> policyTypes) {
        List<FieldError> dropped = new ArrayList<>();
        List<Rule> in = new ArrayList<>();
        for (int i = 0; i < ingress.size(); i++) {
            NetworkPolicyIngressRule r = ingress.get(i);
            convertRule(r.from(), r.ports(), true, "spec.ingress[" + i + "]", in, dropped);
        }
        List<Rule> out = new ArrayList<>();
        for (int i = 0; i < egress.size(); i++) {
            NetworkPolicyEgressRule r = egress.get(i);
            convertRule(r.to(), r.ports(), false, "spec.egress[" + i + "]", out, dropped);
        }
        String selector;
        try {
            selector = KubeSelectors.podSelector(podSelector);
        } catch (FieldProblem e) {
            // Without a valid selector there is no policy to speak of: refuse it whole.
            FieldProblem p = e.under("spec.podSelector");
            throw new KubernetesConversionException(what, p.field(), p.reason());
        }
        NetworkPolicySpec spec = new NetworkPolicySpec(TIER, ORDER, in, out, selector,
                types(policyTypes, !egress.isEmpty()), null, null);
        return new Conversion<>(spec, dropped);
    }

    /**
     * Kubernetes' defaulting: without {@code policyTypes} a policy always isolates ingress and
     * isolates egress only when it has egress rules. Given types are kept, in Ingress, Egress order.
     */
    static List<PolicyType> types(List<PolicyType> given, boolean hasEgressRules) {
        boolean ingress = given.contains(PolicyType.Ingress);
        boolean egress = given.contains(PolicyType.Egress);
        if (given.isEmpty()) {
            ingress = true;
            egress = hasEgressRules;
        }
        List<PolicyType> out = new ArrayList<>(2);
        if (ingress) {
            out.add(PolicyType.Ingress);
        }
        if (egress) {
            out.add(PolicyType.Egress);
        }
        return out;
    }

    private void convertRule(List<NetworkPolicyPeer> peers, List<NetworkPolicyPort> ports, boolean ingress,
                             String path, List<Rule> sink, List<FieldError> dropped) {
        // Protocol -> ports; a null list means "every port of that protocol". The key "" (no
        // protocol, no ports) appears only when the rule lists no ports at all.
        Map<String, List<Port>> byProtocol = new TreeMap<>();
        if (ports.isEmpty()) {
            byProtocol.put("", null);
        }
        for (int i = 0; i < ports.size(); i++) {
            NetworkPolicyPort p = ports.get(i);
            String protocol = p.protocol() == null || p.protocol().isEmpty() ? DEFAULT_PROTOCOL : p.protocol();
            Port port;
            try {
                port = toCalicoPort(p);
            } catch (FieldProblem e) {
                FieldProblem q = e.under(path + ".ports[" + i + "]");
                dropped.add(new FieldError(q.field(), q.reason()));
                return;
            }
            if (port == null) {
                byProtocol.put(protocol, null);
            } else if (!byProtocol.containsKey(protocol)) {
                byProtocol.put(protocol, new ArrayList<>(List.of(port)));
            } else if (byProtocol.get(protocol) != null) {
                byProtocol.get(protocol).add(port);
            }
        }

        List<EntityRule> peerEntities = new ArrayList<>();
        if (peers.isEmpty()) {
            peerEntities.add(EntityRule.empty());
        }
        for (int i = 0; i < peers.size(); i++) {
            try {
                peerEntities.add(toEntity(peers.get(i)));
            } catch (FieldProblem e) {
                FieldProblem q = e.under(path + (ingress ? ".from[" : ".to[") + i + "]");
                dropped.add(new FieldError(q.field(), q.reason()));
                return;
            }
        }

        for (Map.Entry<String, List<Port>> e : byProtocol.entrySet()) {
            Protocol protocol = e.getKey().isEmpty() ? null : Protocol.parse(e.getKey());
            List<Port> merged = e.getValue() == null ? List.of() : simplify(e.getValue());
            for (EntityRule peer : peerEntities) {
                Rule rule = Rule.allow().withProtocol(protocol);
                if (ingress) {
                    sink.add(rule.withSource(peer).withDestination(EntityRule.empty().withPorts(merged)));
                } else {
                    sink.add(rule.withSource(EntityRule.empty()).withDestination(peer.withPorts(merged)));
                }
            }
        }
    }

    /** {@return the Calico port}, or {@code null} for "every port" (no {@code port} given). */
    private static Port toCalicoPort(NetworkPolicyPort p) {
        if (p.port() == null) {
            return null;
        }
        int first;
        if (p.port().isInt()) {
            first = p.port().intValue();
        } else {
            String name = p.port().stringValue();
            if (!name.isEmpty() && name.chars().allMatch(c -> c >= '0' && c <= '9')) {
                // A quoted number ("80") is a number, as Calico reads it (endPort included).
                if (name.length() > 5) {
                    throw new FieldProblem("port", name + " is outside 0-65535");
                }
                first = Integer.parseInt(name);
            } else if (p.endPort() != null) {
                throw new FieldProblem("endPort", "cannot be used with the named port \"" + name + "\"");
            } else if (name.isEmpty() || !name.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) {
                throw new FieldProblem("port", "\"" + name + "\" is neither a port number nor a port name");
            } else {
                return Port.named(name);
            }
        }
        checkPortNumber("port", first);
        if (p.endPort() == null) {
            return Port.of(first);
        }
        int last = p.endPort();
        checkPortNumber("endPort", last);
        if (last < first) {
            throw new FieldProblem("endPort", last + " is below port " + first);
        }
        return Port.range(first, last);
    }

    private static void checkPortNumber(String field, int port) {
        if (port < 0 || port > 65535) {
            throw new FieldProblem(field, port + " is outside 0-65535");
        }
    }

    private static EntityRule toEntity(NetworkPolicyPeer peer) {
        if (peer.ipBlock() != null) {
            // An ipBlock excludes the selectors (Kubernetes validation); Calico ignores them too.
            String cidr = peer.ipBlock().cidr();
            List<String> notNets = new ArrayList<>();
            String net;
            try {
                net = Cidr.parse(cidr).network().toString();
            } catch (IllegalArgumentException e) {
                throw new FieldProblem("ipBlock.cidr", e.getMessage());
            }
            for (int i = 0; i < peer.ipBlock().except().size(); i++) {
                try {
                    notNets.add(Cidr.parse(peer.ipBlock().except().get(i)).network().toString());
                } catch (IllegalArgumentException e) {
                    throw new FieldProblem("ipBlock.except[" + i + "]", e.getMessage());
                }
            }
            return EntityRule.empty().withNets(List.of(net)).withNotNets(notNets);
        }
        String selector;
        String nsSelector;
        try {
            selector = KubeSelectors.podSelector(peer.podSelector());
        } catch (FieldProblem e) {
            throw e.under("podSelector");
        }
        try {
            nsSelector = KubeSelectors.namespaceSelector(peer.namespaceSelector());
        } catch (FieldProblem e) {
            throw e.under("namespaceSelector");
        }
        return EntityRule.empty().withSelector(selector).withNamespaceSelector(nsSelector.isEmpty() ? null : nsSelector);
    }

    /**
     * Merges numeric ports into the fewest ranges (sorted), named ports first in given order,
     * as Calico's SimplifyPorts does; a list with at most one numeric port is returned as given.
     */
    static List<Port> simplify(List<Port> ports) {
        if (ports.size() <= 1) {
            return List.copyOf(ports);
        }
        List<Port> out = new ArrayList<>();
        List<Port> numeric = new ArrayList<>();
        long numericCount = 0;
        for (Port p : ports) {
            if (p.isNamed()) {
                out.add(p);
            } else {
                numeric.add(p);
                numericCount += (long) p.maxPort() - p.minPort() + 1;
            }
        }
        if (numericCount <= 1) {
            return List.copyOf(ports);
        }
        numeric.sort(Comparator.comparingInt(Port::minPort).thenComparingInt(Port::maxPort));
        int lo = numeric.get(0).minPort();
        int hi = numeric.get(0).maxPort();
        for (Port p : numeric.subList(1, numeric.size())) {
            if (p.minPort() > hi + 1) {
                out.add(lo == hi ? Port.of(lo) : Port.range(lo, hi));
                lo = p.minPort();
                hi = p.maxPort();
            } else {
                hi = Math.max(hi, p.maxPort());
            }
        }
        out.add(lo == hi ? Port.of(lo) : Port.range(lo, hi));
        return out;
    }
}
