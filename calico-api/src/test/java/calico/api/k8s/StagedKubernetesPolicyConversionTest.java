package calico.api.k8s;

import calico.api.k8s.policy.LabelSelector;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.codec.ResourceCodec;
import calico.api.model.NetworkPolicy;
import calico.api.model.StagedAction;
import calico.api.model.StagedKubernetesNetworkPolicy;
import calico.api.model.StagedNetworkPolicy;
import calico.api.model.StagedNetworkPolicySpec;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** StagedKubernetesNetworkPolicy: its spec in the resource model, and its conversion to a StagedNetworkPolicy. */
class StagedKubernetesPolicyConversionTest {

    private final ResourceCodec codec = ResourceCodec.get();
    private final KubernetesConverter converter = new KubernetesConverter();

    private static final String STAGED = """
            apiVersion: projectcalico.org/v3
            kind: StagedKubernetesNetworkPolicy
            metadata:
              name: db-access
              namespace: shop
              uid: 9a8b7c6d-1234-4abc-8def-0123456789ab
              resourceVersion: "901"
              creationTimestamp: "2024-05-04T07:00:00Z"
            spec:
              stagedAction: Set
              podSelector:
                matchLabels: {role: db}
              policyTypes: [Ingress, Egress]
              ingress:
              - from:
                - namespaceSelector: {matchLabels: {project: shop}}
                  podSelector: {matchExpressions: [{key: role, operator: In, values: [api, worker]}]}
                - ipBlock: {cidr: 172.17.0.0/16, except: [172.17.1.0/24]}
                ports:
                - {protocol: TCP, port: 5432}
                - {port: 6000, endPort: 6010}
                - {port: metrics}
              egress:
              - {}
            """;

    /** What the staged policy previews: the same as a Kubernetes policy of that spec, without UID or revision. */
    private static final String ENFORCED = """
            apiVersion: projectcalico.org/v3
            kind: NetworkPolicy
            metadata:
              name: knp.default.db-access
              namespace: shop
              creationTimestamp: "2024-05-04T07:00:00Z"
            spec:
              tier: default
              order: 1000
              selector: projectcalico.org/orchestrator == 'k8s' && role == 'db'
              types: [Ingress, Egress]
              ingress:
              - action: Allow
                protocol: TCP
                source:
                  selector: projectcalico.org/orchestrator == 'k8s' && role in { 'api', 'worker' }
                  namespaceSelector: project == 'shop'
                destination: {ports: [metrics, 5432, "6000:6010"]}
              - action: Allow
                protocol: TCP
                source: {nets: [172.17.0.0/16], notNets: [172.17.1.0/24]}
                destination: {ports: [metrics, 5432, "6000:6010"]}
              egress:
              - action: Allow
                source: {}
                destination: {}
            """;

    @Test
    void theStagedResourceRoundTripsThroughTheStrictCodec() {
        var staged = (StagedKubernetesNetworkPolicy) codec.parse(STAGED);

        assertThat(staged.spec().stagedAction()).isEqualTo(StagedAction.Set);
        assertThat(staged.spec().podSelector()).isEqualTo(LabelSelector.matching(java.util.Map.of("role", "db")));
        assertThat(staged.spec().ingress().get(0).ports().get(1).endPort()).isEqualTo(6010);
        assertThat(codec.parse(codec.toYaml(staged))).isEqualTo(staged);
    }

    @Test
    void anEmptyPeerSelectorSurvivesTheRoundTrip() {
        // {} (all namespaces) and absent (own namespace) differ; the YAML must keep them apart.
        var staged = (StagedKubernetesNetworkPolicy) codec.parse(STAGED.replace(
                "- namespaceSelector: {matchLabels: {project: shop}}", "- namespaceSelector: {}"));

        String yaml = codec.toYaml(staged);

        assertThat(yaml).contains("namespaceSelector: {}");
        assertThat(codec.parse(yaml)).isEqualTo(staged);
    }

    @Test
    void previewsTheKnpPolicyThatCommittingWouldEnforce() {
        var staged = (StagedKubernetesNetworkPolicy) codec.parse(STAGED);

        var enforced = new StagedKubernetesPolicyConverter(new NetworkPolicyConverter()).enforced(staged);

        assertThat(enforced.droppedRules()).isEmpty();
        assertThat(enforced.value()).isEqualTo((NetworkPolicy) codec.parse(ENFORCED));
    }

    static Stream<Arguments> actions() {
        return Stream.of(
                Arguments.of("stagedAction: Set", StagedAction.Set),
                Arguments.of("stagedAction: Delete", StagedAction.Delete),
                Arguments.of("stagedAction: Learn", StagedAction.Learn),
                Arguments.of("stagedAction: Ignore", StagedAction.Ignore));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("actions")
    void carriesTheStagedAction(String line, StagedAction action) {
        var staged = (StagedKubernetesNetworkPolicy) codec.parse(STAGED.replace("stagedAction: Set", line));

        assertThat(StagedKubernetesPolicyConverter.stagedAction(staged)).isEqualTo(action);
    }

    @Test
    void aMissingStagedActionMeansSet() {
        var staged = (StagedKubernetesNetworkPolicy) codec.parse(STAGED.replace("  stagedAction: Set\n", ""));

        assertThat(StagedKubernetesPolicyConverter.stagedAction(staged)).isEqualTo(StagedAction.Set);
        assertThat(StagedKubernetesPolicyConverter.stagedPolicyName("db-access")).isEqualTo("knp.default.db-access");
    }

    /** The full StagedNetworkPolicy: the enforced conversion plus the staged action. */
    @Test
    void convertsToAStagedNetworkPolicyNamedKnpDefault() {
        var staged = (StagedKubernetesNetworkPolicy) codec.parse(STAGED.replace("stagedAction: Set", "stagedAction: Learn"));
        StagedNetworkPolicy result = converter.stagedNetworkPolicy(staged).value();

        assertThat(result.metadata().name()).isEqualTo("knp.default.db-access");
        assertThat(result.metadata().namespace()).isEqualTo("shop");
        JsonNode expected = codec.toTree(codec.parse(ENFORCED)).get("spec").deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) expected).put("stagedAction", "Learn");
        assertThat(codec.toTree(result).get("spec")).isEqualTo(expected);
        assertThat(codec.parse(codec.toYaml(result))).isEqualTo(result);
    }
}
