package calico.felix.calc;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.HostEndpoint;
import calico.api.model.HostEndpointSpec;
import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkPolicySpec;
import calico.api.model.NetworkSet;
import calico.api.model.NetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Protocol;
import calico.api.model.Rule;
import calico.api.model.StagedAction;
import calico.api.model.StagedGlobalNetworkPolicy;
import calico.api.model.StagedGlobalNetworkPolicySpec;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import java.util.List;
import java.util.Map;

/** Terse builders for the v3 resources the graph tests use. */
final class Res {

    private Res() {
    }

    static Map<String, String> labels(String... kv) {
        java.util.Map<String, String> m = new java.util.HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static WorkloadEndpoint wep(String ns, String name, String node, String ip, Map<String, String> labels,
                                String... profiles) {
        return wep(ns, name, node, ip, labels, List.of(), profiles);
    }

    static WorkloadEndpoint wep(String ns, String name, String node, String ip, Map<String, String> labels,
                                List<WorkloadEndpointSpec.EndpointPort> ports, String... profiles) {
        return new WorkloadEndpoint(ObjectMeta.namespaced(ns, name).withLabels(labels),
                new WorkloadEndpointSpec("k8s", null, node, null, name, "eth0", null,
                        ip == null ? List.of() : List.of(ip + "/32"), null, null, null, List.of(profiles),
                        "cali" + name, "ee:ee:ee:ee:ee:ee", ports, null));
    }

    static WorkloadEndpointSpec.EndpointPort port(String name, int port) {
        return new WorkloadEndpointSpec.EndpointPort(name, Protocol.TCP, port, null, null);
    }

    static HostEndpoint hep(String name, String node, String ip, Map<String, String> labels, String... profiles) {
        return new HostEndpoint(ObjectMeta.named(name).withLabels(labels),
                new HostEndpointSpec(node, "eth0", List.of(ip), List.of(profiles), null));
    }

    static Tier tier(String name, Double order, Action defaultAction) {
        return new Tier(ObjectMeta.named(name), new TierSpec(order, defaultAction));
    }

    static Profile profile(String name, Map<String, String> labelsToApply, List<Rule> ingress, List<Rule> egress) {
        return new Profile(ObjectMeta.named(name), new ProfileSpec(ingress, egress, labelsToApply));
    }

    /** A namespace's profile, as the Kubernetes converter makes it: allow all, labels under {@code pcns.}. */
    static Profile nsProfile(String ns, String... kv) {
        Map<String, String> l = labels(kv);
        java.util.Map<String, String> pref = new java.util.HashMap<>();
        l.forEach((k, v) -> pref.put("pcns." + k, v));
        pref.put("pcns.projectcalico.org/name", ns);
        return profile("kns." + ns, pref, List.of(Rule.allow()), List.of(Rule.allow()));
    }

    static GlobalNetworkPolicy gnp(String name, String tier, Double order, String selector, List<Rule> ingress,
                                   List<Rule> egress, PolicyType... types) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec(tier, order, ingress,
                egress, selector, List.of(types), null, null, null, null, null, null));
    }

    static GlobalNetworkPolicy gnpNs(String name, String selector, String namespaceSelector, List<Rule> ingress) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec(null, 1.0, ingress,
                null, selector, List.of(PolicyType.Ingress), null, null, null, null, namespaceSelector, null));
    }

    static StagedGlobalNetworkPolicy staged(String name, String tier, Double order, String selector,
                                            List<Rule> ingress) {
        return new StagedGlobalNetworkPolicy(ObjectMeta.named(name), StagedGlobalNetworkPolicySpec.of(
                StagedAction.Set, gnp(name, tier, order, selector, ingress, List.of(), PolicyType.Ingress).spec()));
    }

    /** A staged {@code stagedAction: Delete} of the GlobalNetworkPolicy {@code name}: only the tier is given. */
    static StagedGlobalNetworkPolicy stagedDelete(String name, String tier) {
        return new StagedGlobalNetworkPolicy(ObjectMeta.named(name), new StagedGlobalNetworkPolicySpec(
                StagedAction.Delete, tier, null, null, null, null, null, null, null, null, null, null, null));
    }

    static NetworkPolicy np(String ns, String name, String tier, Double order, String selector, List<Rule> ingress,
                            List<Rule> egress, PolicyType... types) {
        return new NetworkPolicy(ObjectMeta.namespaced(ns, name), new NetworkPolicySpec(tier, order, ingress, egress,
                selector, List.of(types), null, null));
    }

    static GlobalNetworkSet gns(String name, Map<String, String> labels, String... nets) {
        return new GlobalNetworkSet(ObjectMeta.named(name).withLabels(labels), new GlobalNetworkSetSpec(List.of(nets)));
    }

    static NetworkSet netset(String ns, String name, Map<String, String> labels, String... nets) {
        return new NetworkSet(ObjectMeta.namespaced(ns, name).withLabels(labels), new NetworkSetSpec(List.of(nets)));
    }

    static Rule allowFrom(String selector) {
        return Rule.allow().withSource(EntityRule.empty().withSelector(selector));
    }

    static Rule allowFromNs(String selector, String namespaceSelector) {
        return Rule.allow().withSource(EntityRule.empty().withSelector(selector).withNamespaceSelector(namespaceSelector));
    }

    static Rule allowFromSa(List<String> names, String saSelector) {
        return Rule.allow().withSource(new EntityRule(null, null, null, null, null, null, null,
                new EntityRule.ServiceAccountMatch(names, saSelector), null));
    }

    static Rule allowToNamedPort(String selector, String portName) {
        return Rule.allow().withProtocol(Protocol.TCP)
                .withDestination(EntityRule.empty().withSelector(selector).withPorts(List.of(Port.named(portName))));
    }

    static Rule action(Action a) {
        return new Rule(a, null, null, null, null, null, null, null, null, null);
    }
}
