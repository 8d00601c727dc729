package calico.felix.calc;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.k8s.KubeAdminNetworkPolicy;
import calico.api.k8s.KubeBaselineAdminNetworkPolicy;
import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubeObjectMeta;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubernetesConverter;
import calico.api.k8s.KubernetesObjects;
import calico.api.model.Action;
import calico.api.model.Resource;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * AdminNetworkPolicy, NetworkPolicy and BaselineAdminNetworkPolicy together through the whole
 * graph, converted by calico-api as the kubernetes datastore presents them: the applied state
 * must give the policy API's precedence (admin tier by priority, then namespace policy, then
 * baseline; Pass skips the rest of the admin tier; Allow and Deny in the admin tier are final).
 * One row per case: the objects present, then a packet and whether it gets through.
 */
class AdminNetworkPolicySemanticsTest {

    private static final String ME = "n1";
    private static final KubernetesConverter CONV = new KubernetesConverter();
    private static final KubernetesObjects K8S = new KubernetesObjects();
    private Harness h;
    private Verdicts v;

    // web (ns1, 10.0.1.1), db (ns1, 10.0.1.2): local; client (ns2 team=a, 10.0.2.1), other (ns3 team=b, 10.0.3.1)
    @BeforeEach
    void cluster() {
        h = new Harness(ME);
        v = new Verdicts(h.state);
        h.put(Res.tier("default", 1_000_000.0, Action.Deny), Res.tier("kube-admin", 1_000.0, Action.Pass),
                Res.tier("kube-baseline", 10_000_000.0, Action.Pass));
        h.put(ns("ns1", Map.of()), ns("ns2", Map.of("team", "a")), ns("ns3", Map.of("team", "b")));
        h.put(pod("ns1", "web", ME, "10.0.1.1", Map.of("app", "web")),
                pod("ns1", "db", ME, "10.0.1.2", Map.of("app", "db")),
                pod("ns2", "client", "n2", "10.0.2.1", Map.of("app", "client")),
                pod("ns3", "other", "n3", "10.0.3.1", Map.of("app", "other")));
    }

    // ------------------------------------------------------------ objects the rows combine

