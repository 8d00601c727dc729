package calico.api.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.codec.ResourceCodec;
import calico.api.model.Action;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.Rule;
import calico.api.validation.FieldError;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * AdminNetworkPolicy and BaselineAdminNetworkPolicy → GlobalNetworkPolicy, one row per
 * conversion rule, each Kubernetes YAML beside the Calico resource Calico's Kubernetes datastore
 * presents for it (rules as in Calico's adminnetworkpolicy conversion tests).
 */
class AdminNetworkPolicyConversionTest {

    private final KubernetesObjects objects = new KubernetesObjects();
    private final KubernetesConverter converter = new KubernetesConverter();
    private final ResourceCodec codec = ResourceCodec.get();

    static String anp(String name, String spec) {
        return """
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: AdminNetworkPolicy
                metadata:
                  name: %s
                  uid: 30316465-6365-4463-ad63-3564622d3638
                  resourceVersion: "77"
                  generation: 1
                spec:
                %s
                status: {conditions: []}
                """.formatted(name, spec.indent(2).stripTrailing());
    }

    static String gnp(String name, String tier, int order, String spec) {
        return """
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata:
                  name: %s
                  uid: %s
                  resourceVersion: "77"
                spec:
                  tier: %s
                  order: %d
                %s
                """.formatted(name, DerivedUid.of("30316465-6365-4463-ad63-3564622d3638"), tier, order,
                spec.indent(2).stripTrailing());
    }

    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of("namespaces subject; one Allow rule with a port, TCP by default; rule name kept",
                        anp("allow-monitoring", """
                                priority: 100
                                subject:
                                  namespaces:
                                    matchLabels: {label2: value2, label: value}
                                ingress:
                                - name: The first ingress rule
                                  action: Allow
                                  from:
                                  - namespaces:
                                      matchLabels: {k: v, k2: v2}
                                  ports:
                                  - portNumber: {port: 80}
                                """),
                        gnp("kanp.adminnetworkpolicy.allow-monitoring", "kube-admin", 100, """
                                namespaceSelector: label == 'value' && label2 == 'value2'
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Ingress]
                                ingress:
                                - action: Allow
                                  protocol: TCP
                                  source: {namespaceSelector: k == 'v' && k2 == 'v2'}
                                  destination: {ports: [80]}
                                  metadata: {annotations: {name: The first ingress rule}}
                                """)),
                Arguments.of("pods subject; Pass and Deny; no ports means no protocol; pods peers get all() namespaces",
                        anp("pass-and-deny", """
                                priority: 600
                                subject:
                                  pods:
                                    podSelector: {matchLabels: {label2: value2}}
                                ingress:
                                - name: pass
                                  action: Pass
                                  from:
                                  - namespaces: {matchLabels: {k: v}}
                                  - pods:
                                      podSelector: {matchLabels: {k2: v2}}
                                egress:
                                - name: deny
                                  action: Deny
                                  to:
                                  - pods:
                                      namespaceSelector: {matchLabels: {k4: v4}}
                                      podSelector: {matchExpressions: [{key: toast, operator: DoesNotExist}]}
                                """),
                        gnp("kanp.adminnetworkpolicy.pass-and-deny", "kube-admin", 600, """
                                namespaceSelector: all()
                                selector: projectcalico.org/orchestrator == 'k8s' && label2 == 'value2'
                                types: [Ingress, Egress]
                                ingress:
                                - action: Pass
                                  source: {namespaceSelector: k == 'v'}
                                  destination: {}
                                  metadata: {annotations: {name: pass}}
                                - action: Pass
                                  source:
                                    selector: projectcalico.org/orchestrator == 'k8s' && k2 == 'v2'
                                    namespaceSelector: all()
                                  destination: {}
                                  metadata: {annotations: {name: pass}}
                                egress:
                                - action: Deny
                                  source: {}
                                  destination:
                                    selector: projectcalico.org/orchestrator == 'k8s' && ! has(toast)
                                    namespaceSelector: k4 == 'v4'
                                  metadata: {annotations: {name: deny}}
                                """)),
                Arguments.of("ports: named ports without protocol first, then one rule per protocol per peer; networks and nodes peers",
                        anp("ports", """
                                priority: 7
                                subject: {namespaces: {}}
                                egress:
                                - name: out
                                  action: Allow
                                  to:
                                  - networks: [10.10.10.7/24, "1.1.1.1/32"]
                                  - nodes: {matchLabels: {role: infra}}
                                  ports:
                                  - portNumber: {port: 81}
                                  - portNumber: {port: 80}
                                  - namedPort: dns
                                  - portRange: {protocol: UDP, start: 20, end: 30}
                                """),
                        gnp("kanp.adminnetworkpolicy.ports", "kube-admin", 7, """
                                namespaceSelector: all()
                                selector: projectcalico.org/orchestrator == 'k8s'
                                types: [Egress]
                                egress:
                                - action: Allow
                                  source: {}
                                  destination: {nets: [10.10.10.0/24, 1.1.1.1/32], ports: [dns]}
                                  metadata: {annotations: {name: out}}
                                - action: Allow
                                  source: {}
                                  destination: {selector: "!has(projectcalico.org/orchestrator) && role == 'infra'", ports: [dns]}
                                  metadata: {annotations: {name: out}}
                                - action: Allow
                                  protocol: TCP
                                  source: {}
                                  destination: {nets: [10.10.10.0/24, 1.1.1.1/32], ports: ["80:81"]}
                                  metadata: {annotations: {name: out}}
                                - action: Allow
                                  protocol: TCP
                                  source: {}
                                  destination: {selector: "!has(projectcalico.org/orchestrator) && role == 'infra'", ports: ["80:81"]}
                                  metadata: {annotations: {name: out}}
                                - action: Allow
                                  protocol: UDP
                                  source: {}
                                  destination: {nets: [10.10.10.0/24, 1.1.1.1/32], ports: ["20:30"]}
                                  metadata: {annotations: {name: out}}
                                - action: Allow
                                  protocol: UDP
                                  source: {}
                                  destination: {selector: "!has(projectcalico.org/orchestrator) && role == 'infra'", ports: ["20:30"]}
                                  metadata: {annotations: {name: out}}
                                """)),
                Arguments.of("no rules: no types",
                        anp("empty", """
                                priority: 0
                                subject: {pods: {podSelector: {}}}
                                """),
                        gnp("kanp.adminnetworkpolicy.empty", "kube-admin", 0, """
                                namespaceSelector: all()
                                selector: projectcalico.org/orchestrator == 'k8s'
                                """)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void convertsAsCalicoDoes(String rule, String kubernetesYaml, String expectedCalicoYaml) {
        Conversion<GlobalNetworkPolicy> result = converter.adminNetworkPolicy(
                objects.parse(kubernetesYaml, KubeAdminNetworkPolicy.class));
        assertThat(result.droppedRules()).isEmpty();
        assertThat(result.value()).isEqualTo(codec.parse(expectedCalicoYaml));
        assertThat(codec.parse(codec.toYaml(result.value()))).isEqualTo(result.value());
    }

    @Test
    void theBaselinePolicyGoesAfterTheDefaultTierAndRefusesPass() {
        KubeBaselineAdminNetworkPolicy banp = objects.parse("""
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: BaselineAdminNetworkPolicy
                metadata: {name: default}
                spec:
                  subject: {namespaces: {matchLabels: {tenant: a}}}
                  ingress:
                  - {name: deny-all, action: Deny, from: [{namespaces: {}}]}
                  - {name: pass, action: Pass, from: [{namespaces: {}}]}
                  - {name: allow, action: Allow, from: [{pods: {namespaceSelector: {}, podSelector: {}}}]}
                """, KubeBaselineAdminNetworkPolicy.class);
        Conversion<GlobalNetworkPolicy> result = converter.baselineAdminNetworkPolicy(banp);
        GlobalNetworkPolicy p = result.value();
        assertThat(p.metadata().name()).isEqualTo("kbanp.baselineadminnetworkpolicy.default");
        assertThat(p.spec().tier()).isEqualTo("kube-baseline");
        assertThat(p.spec().namespaceSelector()).isEqualTo("tenant == 'a'");
        // Pass is not a baseline action: the rule is reported and, as a Pass, replaced by a bare Deny.
        assertThat(p.spec().ingress()).extracting(Rule::action).containsExactly(Action.Deny, Action.Deny, Action.Allow);
        assertThat(p.spec().ingress().get(1)).isEqualTo(Rule.deny());
        assertThat(result.droppedRules()).containsExactly(new FieldError("spec.ingress[1].action",
                "\"Pass\" is not supported: must be one of [Allow, Deny]"));
    }

    @Test
    void aBrokenDenyOrPassRuleFailsClosedAndABrokenAllowIsDropped() {
        KubeAdminNetworkPolicy anp = objects.parse(anp("broken", """
                priority: 300
                subject: {namespaces: {}}
                ingress:
                - {name: log, action: Log, from: [{namespaces: {}}]}
                - {name: bad-range, action: Allow, from: [{namespaces: {}}], ports: [{portRange: {start: 1000, end: 10}}]}
                - {name: ok, action: Allow, from: [{namespaces: {}}], ports: [{portNumber: {port: 80}}]}
                egress:
                - {name: bad-cidr, action: Deny, to: [{networks: [1.1.1.1/66]}]}
                - {name: empty-peer, action: Pass, to: [{}]}
                - {name: nodes-in, action: Allow, to: [{namespaces: {}, networks: [10.0.0.0/8]}]}
                """), KubeAdminNetworkPolicy.class);
        Conversion<GlobalNetworkPolicy> result = converter.adminNetworkPolicy(anp);
        assertThat(result.value().spec().ingress()).hasSize(1);
        assertThat(result.value().spec().ingress().get(0).metadata().annotations()).containsEntry("name", "ok");
        assertThat(result.value().spec().egress()).containsExactly(Rule.deny(), Rule.deny());
        assertThat(result.droppedRules()).extracting(FieldError::field).containsExactly(
                "spec.ingress[0].action", "spec.ingress[1].ports[0].portRange.end", "spec.egress[0].to[0].networks[0]",
                "spec.egress[1].to[0]", "spec.egress[2].to[0]");
        assertThat(result.droppedRules().get(0).reason()).isEqualTo("\"Log\" is not supported: must be one of [Allow, Deny, Pass]");
        assertThat(result.droppedRules().get(1).reason()).isEqualTo("10 is below start 1000");
        assertThat(result.droppedRules().get(3).reason()).isEqualTo("none of namespaces, pods, nodes or networks is set");
    }

    @Test
    void ingressPeersCannotBeNodesOrNetworks() {
        KubeAdminNetworkPolicy anp = objects.parse(anp("in", """
                priority: 1
                subject: {namespaces: {}}
                ingress:
                - {name: n, action: Allow, from: [{networks: [10.0.0.0/8]}]}
                """), KubeAdminNetworkPolicy.class);
        assertThat(converter.adminNetworkPolicy(anp).droppedRules())
                .containsExactly(new FieldError("spec.ingress[0].from[0].networks", "is only allowed in egress rules"));
    }

    @Test
    void refusesAPolicyWithoutPriorityOrSubjectNamingTheField() {
        assertThatThrownBy(() -> converter.adminNetworkPolicy(objects.parse(anp("p", "subject: {namespaces: {}}"),
                KubeAdminNetworkPolicy.class)))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("AdminNetworkPolicy p").hasMessageContaining("spec.priority: is required (0-1000)");
        assertThatThrownBy(() -> converter.adminNetworkPolicy(objects.parse(anp("p", "priority: 1001\nsubject: {namespaces: {}}"),
                KubeAdminNetworkPolicy.class)))
                .hasMessageContaining("spec.priority: 1001 is outside 0-1000");
        assertThatThrownBy(() -> converter.adminNetworkPolicy(objects.parse(anp("p", "priority: 1"),
                KubeAdminNetworkPolicy.class)))
                .hasMessageContaining("spec.subject: exactly one of namespaces or pods must be set");
        assertThatThrownBy(() -> converter.adminNetworkPolicy(objects.parse(anp("p",
                "priority: 1\nsubject: {namespaces: {matchExpressions: [{operator: In, values: [a]}]}}"),
                KubeAdminNetworkPolicy.class)))
                .hasMessageContaining("spec.subject.namespaces.matchExpressions[0].key: is required");
    }

    @Test
    void namesRoundTrip() {
        assertThat(AdminNetworkPolicyConverter.kubernetesName("kanp.adminnetworkpolicy.a")).contains("a");
        assertThat(AdminNetworkPolicyConverter.kubernetesName("knp.default.a")).isEmpty();
        assertThat(BaselineAdminNetworkPolicyConverter.kubernetesName("kbanp.baselineadminnetworkpolicy.default"))
                .contains("default");
    }
}
