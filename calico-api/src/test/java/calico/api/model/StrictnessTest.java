package calico.api.model;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.codec.ResourceParseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Unknown fields, wrong types and bad closed-set values in the specs are rejected, naming the field. */
class StrictnessTest {

    private static final String DOC = "apiVersion: projectcalico.org/v3\nkind: %s\nmetadata: {name: x}\nspec:\n  %s\n";

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', textBlock = """
            FelixConfiguration | logSeverityScren: Info | spec.logSeverityScren: unknown field
            FelixConfiguration | iptablesLockTimeoutSec: 0 | spec.iptablesLockTimeoutSec: unknown field
            FelixConfiguration | failsafeInboundHostPorts: [{protocol: TCP, port: 22, bogus: 1}] | spec.failsafeInboundHostPorts[0].bogus: unknown field
            FelixConfiguration | bpfConntrackTimeouts: {tcpSyn: 5s} | spec.bpfConntrackTimeouts.tcpSyn: unknown field
            BGPPeer | password: {secretKeyRef: {name: a, key: b, extra: c}} | spec.password.secretKeyRef.extra: unknown field
            BGPConfiguration | communities: [{name: a, value: '1:2', x: y}] | spec.communities[0].x: unknown field
            BGPFilter | exportV4: [{action: Accept, cidrs: 10.0.0.0/8}] | spec.exportV4[0].cidrs: unknown field
            Node | bgp: {asNumber: 1, ipv4Addr: 1.2.3.4} | spec.bgp.ipv4Addr: unknown field
            HostEndpoint | ports: [{name: a, protocol: TCP, port: 1, hostPort: 2}] | spec.ports[0].hostPort: unknown field
            IPPool | ipip: {enabled: true} | spec.ipip: unknown field
            IPReservation | reservedCidrs: [10.0.0.0/8] | spec.reservedCidrs: unknown field
            ClusterInformation | clusterGuid: abc | spec.clusterGuid: unknown field
            KubeControllersConfiguration | controllers: {node: {reconcilePeriod: 5m}} | spec.controllers.node.reconcilePeriod: unknown field
            StagedGlobalNetworkPolicy | stagedActoin: Set | spec.stagedActoin: unknown field
            StagedNetworkPolicy | namespaceSelector: all() | spec.namespaceSelector: unknown field
            IPAMBlock | attributes: [{handleID: h}] | spec.attributes[0].handleID: unknown field
            BlockAffinity | host: n1 | spec.host: unknown field
            IPAMHandle | handleId: h | spec.handleId: unknown field
            IPAMConfiguration | strictaffinity: true | spec.strictaffinity: unknown field
            """)
    void unknownFieldsAreNamed(String kind, String line, String message) {
        assertThatThrownBy(() -> RoundTrip.CODEC.parse(String.format(DOC, kind, line)))
                .isInstanceOf(ResourceParseException.class)
                .hasMessage(message);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', textBlock = """
            FelixConfiguration | healthPort: '9099' | spec.healthPort: wrong type, expected a number
            FelixConfiguration | bpfEnabled: 'true' | spec.bpfEnabled: wrong type, expected true or false
            FelixConfiguration | logSeverityScreen: [Info] | spec.logSeverityScreen: wrong type, expected a string
            FelixConfiguration | failsafeInboundHostPorts: {protocol: TCP} | spec.failsafeInboundHostPorts: wrong type, expected a list
            FelixConfiguration | natPortRange: 'a:b' | spec.natPortRange: invalid port range "a:b"
            HostEndpoint | ports: [{name: a, protocol: TCP, port: http}] | spec.ports[0].port: wrong type, expected a number
            IPPool | blockSize: [26] | spec.blockSize: wrong type, expected a number
            IPPool | natOutgoing: 'yes' | spec.natOutgoing: wrong type, expected true or false
            BGPPeer | asNumber: -1 | spec.asNumber: AS number -1 is out of range 0-4294967295
            BGPPeer | asNumber: 4294967296 | spec.asNumber: AS number 4294967296 is out of range 0-4294967295
            BGPPeer | asNumber: 1.5 | spec.asNumber: AS number must be an integer or a string "x.y"
            BGPPeer | asNumber: '70000.1' | spec.asNumber: invalid AS number format "70000.1": parts must be 0-65535
            BGPPeer | asNumber: 'AS65000' | spec.asNumber: invalid AS number format "AS65000"
            BGPPeer | filters: export | spec.filters: wrong type, expected a list
            BGPConfiguration | nodeMeshPassword: secret | spec.nodeMeshPassword: wrong type, expected an object
            BGPFilter | exportV4: [{action: Accept, asPathPrefix: [65000, x]}] | spec.exportV4[0].asPathPrefix[1]: invalid AS number format "x"
            Node | bgp: {asNumber: true} | spec.bgp.asNumber: AS number must be an integer or a string "x.y"
            KubeControllersConfiguration | prometheusMetricsPort: '9094' | spec.prometheusMetricsPort: wrong type, expected a number
            ClusterInformation | datastoreReady: 'true' | spec.datastoreReady: wrong type, expected true or false
            StagedGlobalNetworkPolicy | order: '100' | spec.order: wrong type, expected a number
            IPAMBlock | allocations: [0, '1'] | spec.allocations[1]: wrong type, expected a number
            IPAMBlock | sequenceNumber: 1.5 | spec.sequenceNumber: invalid value 1.5, expected a number
            BlockAffinity | deleted: false | spec.deleted: invalid value false, expected a string
            IPAMHandle | block: {10.0.0.0/26: '1'} | spec.block.10.0.0.0/26: wrong type, expected a number
            IPAMConfiguration | maxBlocksPerHost: '4' | spec.maxBlocksPerHost: wrong type, expected a number
            """)
    void wrongTypesAreNamed(String kind, String line, String message) {
        assertThatThrownBy(() -> RoundTrip.CODEC.parse(String.format(DOC, kind, line)))
                .isInstanceOf(ResourceParseException.class)
                .hasMessage(message);
    }

    @Test
    void integerOverflowIsNamed() {
        assertThatThrownBy(() -> RoundTrip.CODEC.parse(String.format(DOC, "FelixConfiguration", "iptablesLockTimeoutSecs: 99999999999")))
                .isInstanceOf(ResourceParseException.class)
                .hasMessageStartingWith("spec.iptablesLockTimeoutSecs: Numeric value (99999999999) out of range of int");
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', textBlock = """
            IPPool | ipipMode: always | spec.ipipMode: invalid value "always", expected one of [Never, Always, CrossSubnet]
            IPPool | vxlanMode: cross-subnet | spec.vxlanMode: invalid value "cross-subnet", expected one of [Never, Always, CrossSubnet]
            IPPool | allowedUses: [Workload, Bogus] | spec.allowedUses[1]: invalid value "Bogus", expected one of [Workload, Tunnel, LoadBalancer]
            IPPool | assignmentMode: manual | spec.assignmentMode: invalid value "manual", expected one of [Automatic, Manual]
            BGPPeer | sourceAddress: useNodeIP | spec.sourceAddress: invalid value "useNodeIP", expected one of [UseNodeIP, None]
            BGPPeer | nextHopMode: keep | spec.nextHopMode: invalid value "keep", expected one of [Auto, Self, Keep]
            BGPConfiguration | bindMode: nodeIP | spec.bindMode: invalid value "nodeIP", expected one of [None, NodeIP]
            BGPFilter | exportV4: [{action: accept}] | spec.exportV4[0].action: invalid value "accept", expected one of [Accept, Reject]
            BGPFilter | importV6: [{action: Reject, matchOperator: in}] | spec.importV6[0].matchOperator: invalid value "in", expected one of [Equal, NotEqual, In, NotIn]
            BGPFilter | importV6: [{action: Reject, peerType: EBGP}] | spec.importV6[0].peerType: invalid value "EBGP", expected one of [eBGP, iBGP]
            KubeControllersConfiguration | controllers: {node: {syncLabels: enabled}} | spec.controllers.node.syncLabels: invalid value "enabled", expected one of [Enabled, Disabled]
            KubeControllersConfiguration | controllers: {loadBalancer: {assignIPs: All}} | spec.controllers.loadBalancer.assignIPs: invalid value "All", expected one of [AllServices, RequestedServicesOnly]
            StagedNetworkPolicy | stagedAction: set | spec.stagedAction: invalid value "set", expected one of [Set, Delete, Learn, Ignore]
            """)
    void closedSetsAcceptOnlyCalicoSpelling(String kind, String line, String message) {
        assertThatThrownBy(() -> RoundTrip.CODEC.parse(String.format(DOC, kind, line)))
                .isInstanceOf(ResourceParseException.class)
                .hasMessage(message);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            status: {wireguardPublicKeys: abc} | status.wireguardPublicKeys: unknown field
            status: {podCIDRs: 10.0.0.0/24} | status.podCIDRs: wrong type, expected a list
            """)
    void nodeStatusIsStrictToo(String line, String message) {
        String doc = "apiVersion: projectcalico.org/v3\nkind: Node\nmetadata: {name: x}\nspec: {}\n" + line + "\n";
        assertThatThrownBy(() -> RoundTrip.CODEC.parse(doc))
                .isInstanceOf(ResourceParseException.class)
                .hasMessage(message);
    }
}
