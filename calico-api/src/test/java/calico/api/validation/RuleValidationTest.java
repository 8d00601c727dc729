package calico.api.validation;

import static calico.api.validation.ValidationCases.invalid;
import static calico.api.validation.ValidationCases.valid;
import static calico.api.validation.Yaml.egress;
import static calico.api.validation.Yaml.ingress;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Table of rule cases, each a global policy with one rule; selectors used are only all() and global(). */
class RuleValidationTest {

    private static final String R = "spec.ingress[0].";
    private static final String E = "spec.egress[0].";

    static Stream<Arguments> cases() {
        return Stream.of(
                // action and ipVersion
                row("plain allow", valid(ingress("{action: Allow}"))),
                row("every action", valid(ingress("{action: Log}, {action: Pass}, {action: Deny}"))),
                row("missing action", invalid(ingress("{protocol: TCP}"), R + "action | is required")),
                row("ipVersion 5", invalid(ingress("{action: Allow, ipVersion: 5}"), R + "ipVersion | must be 4 or 6")),
                // protocol
                row("unknown protocol name", invalid(ingress("{action: Allow, protocol: TCPX}"),
                        R + "protocol | unknown protocol \"TCPX\"")),
                row("protocol names are case-sensitive", invalid(ingress("{action: Allow, protocol: tcp}"),
                        R + "protocol | unknown protocol")),
                row("protocol 0", invalid(ingress("{action: Allow, protocol: 0}"), R + "protocol | between 1 and 255")),
                row("protocol 256", invalid(ingress("{action: Allow, protocol: 256}"), R + "protocol | between 1 and 255")),
                row("notProtocol checked too", invalid(ingress("{action: Allow, notProtocol: Foo}"),
                        R + "notProtocol | unknown protocol")),
                row("every protocol name", valid(ingress("{action: Allow, protocol: UDPLite}, {action: Allow, protocol: SCTP},"
                        + " {action: Allow, protocol: ICMPv6}, {action: Allow, protocol: 47}"))),
                // ports
                row("ports by number, range and name with UDP", valid(ingress(
                        "{action: Allow, protocol: UDP, destination: {ports: [53, \"1000:2000\", dns]}}"))),
                row("SCTP by number supports ports", valid(ingress("{action: Allow, protocol: 132, destination: {ports: [9]}}"))),
                row("named port in source", valid(ingress("{action: Allow, protocol: TCP, source: {ports: [http]}}"))),
                row("ports without protocol", invalid(ingress("{action: Allow, destination: {ports: [80]}}"),
                        R + "destination.ports | must set protocol to TCP, UDP or SCTP")),
                row("ports with ICMP", invalid(ingress("{action: Allow, protocol: ICMP, source: {ports: [80]}}"),
                        R + "source.ports | must set protocol")),
                row("notPorts without protocol", invalid(ingress("{action: Allow, source: {notPorts: [80]}}"),
                        R + "source.notPorts | must set protocol")),
                row("port 0", invalid(ingress("{action: Allow, protocol: TCP, destination: {ports: [0]}}"),
                        R + "destination.ports[0] | between 1 and 65535")),
                row("port 70000", invalid(ingress("{action: Allow, protocol: TCP, destination: {ports: [80, 70000]}}"),
                        R + "destination.ports[1] | between 1 and 65535")),
                row("reversed range", invalid(ingress("{action: Allow, protocol: TCP, destination: {notPorts: [1, \"80:70\"]}}"),
                        R + "destination.notPorts[1] | reversed")),
                row("upper-case port name", invalid(ingress("{action: Allow, protocol: TCP, destination: {ports: [HTTP]}}"),
                        R + "destination.ports[0] | lower case")),
                row("port name too long", invalid(ingress("{action: Allow, protocol: TCP, destination: {ports: [abcdefghijklmnop]}}"),
                        R + "destination.ports[0] | at most 15")),
                row("port name with double dash", invalid(ingress("{action: Allow, protocol: TCP, destination: {ports: [a--b]}}"),
                        R + "destination.ports[0] | consecutive")),
                // ICMP
                row("ICMP type and code", valid(ingress("{action: Allow, protocol: ICMP, icmp: {type: 8, code: 0}}"))),
                row("ICMP type 255", invalid(ingress("{action: Allow, protocol: ICMP, icmp: {type: 255}}"),
                        R + "icmp.type | between 0 and 254")),
                row("ICMP code 256", invalid(ingress("{action: Allow, protocol: ICMP, icmp: {type: 3, code: 256}}"),
                        R + "icmp.code | between 0 and 255")),
                row("ICMP code without type", invalid(ingress("{action: Allow, protocol: ICMP, icmp: {code: 1}}"),
                        R + "icmp.code | requires an ICMP type")),
                row("icmp without protocol", invalid(ingress("{action: Allow, icmp: {type: 8}}"),
                        R + "icmp | must set protocol to ICMP or ICMPv6")),
                row("notICMP with TCP", invalid(ingress("{action: Allow, protocol: TCP, notICMP: {type: 8}}"),
                        R + "notICMP | must set protocol to ICMP")),
                row("ICMPv6 with ipVersion 4", invalid(ingress("{action: Allow, protocol: ICMPv6, ipVersion: 4}"),
                        R + "ipVersion | must be 6 with protocol ICMPv6")),
                row("ICMP with ipVersion 6", invalid(ingress("{action: Allow, protocol: ICMP, ipVersion: 6}"),
                        R + "ipVersion | must be 4 with protocol ICMP")),
                row("notProtocol ICMP with ipVersion 6", invalid(ingress("{action: Allow, notProtocol: ICMP, ipVersion: 6}"),
                        R + "ipVersion | must be 4")),
                // nets
                row("IPv4 and IPv6 nets in separate rules", valid(ingress(
                        "{action: Allow, source: {nets: [10.0.0.0/8]}}, {action: Allow, ipVersion: 6,"
                                + " destination: {notNets: [\"fd00::/64\"]}}"))),
                row("invalid CIDR", invalid(ingress("{action: Allow, source: {nets: [10.0.0.0/8, 10.0.0.300/8]}}"),
                        R + "source.nets[1] | invalid CIDR")),
                row("bare address is not a rule CIDR", invalid(ingress("{action: Allow, source: {nets: [10.0.0.1]}}"),
                        R + "source.nets[0] | invalid CIDR")),
                row("host bits set", invalid(ingress("{action: Allow, destination: {nets: [10.1.2.3/16]}}"),
                        R + "destination.nets[0] | use 10.1.0.0/16")),
                row("IPv6 host bits set", invalid(ingress("{action: Allow, destination: {nets: [\"fd00::1/64\"]}}"),
                        R + "destination.nets[0] | use fd00::/64")),
                row("mixed IP versions", invalid(ingress(
                        "{action: Allow, source: {nets: [10.0.0.0/8]}, destination: {notNets: [\"::/0\"]}}"),
                        R + "destination.notNets[0] | conflicts with IPv4 set by source.nets[0]")),
                row("ipVersion against nets", invalid(ingress("{action: Allow, ipVersion: 4, source: {notNets: [\"fd00::/8\"]}}"),
                        R + "source.notNets[0] | conflicts with IPv4 set by ipVersion")),
                // selectors
                row("global() in a selector", invalid(ingress("{action: Allow, source: {selector: global()}}"),
                        R + "source.selector | can only be used in a rule's namespaceSelector")),
                row("global() as namespaceSelector", valid(ingress("{action: Allow, source: {namespaceSelector: global()}}"))),
                row("global() combined", invalid(ingress("{action: Allow, source: {namespaceSelector: global() || all()}}"),
                        R + "source.namespaceSelector | cannot be combined")),
                row("serviceAccount name empty", invalid(ingress(
                        "{action: Allow, source: {serviceAccounts: {names: [a, \"\"]}}}"),
                        R + "source.serviceAccounts.names[1] | must not be empty")),
                // HTTP
                row("HTTP on an allow rule", valid(ingress(
                        "{action: Allow, protocol: TCP, http: {methods: [GET, PUT], paths: [{exact: /a}, {prefix: /b/}]}}"))),
                row("HTTP on a deny rule", invalid(ingress("{action: Deny, http: {methods: [GET]}}"),
                        R + "http | only valid for Allow rules")),
                row("HTTP with UDP", invalid(ingress("{action: Allow, protocol: UDP, http: {methods: [GET]}}"),
                        R + "protocol | must set protocol to TCP")),
                row("HTTP path with exact and prefix", invalid(ingress(
                        "{action: Allow, http: {paths: [{exact: /a, prefix: /a}]}}"), R + "http.paths[0] | not both")),
                row("HTTP path with neither", invalid(ingress("{action: Allow, http: {paths: [{}]}}"),
                        R + "http.paths[0] | exactly one of exact or prefix")),
                row("HTTP path without slash", invalid(ingress("{action: Allow, http: {paths: [{exact: a}]}}"),
                        R + "http.paths[0].exact | must start with '/'")),
                row("HTTP path with query", invalid(ingress("{action: Allow, http: {paths: [{prefix: \"/a?b\"}]}}"),
                        R + "http.paths[0].prefix | '?'")),
                row("duplicate HTTP method", invalid(ingress("{action: Allow, http: {methods: [GET, GET]}}"),
                        R + "http.methods[1] | duplicate method")),
                row("HTTP in an egress rule", invalid(egress("{action: Allow, http: {methods: [GET]}}"),
                        E + "http | not allowed in egress rules")),
                // services
                row("service as egress destination", valid(egress(
                        "{action: Allow, destination: {services: {name: kube-dns, namespace: kube-system}}}"))),
                row("service as ingress destination", invalid(ingress(
                        "{action: Allow, destination: {services: {name: a, namespace: b}}}"),
                        R + "destination.services | not allowed in an ingress rule's destination")),
                row("service as egress source", invalid(egress("{action: Allow, source: {services: {name: a, namespace: b}}}"),
                        E + "source.services | not allowed in an egress rule's source")),
                row("service without namespace in a global policy", invalid(egress(
                        "{action: Allow, destination: {services: {name: a}}}"),
                        E + "destination.services.namespace | is required in a global policy")),
                row("service without name", invalid(ingress("{action: Allow, source: {services: {namespace: b}}}"),
                        R + "source.services.name | is required")),
                row("service with selector and nets", invalid(ingress(
                        "{action: Allow, source: {selector: all(), nets: [10.0.0.0/8], services: {name: a, namespace: b}}}"),
                        R + "source.services | selector or notSelector", R + "source.services | nets or notNets")),
                row("service with ports", invalid(egress(
                        "{action: Allow, protocol: TCP, destination: {ports: [80], services: {name: a, namespace: b}}}"),
                        E + "destination.ports | cannot be combined with services")),
                // rule metadata
                row("rule annotation key", invalid(ingress("{action: Allow, metadata: {annotations: {\"bad key\": x}}}"),
                        R + "metadata.annotations[bad key] | key name part"))
        );
    }

    private static Arguments row(String name, ValidationCases c) {
        return Arguments.of(name, c);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void rule(String name, ValidationCases c) {
        c.check(Yaml.errors(c.yaml()));
    }
}