    static final String PASS_TEAM_A = anp("pass-team-a", 10, """
            subject: {namespaces: {matchLabels: {kubernetes.io/metadata.name: ns1}}}
            ingress:
            - {name: pass-a, action: Pass, from: [{namespaces: {matchLabels: {team: a}}}]}
            """);
    static final String DENY_INTO_NS1 = anp("deny-into-ns1", 20, """
            subject: {namespaces: {matchLabels: {kubernetes.io/metadata.name: ns1}}}
            ingress:
            - {name: deny-all, action: Deny, from: [{namespaces: {}}]}
            """);
    static final String ALLOW_WEB_TO_DB = anp("allow-web-to-db", 5, """
            subject: {pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: db}}}}
            ingress:
            - {name: web, action: Allow, from: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: web}}}}],
               ports: [{portNumber: {port: 5432}}]}
            """);
    static final String DENY_DNS_SERVER = anp("deny-dns-server", 1, """
            subject: {namespaces: {}}
            egress:
            - {name: no-8888, action: Deny, to: [{networks: [8.8.8.8/32]}]}
            """);
    static final String BASELINE_DENY = """
            apiVersion: policy.networking.k8s.io/v1alpha1
            kind: BaselineAdminNetworkPolicy
            metadata: {name: default}
            spec:
              subject: {namespaces: {}}
              ingress:
              - {name: deny-all, action: Deny, from: [{namespaces: {}}]}
            """;
    /** ns1's db only takes team=a and team=b namespaces (and isolates db). */
    static final String KNP_DB_FROM_TEAMS = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {name: db-from-teams, namespace: ns1}
            spec:
              podSelector: {matchLabels: {app: db}}
              ingress:
              - from: [{namespaceSelector: {matchExpressions: [{key: team, operator: In, values: [a, b]}]}}]
            """;

    static Stream<Arguments> table() {
        return Stream.of(
                row("nothing: the namespace profile allows", List.of(), "10.0.2.1", "10.0.1.1", 80, true),
                row("baseline alone denies what no namespace policy allows", List.of(BASELINE_DENY),
                        "10.0.2.1", "10.0.1.1", 80, false),
                row("a namespace policy's allow comes before the baseline", List.of(BASELINE_DENY, KNP_DB_FROM_TEAMS),
                        "10.0.2.1", "10.0.1.2", 80, true),
                row("the namespace policy's isolation is not the baseline's business",
                        List.of(BASELINE_DENY, KNP_DB_FROM_TEAMS), "10.0.1.1", "10.0.1.2", 80, false),
                row("an admin Deny beats a namespace policy's allow", List.of(DENY_INTO_NS1, KNP_DB_FROM_TEAMS),
                        "10.0.3.1", "10.0.1.2", 80, false),
                row("Pass skips the later admin Deny and falls through to the namespace policy",
                        List.of(PASS_TEAM_A, DENY_INTO_NS1, KNP_DB_FROM_TEAMS, BASELINE_DENY),
                        "10.0.2.1", "10.0.1.2", 80, true),
                row("Pass to a pod no namespace policy selects reaches the baseline",
                        List.of(PASS_TEAM_A, DENY_INTO_NS1, KNP_DB_FROM_TEAMS, BASELINE_DENY),
                        "10.0.2.1", "10.0.1.1", 80, false),
                row("Pass without baseline: the namespace profile allows",
                        List.of(PASS_TEAM_A, DENY_INTO_NS1), "10.0.2.1", "10.0.1.1", 80, true),
                row("a lower priority number goes first: admin Allow beats isolation and the later Deny",
                        List.of(ALLOW_WEB_TO_DB, DENY_INTO_NS1, KNP_DB_FROM_TEAMS), "10.0.1.1", "10.0.1.2", 5432, true),
                row("the admin Allow is for its port only", List.of(ALLOW_WEB_TO_DB, DENY_INTO_NS1, KNP_DB_FROM_TEAMS),
                        "10.0.1.1", "10.0.1.2", 80, false),
                row("egress to a denied network", List.of(DENY_DNS_SERVER), "10.0.1.1", "8.8.8.8", 53, false),
                row("egress elsewhere passes the admin tier (default action Pass)", List.of(DENY_DNS_SERVER),
                        "10.0.1.1", "9.9.9.9", 53, true));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void precedenceAsThePolicyApiDefinesIt(String rule, List<String> objects, String src, String dst, int port,
                                          boolean allowed) {
        for (String o : objects) {
            h.put(convert(o));
        }
        boolean got = dst.startsWith("10.0.1.") ? v.ingressAllowed(id(dst), src, dst, port)
                : v.egressAllowed(id(src), src, dst, port);
        assertThat(got).as(rule).isEqualTo(allowed);
    }

    @Test
    void theAdminTierOrdersByPriorityBeforeDefaultAndBaselineAfter() {
        for (String o : List.of(BASELINE_DENY, DENY_INTO_NS1, KNP_DB_FROM_TEAMS, ALLOW_WEB_TO_DB, PASS_TEAM_A)) {
            h.put(convert(o));
        }
        List<TierPolicies> tiers = h.state.workloads.get(id("10.0.1.2")).ingress();
        assertThat(tiers).extracting(TierPolicies::tier).containsExactly("kube-admin", "default", "kube-baseline");
        assertThat(tiers.get(0).policies()).extracting(PolicyId::name).containsExactly(
                "kanp.adminnetworkpolicy.allow-web-to-db", "kanp.adminnetworkpolicy.pass-team-a",
                "kanp.adminnetworkpolicy.deny-into-ns1");
        assertThat(tiers.get(0).defaultAction()).isEqualTo(Action.Pass);
        assertThat(tiers.get(2).policies()).extracting(PolicyId::name)
                .containsExactly("kbanp.baselineadminnetworkpolicy.default");
        // Deleting the ANP takes it out of the tier.
        h.delete(calico.api.model.ResourceKey.of(calico.api.model.ResourceKind.GLOBAL_NETWORK_POLICY,
                "kanp.adminnetworkpolicy.pass-team-a"));
        assertThat(h.state.workloads.get(id("10.0.1.2")).ingress().get(0).policies()).hasSize(2);
    }

    // ------------------------------------------------------------ helpers

    private static Arguments row(String rule, List<String> objects, String src, String dst, int port, boolean allowed) {
        return Arguments.of(rule, objects, src, dst, port, allowed);
    }

    private static String anp(String name, int priority, String rest) {
        return "apiVersion: policy.networking.k8s.io/v1alpha1\nkind: AdminNetworkPolicy\nmetadata: {name: " + name
                + "}\nspec:\n  priority: " + priority + "\n" + rest.indent(2);
    }

    private static Resource convert(String yaml) {
        if (yaml.contains("kind: AdminNetworkPolicy")) {
            return CONV.adminNetworkPolicy(K8S.parse(yaml, KubeAdminNetworkPolicy.class)).orElseThrow("ANP");
        }
        if (yaml.contains("kind: BaselineAdminNetworkPolicy")) {
            return CONV.baselineAdminNetworkPolicy(K8S.parse(yaml, KubeBaselineAdminNetworkPolicy.class)).orElseThrow("BANP");
        }
        return CONV.networkPolicy(K8S.parse(yaml, KubeNetworkPolicy.class)).orElseThrow("KNP");
    }

    private static Resource ns(String name, Map<String, String> labels) {
        Map<String, String> all = new java.util.HashMap<>(labels);
        all.put("kubernetes.io/metadata.name", name); // the API server adds it to every namespace
        return CONV.namespaceProfile(new KubeNamespace(KubeObjectMeta.of(null, name, all)));
    }

    private static Resource pod(String ns, String name, String node, String ip, Map<String, String> labels) {
        return CONV.workloadEndpoint(new KubePod(KubeObjectMeta.of(ns, name, labels),
                new KubePod.Spec(node, "default", false, null, null),
                new KubePod.Status(ip, null, "Running"))).orElseThrow();
    }

    private String id(String ip) {
        return h.state.workloads.values().stream().filter(w -> w.ipv4Nets().contains(ip + "/32")).findFirst()
                .orElseThrow().id();
    }
}
