package calico.goldmane.query;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.Filter;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.MatchType;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyMatch;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A validated {@link Filter}: fields are ANDed, the values of one field ORed, an empty field
 * matches everything. Exact string matches compare whole values; fuzzy ones look for a substring.
 */
public final class FlowFilter {

    public static final FlowFilter ALL = new FlowFilter(Filter.getDefaultInstance(), "filter");

    private record StringMatcher(String value, boolean fuzzy) {
        boolean test(String s) {
            return fuzzy ? s.contains(value) : s.equals(value);
        }
    }

    private record PolicyMatcher(PolicyKind kind, String tier, String namespace, String name, Action action) {
        boolean test(PolicyHit h) {
            return (kind == PolicyKind.KindUnspecified || h.getKind() == kind)
                    && (tier.isEmpty() || h.getTier().equals(tier))
                    && (namespace.isEmpty() || h.getNamespace().equals(namespace))
                    && (name.isEmpty() || h.getName().equals(name))
                    && (action == Action.ActionUnspecified || h.getAction() == action);
        }
    }

    private final List<StringMatcher> sourceNames;
    private final List<StringMatcher> sourceNamespaces;
    private final List<StringMatcher> destNames;
    private final List<StringMatcher> destNamespaces;
    private final List<StringMatcher> protocols;
    private final long[] ports;
    private final Set<Action> actions;
    private final Set<Action> pendingActions;
    private final Set<Reporter> reporters;
    private final List<PolicyMatcher> policies;

    /** Validates and compiles; {@code field} prefixes error messages (e.g. "filter"). */
    public FlowFilter(Filter f, String field) {
        sourceNames = strings(f.getSourceNamesList(), field + ".source_names");
        sourceNamespaces = strings(f.getSourceNamespacesList(), field + ".source_namespaces");
        destNames = strings(f.getDestNamesList(), field + ".dest_names");
        destNamespaces = strings(f.getDestNamespacesList(), field + ".dest_namespaces");
        protocols = strings(f.getProtocolsList(), field + ".protocols");
        ports = new long[f.getDestPortsCount()];
        for (int i = 0; i < ports.length; i++) {
            long p = f.getDestPorts(i).getPort();
            if (p < 1 || p > 65535) {
                throw new InvalidRequest(field + ".dest_ports[" + i + "].port", p + " is not a port (1-65535)");
            }
            ports[i] = p;
        }
        actions = actions(f.getActionsValueList(), field + ".actions");
        pendingActions = actions(f.getPendingActionsValueList(), field + ".pending_actions");
        reporters = EnumSet.noneOf(Reporter.class);
        for (int i = 0; i < f.getReportersCount(); i++) {
            int v = f.getReportersValue(i);
            Reporter r = Reporter.forNumber(v);
            if (r == null || r == Reporter.ReporterUnspecified) {
                throw new InvalidRequest(field + ".reporters[" + i + "]", "unknown reporter " + v);
            }
            reporters.add(r);
        }
        policies = new java.util.ArrayList<>();
        for (int i = 0; i < f.getPoliciesCount(); i++) {
            policies.add(policy(f.getPolicies(i), field + ".policies[" + i + "]"));
        }
    }

    static PolicyMatcher policy(PolicyMatch m, String field) {
        PolicyKind kind = PolicyKind.forNumber(m.getKindValue());
        if (kind == null) {
            throw new InvalidRequest(field + ".kind", "unknown policy kind " + m.getKindValue());
        }
        Action a = Action.forNumber(m.getActionValue());
        if (a == null) {
            throw new InvalidRequest(field + ".action", "unknown action " + m.getActionValue());
        }
        return new PolicyMatcher(kind, m.getTier(), m.getNamespace(), m.getName(), a);
    }

    /** {@return a predicate over policy hits, for Statistics} */
    public static java.util.function.Predicate<PolicyHit> policyPredicate(PolicyMatch m, String field) {
        return policy(m, field)::test;
    }

    private static List<StringMatcher> strings(List<calico.libcalico.goldmane.proto.StringMatch> in, String field) {
        var out = new java.util.ArrayList<StringMatcher>(in.size());
        for (int i = 0; i < in.size(); i++) {
            var m = in.get(i);
            if (m.getValue().isEmpty()) {
                throw new InvalidRequest(field + "[" + i + "].value", "must not be empty");
            }
            MatchType t = MatchType.forNumber(m.getTypeValue());
            if (t == null) {
                throw new InvalidRequest(field + "[" + i + "].type", "unknown match type " + m.getTypeValue());
            }
            out.add(new StringMatcher(m.getValue(), t == MatchType.Fuzzy));
        }
        return out;
    }

    private static Set<Action> actions(List<Integer> values, String field) {
        var out = EnumSet.noneOf(Action.class);
        for (int i = 0; i < values.size(); i++) {
            Action a = Action.forNumber(values.get(i));
            if (a == null || a == Action.ActionUnspecified) {
                throw new InvalidRequest(field + "[" + i + "]", "unknown action " + values.get(i));
            }
            out.add(a);
        }
        return out;
    }

    public boolean matches(FlowKey k) {
        return any(sourceNames, k.getSourceName()) && any(sourceNamespaces, k.getSourceNamespace())
                && any(destNames, k.getDestName()) && any(destNamespaces, k.getDestNamespace())
                && any(protocols, k.getProto()) && port(k.getDestPort())
                && (actions.isEmpty() || actions.contains(k.getAction()))
                && (pendingActions.isEmpty() || pendingActions.contains(pendingAction(k)))
                && (reporters.isEmpty() || reporters.contains(k.getReporter()))
                && policy(k.getPolicies());
    }

    private static boolean any(List<StringMatcher> ms, String v) {
        if (ms.isEmpty()) {
            return true;
        }
        for (int i = 0; i < ms.size(); i++) {
            if (ms.get(i).test(v)) {
                return true;
            }
        }
        return false;
    }

    private boolean port(long p) {
        if (ports.length == 0) {
            return true;
        }
        for (long q : ports) {
            if (q == p) {
                return true;
            }
        }
        return false;
    }

    private boolean policy(PolicyTrace t) {
        if (policies.isEmpty()) {
            return true;
        }
        for (PolicyMatcher m : policies) {
            for (PolicyHit h : t.getEnforcedPoliciesList()) {
                if (m.test(h)) {
                    return true;
                }
            }
            for (PolicyHit h : t.getPendingPoliciesList()) {
                if (m.test(h)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The verdict the pending trace reaches: the first pending hit that allows or denies (pass
     * hits hand over to the next tier); with no pending trace, the enforced action.
     */
    public static Action pendingAction(FlowKey k) {
        List<PolicyHit> pending = k.getPolicies().getPendingPoliciesList();
        for (PolicyHit h : pending) {
            if (h.getAction() == Action.Allow || h.getAction() == Action.Deny) {
                return h.getAction();
            }
        }
        return pending.isEmpty() ? k.getAction() : pending.get(pending.size() - 1).getAction();
    }
}
