package calico.api.k8s;

import calico.api.k8s.policy.AdminNetworkPolicyPeer;
import calico.api.k8s.policy.AdminNetworkPolicyPort;
import calico.api.k8s.policy.AdminNetworkPolicyRule;
import calico.api.k8s.policy.LabelSelector;
import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Rule;
import calico.api.net.Cidr;
import calico.api.validation.FieldError;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The rule conversion AdminNetworkPolicy and BaselineAdminNetworkPolicy share, as Calico's
 * Kubernetes datastore does it:
 *
 * <ul>
 *   <li>one Calico rule per (protocol, peer) pair, protocols sorted by name with {@code ""}
 *       (named ports, or no ports at all) first, ports merged as {@link NetworkPolicyConverter#simplify};</li>
 *   <li>peers: {@code namespaces} → namespaceSelector; {@code pods} → selector (with the
 *       {@code projectcalico.org/orchestrator == 'k8s'} term) and namespaceSelector (empty =
 *       {@code all()}); {@code networks} → nets; {@code nodes} → the host endpoints whose labels
 *       match (our addition: Calico leaves node peers unconverted);</li>
 *   <li>each rule carries the Kubernetes rule name as the annotation {@code name};</li>
 *   <li>a rule that cannot be converted is reported; a Deny or Pass one is replaced by a bare
 *       Deny (fail closed), an Allow one is dropped (allows less).</li>
 * </ul>
 */
final class AdminPolicyRules {

    /** The rule annotation holding the Kubernetes rule's name (Calico's AdminPolicyRuleNameLabel). */
    static final String RULE_NAME_ANNOTATION = "name";

    private final Set<Action> actions;

    /** @param actions the actions the kind allows (BaselineAdminNetworkPolicy has no Pass) */
    AdminPolicyRules(Set<Action> actions) {
        this.actions = Set.copyOf(actions);
    }

    /** Converts one direction's rules; problems go to {@code dropped} under {@code path[i]}. */
    List<Rule> convert(List<AdminNetworkPolicyRule> rules, boolean ingress, String path, List<FieldError> dropped) {
        List<Rule> out = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            AdminNetworkPolicyRule r = rules.get(i);
            try {
                out.addAll(rule(r, ingress));
            } catch (FieldProblem e) {
                FieldProblem q = e.under(path + "[" + i + "]");
                dropped.add(new FieldError(q.field(), q.reason()));
                if ("Deny".equals(r.action()) || "Pass".equals(r.action())) {
                    out.add(Rule.deny()); // what the rule would not pass or allow must stay denied
                }
            }
        }
        return out;
    }

    private List<Rule> rule(AdminNetworkPolicyRule r, boolean ingress) {
        Action action = action(r.action());
        Map<String, List<Port>> byProtocol = ports(r.ports());
        String peersField = ingress ? "from" : "to";
        List<AdminNetworkPolicyPeer> peers = ingress ? r.from() : r.to();
        List<EntityRule> entities = new ArrayList<>(peers.size());
        for (int i = 0; i < peers.size(); i++) {
            try {
                entities.add(peer(peers.get(i), ingress));
            } catch (FieldProblem e) {
                throw e.under(peersField + "[" + i + "]");
            }
        }
        Rule.RuleMetadata metadata = r.name() == null || r.name().isEmpty() ? null
                : new Rule.RuleMetadata(Map.of(RULE_NAME_ANNOTATION, r.name()));
        List<Rule> out = new ArrayList<>();
        for (Map.Entry<String, List<Port>> e : byProtocol.entrySet()) {
            Protocol protocol = e.getKey().isEmpty() ? null : Protocol.parse(e.getKey());
            List<Port> merged = e.getValue() == null ? List.of() : NetworkPolicyConverter.simplify(e.getValue());
            for (EntityRule peer : entities) {
                EntityRule source = ingress ? peer : EntityRule.empty();
                EntityRule destination = ingress ? EntityRule.empty().withPorts(merged) : peer.withPorts(merged);
                out.add(new Rule(action, null, protocol, null, null, null, source, destination, null, metadata));
            }
        }
        return out;
    }

    private Action action(String given) {
        Action a = switch (given == null ? "" : given) {
            case "Allow" -> Action.Allow;
            case "Deny" -> Action.Deny;
            case "Pass" -> Action.Pass;
            default -> null;
        };
        if (a == null || !actions.contains(a)) {
            throw new FieldProblem("action", (given == null ? "is required" : "\"" + given + "\" is not supported")
                    + ": must be one of " + actions.stream().map(Enum::name).sorted().toList());
        }
        return a;
    }

    /** Protocol name (or {@code ""}) to its ports; a {@code null} list means every port. */
    /** {@return the Kubernetes name behind a converted policy name {@code prefix + name}}, empty for other names. */
    static Optional<String> unprefixed(String prefix, String calicoName) {
        return calicoName != null && calicoName.startsWith(prefix) && calicoName.length() > prefix.length()
                ? Optional.of(calicoName.substring(prefix.length())) : Optional.empty();
    }

    private static Map<String, List<Port>> ports(List<AdminNetworkPolicyPort> ports) {
        Map<String, List<Port>> byProtocol = new TreeMap<>();
        if (ports.isEmpty()) {
            byProtocol.put("", null);
        }
        for (int i = 0; i < ports.size(); i++) {
            AdminNetworkPolicyPort p = ports.get(i);
            String field = "ports[" + i + "]";
            int set = (p.portNumber() == null ? 0 : 1) + (p.namedPort() == null ? 0 : 1) + (p.portRange() == null ? 0 : 1);
            if (set != 1) {
                throw new FieldProblem(field, "exactly one of portNumber, namedPort or portRange must be set, found " + set);
            }
            String protocol;
            Port port;
            if (p.portNumber() != null) {
                protocol = protocol(p.portNumber().protocol(), field + ".portNumber.protocol");
                port = Port.of(portNumber(p.portNumber().port(), field + ".portNumber.port"));
            } else if (p.namedPort() != null) {
                if (!p.namedPort().matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?") || p.namedPort().length() > 15) {
                    throw new FieldProblem(field + ".namedPort", "\"" + p.namedPort() + "\" is not a port name "
                            + "(at most 15 lower-case letters, digits and '-')");
                }
                protocol = ""; // a named port carries its own protocol
                port = Port.named(p.namedPort());
            } else {
                protocol = protocol(p.portRange().protocol(), field + ".portRange.protocol");
                int start = portNumber(p.portRange().start(), field + ".portRange.start");
                int end = portNumber(p.portRange().end(), field + ".portRange.end");
                if (end < start) {
                    throw new FieldProblem(field + ".portRange.end", end + " is below start " + start);
                }
                port = Port.range(start, end);
            }
            byProtocol.computeIfAbsent(protocol, k -> new ArrayList<>()).add(port);
        }
        return byProtocol;
    }

    private static String protocol(String given, String field) {
        if (given == null || given.isEmpty()) {
            return "TCP";
        }
        if (!given.equals("TCP") && !given.equals("UDP") && !given.equals("SCTP")) {
            throw new FieldProblem(field, "\"" + given + "\" is not TCP, UDP or SCTP");
        }
        return given;
    }

    private static int portNumber(Integer port, String field) {
        if (port == null) {
            throw new FieldProblem(field, "is required");
        }
        if (port < 1 || port > 65535) {
            throw new FieldProblem(field, port + " is outside 1-65535");
        }
        return port;
    }

    private static EntityRule peer(AdminNetworkPolicyPeer p, boolean ingress) {
        int set = (p.namespaces() == null ? 0 : 1) + (p.pods() == null ? 0 : 1) + (p.nodes() == null ? 0 : 1)
                + (p.networks().isEmpty() ? 0 : 1);
        if (set != 1) {
            throw new FieldProblem("", set == 0 ? "none of namespaces, pods, nodes or networks is set"
                    : "exactly one of namespaces, pods, nodes or networks may be set, found " + set);
        }
        if (ingress && (p.nodes() != null || !p.networks().isEmpty())) {
            throw new FieldProblem(p.nodes() != null ? "nodes" : "networks", "is only allowed in egress rules");
        }
        if (p.namespaces() != null) {
            return EntityRule.empty().withNamespaceSelector(selector(() -> KubeSelectors.namespaceSelector(p.namespaces()), "namespaces"));
        }
        if (p.pods() != null) {
            String pods = selector(() -> KubeSelectors.podSelector(orEverything(p.pods().podSelector())), "pods.podSelector");
            String namespaces = selector(() -> KubeSelectors.namespaceSelector(orEverything(p.pods().namespaceSelector())),
                    "pods.namespaceSelector");
            return EntityRule.empty().withSelector(pods).withNamespaceSelector(namespaces);
        }
        if (p.nodes() != null) {
            return EntityRule.empty().withSelector(selector(() -> KubeSelectors.nodeSelector(p.nodes()), "nodes"));
        }
        List<String> nets = new ArrayList<>();
        for (int i = 0; i < p.networks().size(); i++) {
            try {
                nets.add(Cidr.parse(p.networks().get(i)).network().toString());
            } catch (IllegalArgumentException e) {
                throw new FieldProblem("networks[" + i + "]", e.getMessage());
            }
        }
        return EntityRule.empty().withNets(nets);
    }

    private static LabelSelector orEverything(LabelSelector s) {
        return s == null ? LabelSelector.everything() : s;
    }

    private static String selector(java.util.function.Supplier<String> convert, String field) {
        try {
            return convert.get();
        } catch (FieldProblem e) {
            throw e.under(field);
        }
    }
}
