package calico.felix.calc;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubeObjectMeta;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubernetesConverter;
import calico.api.k8s.policy.IntOrString;
import calico.api.k8s.policy.LabelSelector;
import calico.api.k8s.policy.NetworkPolicyEgressRule;
import calico.api.k8s.policy.NetworkPolicyIngressRule;
import calico.api.k8s.policy.NetworkPolicyPeer;
import calico.api.k8s.policy.NetworkPolicyPort;
import calico.api.model.PolicyType;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Kubernetes NetworkPolicy, converted by calico-api, through the whole graph: the applied state
 * must give exactly Kubernetes semantics (isolation per direction only once a policy of that type
 * selects the pod; policies are additive; namespace and ipBlock peers).
 */
class KubernetesSemanticsTest {

    private static final String ME = "n1";
    private final KubernetesConverter conv = new KubernetesConverter();
    private Harness h;
    private Verdicts v;

    // web (ns1, 10.0.1.1, local), db (ns1, 10.0.1.2, local), client (ns2 team=a, 10.0.2.1, remote),
    // other (ns3 team=b, 10.0.3.1, remote)
    @BeforeEach
    void cluster() {
        h = new Harness(ME);
        v = new Verdicts(h.state);
        h.put(Res.tier("default", null, null));
        h.put(ns("ns1", Map.of()), ns("ns2", Map.of("team", "a")), ns("ns3", Map.of("team", "b")));
        h.put(pod("ns1", "web", ME, "10.0.1.1", Map.of("app", "web")),
                pod("ns1", "db", ME, "10.0.1.2", Map.of("app", "db")),
                pod("ns2", "client", "n2", "10.0.2.1", Map.of("app", "client")),
                pod("ns3", "other", "n3", "10.0.3.1", Map.of("app", "other")));
    }

    private Resource ns(String name, Map<String, String> labels) {
        return conv.namespaceProfile(new KubeNamespace(KubeObjectMeta.of(null, name, labels)));
    }

    private Resource pod(String ns, String name, String node, String ip, Map<String, String> labels) {
        return conv.workloadEndpoint(new KubePod(KubeObjectMeta.of(ns, name, labels),
                new KubePod.Spec(node, "default", false, null, null),
                new KubePod.Status(ip, null, "Running"))).orElseThrow();
    }

    private Resource knp(String ns, String name, LabelSelector pods, List<NetworkPolicyIngressRule> in,
                         List<NetworkPolicyEgressRule> out, PolicyType... types) {
        return conv.networkPolicy(new KubeNetworkPolicy(KubeObjectMeta.of(ns, name, Map.of()),
                new KubeNetworkPolicy.Spec(pods, in, out, List.of(types)))).value();
    }

    private String id(String ip) {
        return h.state.workloads.values().stream().filter(w -> w.ipv4Nets().contains(ip + "/32")).findFirst()
                .orElseThrow().id();
    }

    private boolean in(String src, String dst, int port) {
        return v.ingressAllowed(id(dst), src, dst, port);
    }

    private boolean out(String src, String dst, int port) {
        return v.egressAllowed(id(src), src, dst, port);
    }

    @Test
    void withoutPoliciesEverythingIsAllowed() {
        assertThat(in("10.0.2.1", "10.0.1.2", 5432)).isTrue();
        assertThat(out("10.0.1.1", "8.8.8.8", 53)).isTrue();
    }

    @Test
    void aPolicyIsolatesOnlyTheSelectedPodsAndOnlyForItsTypes() {
        h.put(knp("ns1", "deny-db", LabelSelector.matching(Map.of("app", "db")), List.of(), List.of(),
                PolicyType.Ingress));
        assertThat(in("10.0.1.1", "10.0.1.2", 5432)).isFalse();
        assertThat(in("10.0.2.1", "10.0.1.2", 5432)).isFalse();
        assertThat(out("10.0.1.2", "8.8.8.8", 53)).as("egress not isolated").isTrue();
        assertThat(in("10.0.1.2", "10.0.1.1", 80)).as("web not selected").isTrue();
        h.delete(ResourceKey.of(ResourceKind.NETWORK_POLICY, "ns1", "knp.default.deny-db"));
        assertThat(in("10.0.2.1", "10.0.1.2", 5432)).isTrue();
    }

