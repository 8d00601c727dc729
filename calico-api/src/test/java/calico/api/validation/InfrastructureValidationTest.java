package calico.api.validation;

import static calico.api.validation.ValidationCases.invalid;
import static calico.api.validation.ValidationCases.valid;
import static calico.api.validation.Yaml.resource;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Table of IPAM, endpoint, BGP, Felix, node and staged-policy cases (selectors only all()). */
class InfrastructureValidationTest {

    private static String pool(String spec) {
        return resource("IPPool", "{name: pool}", spec);
    }

    private static String peer(String spec) {
        return resource("BGPPeer", "{name: peer}", spec);
    }

    private static String bgp(String spec) {
        return resource("BGPConfiguration", "{name: default}", spec);
    }

    private static String filter(String spec) {
        return resource("BGPFilter", "{name: f}", spec);
    }

    private static String felix(String spec) {
        return resource("FelixConfiguration", "{name: default}", spec);
    }

    private static String kcc(String name, String spec) {
        return resource("KubeControllersConfiguration", "{name: " + name + "}", spec);
    }

    private static String cns(String spec) {
        return resource("CalicoNodeStatus", "{name: node-1-status}", spec);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                // CalicoNodeStatus
                row("node status", valid(cns("{node: node-1, classes: [Agent, BGP, Routes], updatePeriodSeconds: 10}"))),
                row("node status period 0 (stop)", valid(cns("{node: node-1, classes: [BGP], updatePeriodSeconds: 0}"))),
                row("node status needs a spec", invalid(cns(null), "spec | is required")),
                row("node status needs a node", invalid(cns("{classes: [BGP], updatePeriodSeconds: 5}"),
                        "spec.node | is required")),
                row("node status node is a name", invalid(cns("{node: Node_1, classes: [BGP], updatePeriodSeconds: 5}"),
                        "spec.node | lower case alphanumeric")),
                row("node status needs classes", invalid(cns("{node: n, updatePeriodSeconds: 5}"),
                        "spec.classes | is required")),
                row("node status unknown class", invalid(cns("{node: n, classes: [BGP, Peers], updatePeriodSeconds: 5}"),
                        "spec.classes[1] | \"Peers\" is not one of Agent, BGP, Routes")),
                row("node status class twice", invalid(cns("{node: n, classes: [BGP, BGP], updatePeriodSeconds: 5}"),
                        "spec.classes[1] | listed twice")),
                row("node status needs a period", invalid(cns("{node: n, classes: [BGP]}"),
                        "spec.updatePeriodSeconds | is required")),
                row("node status period at most a day", invalid(cns("{node: n, classes: [BGP], updatePeriodSeconds: 86401}"),
                        "spec.updatePeriodSeconds | between 0 and 86400")),
                row("node status period not negative", invalid(cns("{node: n, classes: [BGP], updatePeriodSeconds: -1}"),
                        "spec.updatePeriodSeconds | between 0 and 86400")),
                // IP pools
                row("IPv4 pool", valid(pool("{cidr: 10.244.0.0/16, ipipMode: CrossSubnet, natOutgoing: true}"))),
                row("IPv6 pool with VXLAN", valid(pool("{cidr: \"fd00:10:244::/64\", vxlanMode: Always, blockSize: 122}"))),
                row("pool needs a CIDR", invalid(pool("{natOutgoing: true}"), "spec.cidr | is required")),
                row("pool CIDR invalid", invalid(pool("{cidr: 10.0.0.0}"), "spec.cidr | invalid CIDR")),
                row("pool CIDR host bits", invalid(pool("{cidr: 10.0.0.1/16}"), "spec.cidr | use 10.0.0.0/16")),
                row("IPv4 block size", invalid(pool("{cidr: 10.0.0.0/16, blockSize: 19}"),
                        "spec.blockSize | between 20 and 32")),
                row("IPv6 block size", invalid(pool("{cidr: \"fd00::/48\", blockSize: 26}"),
                        "spec.blockSize | between 116 and 128")),
                row("pool smaller than a block", invalid(pool("{cidr: 10.0.0.0/28}"), "spec.cidr | smaller than one block")),
                row("disabled pool may be smaller than a block", valid(pool("{cidr: 10.0.0.0/28, disabled: true}"))),
                row("IPIP and VXLAN", invalid(pool("{cidr: 10.0.0.0/16, ipipMode: Always, vxlanMode: CrossSubnet}"),
                        "spec.vxlanMode | both VXLAN and IPIP")),
                row("IPIP on IPv6", invalid(pool("{cidr: \"fd00::/48\", ipipMode: Always}"),
                        "spec.ipipMode | not supported on an IPv6")),
                row("link-local pool", invalid(pool("{cidr: 169.254.0.0/16}"), "spec.cidr | link-local")),
                row("IPv6 link-local pool", invalid(pool("{cidr: \"fe80::/64\"}"), "spec.cidr | link-local")),
                row("LoadBalancer pool", invalid(pool(
                        "{cidr: 10.0.0.0/16, allowedUses: [LoadBalancer, Workload], vxlanMode: Always, disableBGPExport: true}"),
                        "spec.allowedUses[1] | cannot be combined with Workload", "spec.allowedUses | cannot enable IPIP or VXLAN",
                        "spec.disableBGPExport | exported")),
                row("duplicate use", invalid(pool("{cidr: 10.0.0.0/16, allowedUses: [Workload, Workload]}"),
                        "spec.allowedUses[1] | more than once")),
                // IP reservations and host endpoints
                row("reservation", valid(resource("IPReservation", "{name: r}", "{reservedCIDRs: [10.0.0.0/24, 10.1.0.1]}"))),
                row("bad reservation", invalid(resource("IPReservation", "{name: r}", "{reservedCIDRs: [10.0.0.0/24, nope]}"),
                        "spec.reservedCIDRs[1] | invalid CIDR or IP")),
                row("host endpoint by IP", valid(resource("HostEndpoint", "{name: h}", "{node: n1, expectedIPs: [10.0.0.5]}"))),
                row("host endpoint without node or interface", invalid(resource("HostEndpoint", "{name: h}", "{profiles: [p]}"),
                        "spec.node | is required", "spec.interfaceName | set interfaceName, expectedIPs or both")),
                row("host endpoint fields", invalid(resource("HostEndpoint", "{name: h}",
                        "{node: n1, interfaceName: \"eth0 \", expectedIPs: [10.0.0.256], ports: [{name: ssh, protocol: ICMP, port: 22}]}"),
                        "spec.interfaceName | 1-15 characters", "spec.expectedIPs[0] | invalid IP",
                        "spec.ports[0].protocol | TCP, UDP or SCTP")),
                // KubeControllersConfiguration
                row("kube-controllers default", valid(kcc("default", "{logSeverityScreen: Debug, etcdV3CompactionPeriod: 10m, "
                        + "controllers: {node: {leakGracePeriod: 15m, hostEndpoint: {autoCreate: Enabled, templates: "
                        + "[{generateName: int, interfaceCIDRs: [10.0.0.0/8], nodeSelector: has(a)}]}}, "
                        + "policy: {reconcilerPeriod: 1m}}}"))),
                row("kube-controllers other name", invalid(kcc("mine", "{}"), "metadata.name | must be \"default\"")),
                row("kube-controllers fields", invalid(kcc("default", "{logSeverityScreen: Loud, prometheusMetricsPort: 70000, "
                        + "controllers: {node: {leakGracePeriod: 15 minutes, reconcilerPeriod: -1m, hostEndpoint: {templates: "
                        + "[{interfaceCIDRs: [nope], nodeSelector: \"has(\"}]}}, namespace: {reconcilerPeriod: x}}}"),
                        "spec.logSeverityScreen | not one of", "spec.prometheusMetricsPort | not between 0 and 65535",
                        "spec.controllers.node.reconcilerPeriod | must not be negative",
                        "spec.controllers.node.leakGracePeriod | invalid duration",
                        "spec.controllers.node.hostEndpoint.templates[0].interfaceCIDRs[0] | invalid CIDR",
                        "spec.controllers.node.hostEndpoint.templates[0].nodeSelector | (",
                        "spec.controllers.namespace.reconcilerPeriod | invalid duration")),
                row("kube-controllers templates", invalid(kcc("default", "{controllers: {node: {hostEndpoint: {templates: "
                        + "[{generateName: Big_Name, interfacePattern: \"eth[\", labels: {\"a b\": c}}, "
                        + "{generateName: Big_Name, nodeSelector: all()}]}}}}"),
                        "spec.controllers.node.hostEndpoint.templates[0].generateName | lower case alphanumeric",
                        "spec.controllers.node.hostEndpoint.templates[0].interfacePattern | not a regular expression",
                        "spec.controllers.node.hostEndpoint.templates[0].labels[a b] | key name part",
                        "spec.controllers.node.hostEndpoint.templates[1].generateName | lower case alphanumeric",
                        "spec.controllers.node.hostEndpoint.templates[1].generateName | \"Big_Name\" is used by an earlier",
                        "spec.controllers.node.hostEndpoint.templates[1] | at least one of interfaceCIDRs and interfacePattern")),
                // BGP peers
                row("peer by IP and port", valid(peer("{node: n1, peerIP: \"192.0.2.1:1790\", asNumber: 64512}"))),
                row("peer by IPv6 and port", valid(peer("{peerIP: \"[2001:db8::1]:179\", asNumber: \"1.10\"}"))),
                row("node and nodeSelector", invalid(peer("{node: n1, nodeSelector: all(), peerIP: 192.0.2.1, asNumber: 1}"),
                        "spec.node | must be empty when nodeSelector is set")),
                row("peerIP and peerSelector", invalid(peer("{peerIP: 192.0.2.1, peerSelector: all()}"),
                        "spec.peerIP | must be empty when peerSelector is set")),
                row("AS number with peerSelector", invalid(peer("{peerSelector: all(), asNumber: 64512}"),
                        "spec.asNumber | must be empty when peerSelector")),
                row("AS number 0", invalid(peer("{peerIP: 192.0.2.1, asNumber: 0}"), "spec.asNumber | between 1 and 4294967295")),
                row("peer port 0", invalid(peer("{peerIP: \"192.0.2.1:0\", asNumber: 1}"), "spec.peerIP | between 1 and 65535")),
                row("peer host name", invalid(peer("{peerIP: router.example, asNumber: 1}"), "spec.peerIP | invalid peer address")),
                row("reachableBy family", invalid(peer("{peerIP: 192.0.2.1, asNumber: 1, reachableBy: \"fd00::1\"}"),
                        "spec.reachableBy | same IP version")),
                row("local workloads need an AS number", invalid(peer("{localWorkloadSelector: all()}"),
                        "spec.asNumber | is required when localWorkloadSelector")),
                row("peer restart time", invalid(peer("{peerIP: 192.0.2.1, asNumber: 1, maxRestartTime: 2 minutes}"),
                        "spec.maxRestartTime | invalid duration")),
                // BGP configuration
                row("mesh configuration", valid(bgp("{nodeToNodeMeshEnabled: true, asNumber: 64512, listenPort: 179,"
                        + " logSeverityScreen: Info, serviceClusterIPs: [{cidr: 10.96.0.0/12}]}"))),
                row("listen port", invalid(bgp("{listenPort: 0}"), "spec.listenPort | between 1 and 65535")),
                row("log severity", invalid(bgp("{logSeverityScreen: info}"), "spec.logSeverityScreen | one of")),
                row("communities", valid(bgp("{communities: [{name: c1, value: \"65001:100\"}],"
                        + " prefixAdvertisements: [{cidr: 10.0.0.0/8, communities: [c1, \"4200000000:1:2\"]}]}"))),
                row("bad communities", invalid(bgp("{communities: [{name: c1, value: \"70000:1\"}],"
                        + " prefixAdvertisements: [{cidr: 10.0.0.0/33, communities: [c2, \"1:2:4294967296\"]}]}"),
                        "spec.communities[0].value | at most 65535", "spec.prefixAdvertisements[0].cidr | invalid CIDR",
                        "spec.prefixAdvertisements[0].communities[0] | neither a community",
                        "spec.prefixAdvertisements[0].communities[1] | at most 4294967295")),
                row("unused communities", invalid(bgp("{communities: [{name: c1, value: \"1:1\"}]}"),
                        "spec.communities | no prefixAdvertisements")),
                row("mesh options without mesh", invalid(bgp(
                        "{nodeToNodeMeshEnabled: false, nodeMeshMaxRestartTime: 120s, ignoredInterfaces: [\"*\"]}"),
                        "spec.nodeMeshMaxRestartTime | nodeToNodeMeshEnabled is false", "spec.ignoredInterfaces[0] | not just '*'")),
                // BGP filters
                row("filter rules", valid(filter("{exportV4: [{action: Accept, matchOperator: In, cidr: 10.0.0.0/8,"
                        + " prefixLength: {min: 16, max: 24}}, {action: Reject}], importV6: [{action: Reject,"
                        + " matchOperator: NotEqual, cidr: \"fd00::/64\", prefixLength: {min: 65}}]}"))),
                row("filter CIDR family and operator", invalid(filter(
                        "{exportV4: [{action: Accept, cidr: \"fd00::/64\"}], importV6: [{action: Reject, matchOperator: Equal}]}"),
                        "spec.exportV4[0].cidr | must be an IPv4 CIDR", "spec.exportV4[0].matchOperator | is required when cidr",
                        "spec.importV6[0].matchOperator | requires cidr")),
                row("filter action and prefix length", invalid(filter(
                        "{importV4: [{matchOperator: In, cidr: 10.0.0.0/8, prefixLength: {min: 40, max: 33}}]}"),
                        "spec.importV4[0].action | is required", "spec.importV4[0].prefixLength.min | between 0 and 32",
                        "spec.importV4[0].prefixLength.max | between 0 and 32",
                        "spec.importV4[0].prefixLength | min must not exceed max")),
                row("filter operations", invalid(filter("{exportV4: [{action: Accept, operations: [{}, {addCommunity: {value: x}}]}]}"),
                        "spec.exportV4[0].operations[0] | exactly one", "spec.exportV4[0].operations[1].addCommunity.value | invalid community")),
                // Felix configuration
                row("Felix durations and modes", valid(felix("{iptablesRefreshInterval: 1m30s, routeRefreshInterval: 500ms,"
                        + " reportingInterval: \"0\", iptablesBackend: NFT, chainInsertMode: append, logSeverityScreen: Warning,"
                        + " defaultEndpointToHostAction: Return, bpfExternalServiceMode: DSR, healthPort: 9099,"
                        + " failsafeInboundHostPorts: [{protocol: TCP, port: 22}, {protocol: UDP, port: 68, net: 10.0.0.0/8}],"
                        + " vxlanMTU: 0, natPortRange: \"32768:65535\", kubeNodePortRanges: [\"30000:32767\"]}"))),
                row("Felix bad durations", invalid(felix("{iptablesRefreshInterval: \"90\", routeRefreshInterval: -1s,"
                        + " reportingTTL: 1d}"),
                        "spec.iptablesRefreshInterval | invalid duration", "spec.reportingTTL | invalid duration",
                        "spec.routeRefreshInterval | must not be negative")),
                row("Felix enums", invalid(felix("{iptablesBackend: nft, chainInsertMode: Prepend,"
                        + " defaultEndpointToHostAction: Allow, logSeverityFile: None, bpfExternalServiceMode: Direct}"),
                        "spec.logSeverityFile | one of", "spec.iptablesBackend | one of Auto, Legacy, NFT",
                        "spec.defaultEndpointToHostAction | one of Accept, Drop, Return", "spec.bpfExternalServiceMode | one of",
                        "spec.chainInsertMode | one of Append, Insert (any case)")),
                row("Felix ports and MTUs", invalid(felix("{healthPort: 0, prometheusMetricsPort: 70000, ipipMTU: 40,"
                        + " vxlanMTUV6: 1000, natPortRange: \"40000:30000\", kubeNodePortRanges: [http]}"),
                        "spec.healthPort | between 1 and 65535", "spec.prometheusMetricsPort | between 1 and 65535",
                        "spec.natPortRange | reversed", "spec.kubeNodePortRanges[0] | not a named port",
                        "spec.ipipMTU | between 68", "spec.vxlanMTUV6 | between 1280")),
                row("Felix failsafe ports", invalid(felix("{failsafeOutboundHostPorts: [{protocol: tcp, port: 0, net: x}]}"),
                        "spec.failsafeOutboundHostPorts[0].protocol | TCP, UDP or SCTP",
                        "spec.failsafeOutboundHostPorts[0].port | between 1 and 65535",
                        "spec.failsafeOutboundHostPorts[0].net | invalid CIDR")),
                row("Felix addresses and tables", invalid(felix("{natOutgoingAddress: \"fd00::1\", routeTableRange: {min: 0, max: 10},"
                        + " routeTableRanges: [{min: 5, max: 1}]}"),
                        "spec.natOutgoingAddress | IPv4", "spec.routeTableRange | within 1..250",
                        "spec.routeTableRange | together with routeTableRanges", "spec.routeTableRanges[0] | min must not exceed max")),
                // nodes
                row("node", valid(resource("Node", "{name: node-1}", "{bgp: {ipv4Address: 10.0.0.5/24, asNumber: 64512,"
                        + " ipv4IPIPTunnelAddr: 10.244.0.1}, addresses: [{address: 10.0.0.5, type: InternalIP}]}"))),
                row("node addresses", invalid(resource("Node", "{name: node-1}", "{bgp: {ipv4Address: \"fd00::5/64\","
                        + " ipv6Address: 10.0.0.1/24}, addresses: [{address: 10.0.0.5, type: Public}]}"),
                        "spec.bgp.ipv4Address | IPv4", "spec.bgp.ipv6Address | IPv6", "spec.addresses[0].type | CalicoNodeIP")),
                // staged policies
                row("staged policy", valid(resource("StagedGlobalNetworkPolicy", "{name: p}",
                        "{stagedAction: Set, ingress: [{action: Allow}]}"))),
                row("staged delete carries only the tier", invalid(resource("StagedNetworkPolicy", "{name: p, namespace: ns}",
                        "{stagedAction: Delete, selector: all()}"), "spec | only tier may be set")),
                row("staged delete", valid(resource("StagedGlobalNetworkPolicy", "{name: t1.p}", "{stagedAction: Delete, tier: t1}"))),
                row("staged policy rules are checked", invalid(resource("StagedNetworkPolicy", "{name: p, namespace: ns}",
                        "{ingress: [{action: Allow, protocol: TCPX}]}"), "spec.ingress[0].protocol | unknown protocol"))
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
