package calico.api.validation;

import static calico.api.validation.ValidationCases.invalid;
import static calico.api.validation.ValidationCases.valid;
import static calico.api.validation.Yaml.gnp;
import static calico.api.validation.Yaml.np;
import static calico.api.validation.Yaml.resource;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Table of whole-resource cases: policies, tiers, network sets, profiles, workload endpoints. */
class ResourceValidationTest {

    private static final String WEP_META = "{name: node1-k8s-pod--a-eth0, namespace: ns}";
    private static final String WEP_IDS = "node: node1, orchestrator: k8s, pod: pod-a, endpoint: eth0";

    static Stream<Arguments> cases() {
        return Stream.of(
                // policy names and tiers (Calico v3.30 tier-prefix rule by default)
                row("un-prefixed name in the default tier", valid(gnp("{selector: all()}"))),
                row("default. prefix in the default tier", valid(resource("GlobalNetworkPolicy", "{name: default.p}", "{}"))),
                row("prefixed name in its tier", valid(resource("GlobalNetworkPolicy", "{name: t1.p}", "{tier: t1}"))),
                row("un-prefixed name in another tier", invalid(resource("GlobalNetworkPolicy", "{name: p}", "{tier: t1}"),
                        "metadata.name | must be named t1.p")),
                row("prefix of another tier", invalid(resource("NetworkPolicy", "{name: t2.p, namespace: ns}", "{tier: t1}"),
                        "metadata.name | does not match the policy's tier t1")),
                row("two dots in a global policy name", invalid(resource("GlobalNetworkPolicy", "{name: a.b.c}", "{}"),
                        "metadata.name | at most one '.'")),
                row("upper case policy name", invalid(resource("GlobalNetworkPolicy", "{name: Allow}", "{}"),
                        "metadata.name | lower case", "metadata.name | lower case")),
                row("knp.default. is reserved", invalid(resource("NetworkPolicy", "{name: knp.default.x, namespace: ns}", "{}"),
                        "metadata.name | reserved")),
                row("ossg.default. names are accepted", valid(resource("NetworkPolicy",
                        "{name: ossg.default.sg-1.x, namespace: ns}", "{}"))),
                row("invalid tier name", invalid(resource("GlobalNetworkPolicy", "{name: Bad_Tier.p}", "{tier: Bad_Tier}"),
                        "metadata.name | lower case", "metadata.name | DNS-1123 label", "spec.tier | lower case")),
                row("namespaced policy needs a namespace", invalid(resource("NetworkPolicy", "{name: p}", "{}"),
                        "metadata.namespace | is required")),
                row("global policy must not have a namespace", invalid(resource("GlobalNetworkPolicy",
                        "{name: p, namespace: ns}", "{}"), "metadata.namespace | cluster-scoped")),
                row("label key and value", invalid(resource("GlobalNetworkPolicy",
                        "{name: p, labels: {-bad: x, good: \"not ok\", ok/x: y}}", "{}"),
                        "metadata.labels[-bad] | key name part", "metadata.labels[good] | value must consist")),
                row("label key prefix", invalid(resource("GlobalNetworkPolicy", "{name: p, labels: {Bad.Prefix/x: y}}", "{}"),
                        "metadata.labels[Bad.Prefix/x] | key prefix")),
                // policy spec
                row("duplicate type", invalid(gnp("{types: [Ingress, Egress, Ingress]}"),
                        "spec.types[2] | Ingress is listed more than once")),
                row("types that ignore some rules are accepted, as in Calico", valid(gnp(
                        "{types: [Egress], ingress: [{action: Allow}], egress: [{action: Deny}]}"))),
                row("doNotTrack with applyOnForward", valid(gnp("{doNotTrack: true, applyOnForward: true}"))),
                row("doNotTrack and preDNAT", invalid(gnp("{doNotTrack: true, preDNAT: true, applyOnForward: true}"),
                        "spec.preDNAT | cannot both be true")),
                row("preDNAT without applyOnForward", invalid(gnp("{preDNAT: true, ingress: [{action: Allow}]}"),
                        "spec.applyOnForward | must be true")),
                row("preDNAT with egress", invalid(gnp("{preDNAT: true, applyOnForward: true, egress: [{action: Deny}]}"),
                        "spec.egress | cannot have egress rules", "spec.types | cannot have type Egress")),
                row("global() as a policy selector", invalid(gnp("{selector: global(), namespaceSelector: global()}"),
                        "spec.selector | global()", "spec.namespaceSelector | global()")),
                row("performance hints", invalid(gnp("{performanceHints: [AssumeNeededOnEveryNode, Fast, AssumeNeededOnEveryNode]}"),
                        "spec.performanceHints[1] | unknown performance hint", "spec.performanceHints[2] | duplicate")),
                row("namespaced policy with service without namespace", valid(np(
                        "{egress: [{action: Allow, destination: {services: {name: a}}}]}"))),
                // tiers
                row("custom tier", valid(resource("Tier", "{name: security}", "{order: 100, defaultAction: Pass}"))),
                row("default tier as Calico creates it", valid(resource("Tier", "{name: default}", "{order: 1000000}"))),
                row("default tier order is fixed", invalid(resource("Tier", "{name: default}", "{order: 100}"),
                        "spec.order | order must be 1000000")),
                row("default tier action is fixed", invalid(resource("Tier", "{name: default}", "{defaultAction: Pass}"),
                        "spec.defaultAction | must be Deny")),
                row("kube-admin tier", invalid(resource("Tier", "{name: kube-admin}", "{order: 1000, defaultAction: Deny}"),
                        "spec.defaultAction | must be Pass")),
                row("Allow is not a tier default action", invalid(resource("Tier", "{name: t}", "{defaultAction: Allow}"),
                        "spec.defaultAction | must be Deny or Pass")),
                row("tier names have no dots", invalid(resource("Tier", "{name: a.b}", "{}"),
                        "metadata.name | cannot contain '.'")),
                // network sets
                row("network set nets", valid(resource("GlobalNetworkSet", "{name: s}",
                        "{nets: [10.0.0.0/8, 192.168.1.1, 10.1.2.3/16, \"fd00::/48\"]}"))),
                row("invalid network set net", invalid(resource("GlobalNetworkSet", "{name: s}", "{nets: [10.0.0.0/8, 300.0.0.0/8]}"),
                        "spec.nets[1] | invalid CIDR or IP address")),
                row("reserved namespace label", invalid(resource("NetworkSet",
                        "{name: s, namespace: ns, labels: {projectcalico.org/namespace: x}}", "{}"),
                        "metadata.labels[projectcalico.org/namespace] | reserved")),
                row("network set needs a namespace", invalid(resource("NetworkSet", "{name: s}", "{nets: [\"::1\"]}"),
                        "metadata.namespace | is required")),
                // profiles
                row("profile rules and labels", invalid(resource("Profile", "{name: kns.default}",
                        "{ingress: [{action: Allow, destination: {ports: [80]}}], labelsToApply: {\"a b\": c}}"),
                        "spec.ingress[0].destination.ports | must set protocol", "spec.labelsToApply[a b] | key name part")),
                // workload endpoints
                row("k8s workload endpoint", valid(resource("WorkloadEndpoint", WEP_META, "{" + WEP_IDS
                        + ", ipNetworks: [10.0.0.1/32, \"fd00::1\"], ipv4Gateway: 169.254.1.1, interfaceName: cali12345,"
                        + " mac: \"ee:ee:ee:ee:ee:ee\", profiles: [kns.ns], ports: [{name: http, protocol: TCP, port: 80}],"
                        + " ipNATs: [{internalIP: 10.0.0.1, externalIP: 172.16.0.1}]}"))),
                row("endpoint name must match its identifiers", invalid(resource("WorkloadEndpoint",
                        "{name: node1-k8s-pod-a-eth0, namespace: ns}", "{" + WEP_IDS + "}"),
                        "metadata.name | expected node1-k8s-pod--a-eth0")),
                row("endpoint networks are single addresses", invalid(resource("WorkloadEndpoint", WEP_META,
                        "{" + WEP_IDS + ", ipNetworks: [10.0.0.0/24, x]}"),
                        "spec.ipNetworks[0] | single address", "spec.ipNetworks[1] | invalid CIDR")),
                row("endpoint gateway and NAT", invalid(resource("WorkloadEndpoint", WEP_META,
                        "{" + WEP_IDS + ", ipNetworks: [10.0.0.1/32], ipv4Gateway: \"fe80::1\","
                                + " ipNATs: [{internalIP: 10.0.0.2, externalIP: \"fd00::2\"}]}"),
                        "spec.ipv4Gateway | must be an IPv4 address", "spec.ipNATs[0].externalIP | same IP version",
                        "spec.ipNATs[0].internalIP | one of the endpoint's ipNetworks")),
                row("endpoint ports", invalid(resource("WorkloadEndpoint", WEP_META,
                        "{" + WEP_IDS + ", ports: [{protocol: ICMP, port: 0}, {protocol: UDP, port: 53, hostPort: 5353}]}"),
                        "spec.ports[0].name | is required unless hostPort", "spec.ports[0].protocol | TCP, UDP or SCTP",
                        "spec.ports[0].port | between 1 and 65535")),
                row("endpoint mac and interface", invalid(resource("WorkloadEndpoint", WEP_META,
                        "{" + WEP_IDS + ", mac: \"ee:ee\", interfaceName: a-very-long-interface-name}"),
                        "spec.interfaceName | 1-15 characters", "spec.mac | invalid MAC")),
                row("endpoint without node", invalid(resource("WorkloadEndpoint", "{namespace: ns}",
                        "{orchestrator: k8s, pod: p, endpoint: eth0}"),
                        "metadata.name | is required", "spec.node | is required", "metadata.name | set node"))
        );
    }

    private static Arguments row(String name, ValidationCases c) {
        return Arguments.of(name, c);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void validates(String name, ValidationCases c) {
        c.check(Yaml.errors(c.yaml()));
    }
}