    @Test
    void policiesAreAdditive() {
        h.put(knp("ns1", "deny-db", LabelSelector.matching(Map.of("app", "db")), List.of(), List.of(),
                PolicyType.Ingress));
        h.put(knp("ns1", "web-to-db", LabelSelector.matching(Map.of("app", "db")),
                List.of(new NetworkPolicyIngressRule(List.of(NetworkPolicyPort.tcp(5432)),
                        List.of(NetworkPolicyPeer.pods(LabelSelector.matching(Map.of("app", "web")))))),
                List.of(), PolicyType.Ingress));
        assertThat(in("10.0.1.1", "10.0.1.2", 5432)).isTrue();
        assertThat(in("10.0.1.1", "10.0.1.2", 80)).isFalse();
        assertThat(in("10.0.2.1", "10.0.1.2", 5432)).as("pod selector is namespace-local").isFalse();
        h.put(knp("ns1", "client-to-db", LabelSelector.matching(Map.of("app", "db")),
                List.of(new NetworkPolicyIngressRule(List.of(),
                        List.of(NetworkPolicyPeer.namespaces(LabelSelector.matching(Map.of("team", "a")))))),
                List.of(), PolicyType.Ingress));
        assertThat(in("10.0.2.1", "10.0.1.2", 80)).isTrue();
        assertThat(in("10.0.3.1", "10.0.1.2", 80)).isFalse();
        assertThat(in("10.0.1.1", "10.0.1.2", 5432)).as("still allowed").isTrue();
        // Relabelling a namespace changes who gets in.
        h.put(ns("ns3", Map.of("team", "a")));
        assertThat(in("10.0.3.1", "10.0.1.2", 80)).isTrue();
    }

    @Test
    void egressIsolationAndIpBlocks() {
        h.put(knp("ns1", "egress", LabelSelector.everything(), List.of(),
                List.of(new NetworkPolicyEgressRule(List.of(new NetworkPolicyPort("UDP", IntOrString.of(53), null)),
                        List.of(NetworkPolicyPeer.block("8.8.0.0/16", "8.8.4.0/24")))),
                PolicyType.Egress));
        assertThat(h.state.policies.values().iterator().next().outbound()).isNotEmpty();
        // Our TCP evaluator: UDP-only rule never matches TCP, so TCP egress is denied.
        assertThat(out("10.0.1.1", "8.8.8.8", 53)).isFalse();
        assertThat(in("10.0.2.1", "10.0.1.1", 80)).as("ingress not isolated").isTrue();
        h.put(knp("ns1", "egress-tcp", LabelSelector.everything(), List.of(),
                List.of(new NetworkPolicyEgressRule(List.of(NetworkPolicyPort.tcp(443)),
                        List.of(NetworkPolicyPeer.block("8.8.0.0/16", "8.8.4.0/24")))),
                PolicyType.Egress));
        assertThat(out("10.0.1.1", "8.8.8.8", 443)).isTrue();
        assertThat(out("10.0.1.1", "8.8.4.4", 443)).as("except").isFalse();
        assertThat(out("10.0.1.1", "9.9.9.9", 443)).isFalse();
    }

    @Test
    void anEmptyPodSelectorSelectsEveryPodOfTheNamespaceOnly() {
        h.put(knp("ns2", "deny-all", LabelSelector.everything(), List.of(), List.of(), PolicyType.Ingress,
                PolicyType.Egress));
        assertThat(in("10.0.2.1", "10.0.1.2", 80)).as("ns1 pods unaffected").isTrue();
        assertThat(h.state.policies).isEmpty();
    }
}
