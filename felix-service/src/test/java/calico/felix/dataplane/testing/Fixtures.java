package calico.felix.dataplane.testing;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.util.List;
import java.util.Map;

/** Terse v3 resources for the dataplane driver tests (iptables and nftables alike). */
public final class Fixtures {

    private Fixtures() {
    }

    public static WorkloadEndpoint wep(String ns, String name, String node, String ip, String iface,
                                Map<String, String> labels, String... profiles) {
        return wep(ns, name, node, List.of(ip + "/32"), iface, labels, profiles);
    }

    /** A workload with several networks (e.g. dual stack: a /32 and a /128). */
    public static WorkloadEndpoint wep(String ns, String name, String node, List<String> nets, String iface,
                                Map<String, String> labels, String... profiles) {
        return new WorkloadEndpoint(ObjectMeta.namespaced(ns, name).withLabels(labels),
                new WorkloadEndpointSpec("k8s", null, node, null, name, "eth0", null, nets, null,
                        null, null, List.of(profiles), iface, "ee:ee:ee:ee:ee:ee", List.of(), null));
    }

    public static Tier tier(String name, Double order) {
        return new Tier(ObjectMeta.named(name), new TierSpec(order, null));
    }

    /** A namespace profile as the Kubernetes converter makes it: allow everything both ways. */
    public static Profile allowAllProfile(String name) {
        return new Profile(ObjectMeta.named(name), new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of()));
    }

    public static GlobalNetworkPolicy gnp(String name, String selector, List<Rule> ingress, PolicyType... types) {
        return gnp(name, "default", selector, ingress, List.of(), types);
    }

    public static GlobalNetworkPolicy gnp(String name, String tier, String selector, List<Rule> ingress, List<Rule> egress,
                                   PolicyType... types) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec(tier, 1.0, ingress,
                egress, selector, List.of(types), null, null, null, null, null, null));
    }

    /** A host endpoint of {@code node} on {@code iface} ({@code "*"}: all of the host's interfaces). */
    public static calico.api.model.HostEndpoint hep(String name, String node, String iface, Map<String, String> labels,
                                                    String... profiles) {
        return new calico.api.model.HostEndpoint(ObjectMeta.named(name).withLabels(labels),
                new calico.api.model.HostEndpointSpec(node, iface, List.of(), List.of(profiles), List.of()));
    }

    /** A host endpoint policy of one kind: doNotTrack, preDNAT or applyOnForward (Calico requires it for the other two). */
    public static GlobalNetworkPolicy hostGnp(String name, double order, String selector, List<Rule> ingress,
                                              List<Rule> egress, boolean doNotTrack, boolean preDnat,
                                              boolean applyOnForward, PolicyType... types) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec("default", order, ingress,
                egress, selector, List.of(types), doNotTrack, preDnat, applyOnForward, null, null, null));
    }

    public static Rule action(calico.api.model.Action a) {
        return new Rule(a, null, null, null, null, null, null, null, null, null);
    }

    /**
     * Folds {@code batch} into {@code model}, then has {@code driver} (which renders that model)
     * program it: what the kernel dataplane does with each batch.
     */
    public static PolicyDriver.ApplyStats foldAndApply(DataplaneModel model, PolicyDriver driver,
                                                       List<DataplaneUpdate> batch) {
        model.apply(batch);
        return driver.apply(batch);
    }
}
