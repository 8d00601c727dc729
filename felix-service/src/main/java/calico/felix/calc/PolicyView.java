package calico.felix.calc;

import calico.api.k8s.KubernetesConverter;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkPolicySpec;
import calico.api.model.PolicyType;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.StagedGlobalNetworkPolicy;
import calico.api.model.StagedKubernetesNetworkPolicy;
import calico.api.model.StagedNetworkPolicy;
import calico.api.selector.Selector;
import java.util.List;

/**
 * The five policy kinds seen the same way: identity, ordering, the endpoint selector with the
 * namespace, namespaceSelector and serviceAccountSelector folded in, the directions it
 * applies to, and the v3 rules (compiled later, only when the policy is active).
 *
 * @param selector  the combined selector over (inherited) endpoint labels
 * @param namespace the policy's namespace (rule selectors are scoped to it), {@code null} if global
 */
record PolicyView(PolicyId id, Double order, Selector selector, boolean ingress, boolean egress,
                  List<Rule> ingressRules, List<Rule> egressRules, String namespace, HostKind hostKind) {

    /**
     * How a GlobalNetworkPolicy applies to host endpoints: {@code doNotTrack} (raw table, untracked),
     * {@code preDNAT} (mangle prerouting, ingress only), {@code applyOnForward} (also polices traffic
     * forwarded through the host endpoint). Namespaced policies are always {@link #NORMAL}.
     */
    record HostKind(boolean doNotTrack, boolean preDnat, boolean applyOnForward) {
        static final HostKind NORMAL = new HostKind(false, false, false);

        /** Neither untracked nor pre-DNAT: the host endpoint's normal (filter table) policy. */
        boolean normal() {
            return !doNotTrack && !preDnat;
        }
    }

    static final String DEFAULT_TIER = "default";

    /** @throws IllegalArgumentException for a selector that does not parse (the caller logs and drops the policy) */
    static PolicyView of(Resource r, KubernetesConverter converter) {
        if (StagedDelete.of(r) != null) {
            // Not all(): a staged delete has no selector of its own (see StagedDelete#view).
            throw new IllegalArgumentException("a staged Delete takes the view of the policy it deletes: " + r.key());
        }
        if (r instanceof GlobalNetworkPolicy p) {
            return global(p.metadata().name(), p.spec(), calico.api.model.ResourceKind.GLOBAL_NETWORK_POLICY);
        } else if (r instanceof StagedGlobalNetworkPolicy p) {
            return global(p.metadata().name(), p.spec().toEnforced(),
                    calico.api.model.ResourceKind.STAGED_GLOBAL_NETWORK_POLICY);
        } else if (r instanceof NetworkPolicy p) {
            return namespaced(p.metadata().namespace(), p.metadata().name(), p.spec(),
                    calico.api.model.ResourceKind.NETWORK_POLICY);
        } else if (r instanceof StagedNetworkPolicy p) {
            return namespaced(p.metadata().namespace(), p.metadata().name(), p.spec().toEnforced(),
                    calico.api.model.ResourceKind.STAGED_NETWORK_POLICY);
        } else if (r instanceof StagedKubernetesNetworkPolicy p) {
            StagedNetworkPolicy converted = converter.stagedNetworkPolicy(p).value();
            return namespaced(p.metadata().namespace(), p.metadata().name(), converted.spec().toEnforced(),
                    calico.api.model.ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY);
        }
        throw new IllegalArgumentException("not a policy: " + r.key());
    }

    private static PolicyView global(String name, GlobalNetworkPolicySpec s, calico.api.model.ResourceKind kind) {
        Selector sel = CalicoLabels.and(Selector.parse(s.selector()),
                CalicoLabels.blank(s.namespaceSelector()) ? null : CalicoLabels.namespaceSelector(s.namespaceSelector()),
                CalicoLabels.blank(s.serviceAccountSelector()) ? null
                        : CalicoLabels.serviceAccountSelector(s.serviceAccountSelector()));
        List<PolicyType> types = defaultTypes(s.types(), s.ingress(), s.egress());
        return new PolicyView(new PolicyId(tier(s.tier()), null, name, kind), s.order(), sel,
                types.contains(PolicyType.Ingress), types.contains(PolicyType.Egress), s.ingress(), s.egress(), null,
                new HostKind(Boolean.TRUE.equals(s.doNotTrack()), Boolean.TRUE.equals(s.preDNAT()),
                        Boolean.TRUE.equals(s.applyOnForward())));
    }

    private static PolicyView namespaced(String ns, String name, NetworkPolicySpec s, calico.api.model.ResourceKind kind) {
        Selector sel = CalicoLabels.and(Selector.parse(s.selector()), CalicoLabels.inNamespace(ns),
                CalicoLabels.blank(s.serviceAccountSelector()) ? null
                        : CalicoLabels.serviceAccountSelector(s.serviceAccountSelector()));
        List<PolicyType> types = defaultTypes(s.types(), s.ingress(), s.egress());
        return new PolicyView(new PolicyId(tier(s.tier()), ns, name, kind), s.order(), sel,
                types.contains(PolicyType.Ingress), types.contains(PolicyType.Egress), s.ingress(), s.egress(), ns,
                HostKind.NORMAL);
    }

    private static String tier(String t) {
        return CalicoLabels.blank(t) ? DEFAULT_TIER : t;
    }

    /** Calico's defaulting of an empty {@code types}: Ingress unless there are only egress rules. */
    static List<PolicyType> defaultTypes(List<PolicyType> types, List<Rule> ingress, List<Rule> egress) {
        if (!types.isEmpty()) {
            return types;
        }
        if (egress.isEmpty()) {
            return List.of(PolicyType.Ingress);
        }
        return ingress.isEmpty() ? List.of(PolicyType.Egress) : List.of(PolicyType.Ingress, PolicyType.Egress);
    }
}
