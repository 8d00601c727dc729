package calico.api.k8s;

import calico.api.k8s.policy.LabelSelector;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.NetworkPolicy;
import calico.api.model.Port;
import calico.api.validation.FieldError;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kubernetes NetworkPolicy → Calico NetworkPolicy, one table row per conversion rule. Each row
 * is real Kubernetes YAML (with fields we ignore) and the Calico resource Calico's Kubernetes
 * datastore shows for it; the result must also survive a YAML round trip through the codec.
 */
class NetworkPolicyConversionTest {

    private final KubernetesObjects objects = new KubernetesObjects();
    private final KubernetesConverter converter = new KubernetesConverter();
    private final ResourceCodec codec = ResourceCodec.get();

    /** Wraps a spec in the metadata an API server returns, including fields we must ignore. */
    static String k8s(String name, String spec) {
        return """
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata:
                  name: %s
                  namespace: shop
                  uid: 6f1f4c1e-3b2a-4b5e-9c1d-2a7e5f0b8d31
                  resourceVersion: "48213"
                  generation: 3
                  creationTimestamp: "2024-05-01T10:00:00Z"
                  annotations:
                    kubectl.kubernetes.io/last-applied-configuration: '{"kind":"NetworkPolicy"}'
                  managedFields:
                  - manager: kubectl-client-side-apply
                    operation: Update
                    apiVersion: networking.k8s.io/v1
                    fieldsType: FieldsV1
                    fieldsV1: {f:spec: {f:podSelector: {}}}
                spec:
                %s
                status: {}
                """.formatted(name, spec.indent(2).stripTrailing());
    }

    /** The Calico resource for it: derived UID, same revision and timestamp, tier default, order 1000. */
    static String calico(String name, String spec) {
        return """
                apiVersion: projectcalico.org/v3
                kind: NetworkPolicy
                metadata:
                  name: knp.default.%s
                  namespace: shop
                  uid: f6f83278-dc54-4b7a-9cb8-547efad0b18c
                  resourceVersion: "48213"
                  creationTimestamp: "2024-05-01T10:00:00Z"
                spec:
                  tier: default
                  order: 1000
                %s
                """.formatted(name, spec.indent(2).stripTrailing());
    }

    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of("the Kubernetes documentation example: ipBlock with except, namespace and pod peers",
                        k8s("test-network-policy", """
                                podSelector:
                                  matchLabels: {role: db}
                                policyTypes: [Ingress, Egress]
                                ingress:
                                - from:
                                  - ipBlock:
                                      cidr: 172.17.0.0/16
                                      except: [172.17.1.0/24]
                                  - namespaceSelector:
                                      matchLabels: {project: myproject}
                                  - podSelector:
                                      matchLabels: {role: frontend}
                                  ports:
                                  - protocol: TCP
                                    port: 6379
                                egress:
                                - to:
                                  - ipBlock: {cidr: 10.0.0.0/24}
                                  ports:
                                  - protocol: TCP
                                    port: 5978
                                """),
                        calico("test-network-policy", """
                                selector: projectcalico.org/orchestrator == 'k8s' && role == 'db'
                                types: [Ingress, Egress]
                                ingress:
                                - action: Allow
                                  protocol: TCP
                                  source: {nets: [172.17.0.0/16], notNets: [172.17.1.0/24]}
                                  destination: {ports: [6379]}
                                - action: Allow
                                  protocol: TCP
                                  source:
                                    selector: projectcalico.org/orchestrator == 'k8s'
                                    namespaceSelector: project == 'myproject'
                                  destination: {ports: [6379]}
                                - action: Allow
                                  protocol: TCP
                                  source: {selector: projectcalico.org/orchestrator == 'k8s' && role == 'frontend'}
                                  destination: {ports: [6379]}
                                egress:
                                - action: Allow
                                  protocol: TCP
                                  source: {}
                                  destination: {nets: [10.0.0.0/24], ports: [5978]}
                                """)),
                Arguments.of("ipBlock CIDRs lose their host bits; IPv6 is printed in canonical form",
                        k8s("blocks", """
                                podSelector: {}
                                policyTypes: [Ingress]
                                ingress:
                                - from:
                                  - ipBlock: {cidr: 10.1.2.3/16, except: [10.1.200.7/24]}
                                  - ipBlock: {cidr: "2001:DB8:0:0:0::/32", except: ["2001:db8:0:1:0:0:0:0/64"]}
                                """),
                        calico("blocks", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  source: {nets: [10.1.0.0/16], notNets: [10.1.200.0/24]}
                                  destination: {}
                                - action: Allow
                                  source: {nets: ["2001:db8::/32"], notNets: ["2001:db8:0:1::/64"]}
                                  destination: {}
                                """)),
                Arguments.of("endPort makes a port range",
                        k8s("range", """
                                podSelector: {matchLabels: {app: media}}
                                policyTypes: [Ingress]
                                ingress:
                                - ports:
                                  - {protocol: UDP, port: 32000, endPort: 32768}
                                """),
                        calico("range", """
                                selector: projectcalico.org/orchestrator == 'k8s' && app == 'media'
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  protocol: UDP
                                  source: {}
                                  destination: {ports: ["32000:32768"]}
                                """)),
                Arguments.of("a named port without protocol is TCP; a quoted number is a number",
                        k8s("named", """
                                podSelector: {}
                                policyTypes: [Ingress]
                                ingress:
                                - ports:
                                  - port: http
                                - ports:
                                  - port: "8443"
                                """),
                        calico("named", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  protocol: TCP
                                  source: {}
                                  destination: {ports: [http]}
                                - action: Allow
                                  protocol: TCP
                                  source: {}
                                  destination: {ports: [8443]}
                                """)),
                Arguments.of("ports are grouped by protocol (sorted), merged into ranges, named ports first",
                        k8s("grouped", """
                                podSelector: {}
                                policyTypes: [Ingress]
                                ingress:
                                - from:
                                  - podSelector: {matchLabels: {app: a}}
                                  - podSelector: {matchLabels: {app: b}}
                                  ports:
                                  - port: 82
                                  - port: 80
                                  - {port: 81, endPort: 81}
                                  - port: 9090
                                  - port: metrics
                                  - {protocol: UDP, port: 53}
                                  - {protocol: SCTP}
                                """),
                        calico("grouped", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  protocol: SCTP
                                  source: {selector: projectcalico.org/orchestrator == 'k8s' && app == 'a'}
                                  destination: {}
                                - action: Allow
                                  protocol: SCTP
                                  source: {selector: projectcalico.org/orchestrator == 'k8s' && app == 'b'}
                                  destination: {}
                                - action: Allow
                                  protocol: TCP
                                  source: {selector: projectcalico.org/orchestrator == 'k8s' && app == 'a'}
                                  destination: {ports: [metrics, "80:82", 9090]}
                                - action: Allow
                                  protocol: TCP
                                  source: {selector: projectcalico.org/orchestrator == 'k8s' && app == 'b'}
                                  destination: {ports: [metrics, "80:82", 9090]}
                                - action: Allow
                                  protocol: UDP
                                  source: {selector: projectcalico.org/orchestrator == 'k8s' && app == 'a'}
                                  destination: {ports: [53]}
                                - action: Allow
                                  protocol: UDP
                                  source: {selector: projectcalico.org/orchestrator == 'k8s' && app == 'b'}
                                  destination: {ports: [53]}
                                """)),
                Arguments.of("a port entry without port allows every port of its protocol and absorbs the others",
                        k8s("all-tcp", """
                                podSelector: {}
                                policyTypes: [Ingress]
                                ingress:
                                - ports:
                                  - port: 80
                                  - {}
                                  - port: 443
                                """),
                        calico("all-tcp", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  protocol: TCP
                                  source: {}
                                  destination: {}
                                """)),
                Arguments.of("namespaceSelector and podSelector in one peer: pods matching both; empty namespaceSelector is all()",
                        k8s("ns-and-pods", """
                                podSelector: {matchLabels: {app: api}}
                                policyTypes: [Ingress]
                                ingress:
                                - from:
                                  - namespaceSelector: {matchLabels: {team: web, env: prod}}
                                    podSelector: {matchLabels: {app: frontend}}
                                  - namespaceSelector: {}
                                    podSelector: {matchLabels: {app: monitor}}
                                  - namespaceSelector: {}
                                """),
                        calico("ns-and-pods", """
                                selector: projectcalico.org/orchestrator == 'k8s' && app == 'api'
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  source:
                                    selector: projectcalico.org/orchestrator == 'k8s' && app == 'frontend'
                                    namespaceSelector: env == 'prod' && team == 'web'
                                  destination: {}
                                - action: Allow
                                  source:
                                    selector: projectcalico.org/orchestrator == 'k8s' && app == 'monitor'
                                    namespaceSelector: all()
                                  destination: {}
                                - action: Allow
                                  source:
                                    selector: projectcalico.org/orchestrator == 'k8s'
                                    namespaceSelector: all()
                                  destination: {}
                                """)),
                Arguments.of("matchExpressions: all four operators, after matchLabels, in pod and namespace selectors",
                        k8s("expressions", """
                                podSelector:
                                  matchLabels: {app: db}
                                  matchExpressions:
                                  - {key: tier, operator: In, values: [gold, silver]}
                                  - {key: env, operator: NotIn, values: [dev]}
                                  - {key: backup, operator: Exists}
                                  - {key: legacy, operator: DoesNotExist}
                                policyTypes: [Ingress]
                                ingress:
                                - from:
                                  - namespaceSelector:
                                      matchExpressions:
                                      - {key: kubernetes.io/metadata.name, operator: In, values: [ops]}
                                      - {key: quarantine, operator: DoesNotExist}
                                """),
                        calico("expressions", """
                                selector: >-
                                  projectcalico.org/orchestrator == 'k8s' && app == 'db'
                                  && tier in { 'gold', 'silver' } && env not in { 'dev' } && has(backup) && ! has(legacy)
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  source:
                                    selector: projectcalico.org/orchestrator == 'k8s'
                                    namespaceSelector: kubernetes.io/metadata.name in { 'ops' } && ! has(quarantine)
                                  destination: {}
                                """)),
                Arguments.of("no policyTypes and egress rules: Kubernetes defaulting gives Ingress and Egress",
                        k8s("defaulted-both", """
                                podSelector: {}
                                egress:
                                - to:
                                  - podSelector: {}
                                """),
                        calico("defaulted-both", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress, Egress]
                                egress:
                                - action: Allow
                                  source: {}
                                  destination: {selector: projectcalico.org/orchestrator == 'k8s'}
                                """)),
                Arguments.of("no policyTypes and no rules: Ingress only, i.e. deny all ingress",
                        k8s("defaulted-ingress", """
                                podSelector: {}
                                """),
                        calico("defaulted-ingress", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress]
                                """)),
                Arguments.of("Egress-only policy: only egress is isolated",
                        k8s("egress-only", """
                                podSelector: {matchLabels: {app: batch}}
                                policyTypes: [Egress]
                                egress:
                                - to:
                                  - ipBlock: {cidr: 0.0.0.0/0, except: [169.254.169.254/32]}
                                  ports:
                                  - {protocol: TCP, port: 443}
                                """),
                        calico("egress-only", """
                                selector: projectcalico.org/orchestrator == 'k8s' && app == 'batch'
                                types: [Egress]
                                egress:
                                - action: Allow
                                  protocol: TCP
                                  source: {}
                                  destination: {nets: [0.0.0.0/0], notNets: [169.254.169.254/32], ports: [443]}
                                """)),
                Arguments.of("both types and no egress rules: deny all egress, ingress from anywhere",
                        k8s("deny-egress", """
                                podSelector: {}
                                policyTypes: [Ingress, Egress]
                                ingress:
                                - {}
                                """),
                        calico("deny-egress", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress, Egress]
                                ingress:
                                - action: Allow
                                  source: {}
                                  destination: {}
                                """)),
                Arguments.of("given policyTypes win: egress rules are kept but Egress is not isolated",
                        k8s("types-given", """
                                podSelector: {}
                                policyTypes: [Ingress]
                                egress:
                                - ports: [{port: 53, protocol: UDP}]
                                """),
                        calico("types-given", """
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress]
                                egress:
                                - action: Allow
                                  protocol: UDP
                                  source: {}
                                  destination: {ports: [53]}
                                """)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void convertsAsCalicoDoes(String rule, String kubernetesYaml, String expectedCalicoYaml) {
        KubeNetworkPolicy np = objects.parse(kubernetesYaml, KubeNetworkPolicy.class);

        Conversion<NetworkPolicy> result = converter.networkPolicy(np);

        NetworkPolicy expected = (NetworkPolicy) codec.parse(expectedCalicoYaml);
        assertThat(result.droppedRules()).isEmpty();
        assertThat(result.value()).isEqualTo(expected);
        assertThat(codec.parse(codec.toYaml(result.value()))).isEqualTo(result.value());
    }

    @Test
    void writesCalicoFieldNamesInYaml() {
        var np = objects.parse(k8s("web", """
                podSelector: {matchLabels: {app: web}}
                ingress:
                - from: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]
                  ports: [{port: 80, endPort: 90}]
                """), KubeNetworkPolicy.class);

        String yaml = codec.toYaml(converter.networkPolicy(np).value());

        assertThat(yaml).contains("name: knp.default.web", "tier: default", "notNets:", "- 10.1.0.0/16",
                "80:90", "types:", "- Ingress");
    }

    @Test
    void dropsOnlyTheRuleThatCannotBeConvertedAndSaysWhy() {
        var np = objects.parse(k8s("partly-bad", """
                podSelector: {}
                policyTypes: [Ingress, Egress]
                ingress:
                - from: [{ipBlock: {cidr: 10.0.0.0/33}}]
                - from: [{podSelector: {matchLabels: {app: ok}}}]
                - ports: [{port: http, endPort: 90}]
                - ports: [{port: "1234567"}]
                - ports: [{port: "a:b"}]
                - ports: [{port: "8000", endPort: 8080}]
                egress:
                - ports: [{port: 90, endPort: 80}]
                - to: [{ipBlock: {cidr: 10.0.0.0/8, except: [banana]}}]
                """), KubeNetworkPolicy.class);

        Conversion<NetworkPolicy> result = converter.networkPolicy(np);

        assertThat(result.value().spec().ingress()).hasSize(2);
        assertThat(result.value().spec().ingress().get(0).source().selector())
                .isEqualTo("projectcalico.org/orchestrator == 'k8s' && app == 'ok'");
        assertThat(result.value().spec().ingress().get(1).destination().ports()).containsExactly(Port.range(8000, 8080));
        assertThat(result.value().spec().egress()).isEmpty();
        assertThat(result.droppedRules()).extracting(FieldError::field).containsExactly(
                "spec.ingress[0].from[0].ipBlock.cidr",
                "spec.ingress[2].ports[0].endPort",
                "spec.ingress[3].ports[0].port",
                "spec.ingress[4].ports[0].port",
                "spec.egress[0].ports[0].endPort",
                "spec.egress[1].to[0].ipBlock.except[0]");
        assertThat(result.droppedRules().get(0).reason()).contains("prefix length");
        assertThat(result.isComplete()).isFalse();
        assertThatThrownBy(() -> result.orElseThrow("NetworkPolicy shop/partly-bad"))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("spec.ingress[0].from[0].ipBlock.cidr");
    }

    @Test
    void refusesAPolicyWhosePodSelectorCannotBeTranslated() {
        var np = objects.parse(k8s("no-operator", """
                podSelector:
                  matchExpressions: [{key: app, values: [x]}]
                """), KubeNetworkPolicy.class);

        assertThatThrownBy(() -> converter.networkPolicy(np))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("spec.podSelector.matchExpressions[0].operator");
    }

    @Test
    void refusesMissingNamespaceAndMalformedUid() {
        var noNs = new KubeNetworkPolicy(KubeObjectMeta.of(null, "p", null), null);
        assertThatThrownBy(() -> converter.networkPolicy(noNs))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("metadata.namespace: is required");

        var badUid = new KubeNetworkPolicy(new KubeObjectMeta("p", "ns", null, "not-a-uuid", null, null, null, null, null), null);
        assertThatThrownBy(() -> converter.networkPolicy(badUid))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("metadata.uid");
    }

    @Test
    void aPolicyWithoutUidOrRevisionHasNone() {
        var np = new KubeNetworkPolicy(KubeObjectMeta.of("ns", "p", null),
                new KubeNetworkPolicy.Spec(LabelSelector.everything(), null, null, null));

        NetworkPolicy p = converter.networkPolicy(np).value();

        assertThat(p.metadata().uid()).isNull();
        assertThat(p.metadata().resourceVersion()).isNull();
        assertThat(p.key().name()).isEqualTo("knp.default.p");
    }

    @Test
    void readerRejectsTheWrongKindAndMisshapenFieldsByName() {
        assertThatThrownBy(() -> objects.parse("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", KubeNetworkPolicy.class))
                .isInstanceOf(ResourceParseException.class)
                .hasMessageContaining("apiVersion");
        assertThatThrownBy(() -> objects.parse(k8s("x", """
                podSelector: {}
                ingress:
                - ports: [{port: [80]}]
                """), KubeNetworkPolicy.class))
                .isInstanceOf(ResourceParseException.class)
                .hasMessageContaining("spec.ingress[0].ports[0].port");
        assertThatThrownBy(() -> objects.parse(k8s("x", """
                podSelector: {matchExpressions: [{key: a, operator: Maybe}]}
                """), KubeNetworkPolicy.class))
                .isInstanceOf(ResourceParseException.class)
                .hasMessageContaining("spec.podSelector.matchExpressions[0].operator");
    }

    @Test
    void readsJsonAsTheApiServerSendsIt() {
        String json = """
                {"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy",
                 "metadata":{"name":"j","namespace":"shop","uid":"6f1f4c1e-3b2a-4b5e-9c1d-2a7e5f0b8d31",
                   "resourceVersion":"48213","creationTimestamp":"2024-05-01T10:00:00Z","generation":1},
                 "spec":{"podSelector":{},"ingress":[{"from":[{"podSelector":{}}],"ports":[{"protocol":"TCP","port":80}]}],
                   "policyTypes":["Ingress"]}}
                """;

        NetworkPolicy p = converter.networkPolicy(objects.parse(json, KubeNetworkPolicy.class)).value();

        assertThat(p).isEqualTo(codec.parse(calico("j", """
                selector: projectcalico.org/orchestrator == 'k8s'
                types: [Ingress]
                ingress:
                - action: Allow
                  protocol: TCP
                  source: {selector: projectcalico.org/orchestrator == 'k8s'}
                  destination: {ports: [80]}
                """)));
    }
}
