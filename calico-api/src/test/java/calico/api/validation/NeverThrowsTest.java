package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.Resource;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Whatever the model can hold, the validator answers with a result or a ValidationException,
 * never another exception: templates of every validated kind are filled with hostile scalars.
 */
class NeverThrowsTest {

    /** Numbers for integer slots ({@code #}). */
    private static final List<String> NUMBERS = List.of("0", "-1", "1", "255", "256", "65535", "65536", "4294967295");

    /** Strings for text slots ({@code @}). */
    private static final List<String> SCALARS = List.of("\"\"", "x", "\"-\"", "\"0\"", "\"65536\"",
            "\"10.0.0.0/8\"", "\"10.0.0.1\"", "\"::\"", "\"fd00::/129\"", "\"1:2:3\"", "\"[::1]:0\"", "\"a.b.c\"",
            "\"global()\"", "\"all()\"", "\"has(\"", "\"90s\"", "\"-5m\"", "\"1.5.5h\"", "\"knp.default.x\"",
            "\"UPPER\"", "\"x:y:z\"", "\"80:70\"", "\"*\"", "\"" + "a".repeat(300) + "\"");

    private static final List<String> TEMPLATES = List.of(
            "kind: GlobalNetworkPolicy\nmetadata: {name: @}\nspec: {tier: @, selector: @, namespaceSelector: @,"
                    + " ingress: [{action: Allow, protocol: @, ipVersion: #, icmp: {type: #, code: #},"
                    + " source: {nets: [@], selector: @, ports: [@], services: {name: @}},"
                    + " destination: {notNets: [@], namespaceSelector: @, serviceAccounts: {names: [@], selector: @}},"
                    + " http: {methods: [@], paths: [{exact: @, prefix: @}]}}], egress: [{action: Deny, notProtocol: @}]}",
            "kind: NetworkPolicy\nmetadata: {name: @, namespace: @, labels: {@: @}}\nspec: {tier: @, order: #,"
                    + " performanceHints: [@]}",
            "kind: StagedNetworkPolicy\nmetadata: {name: @, namespace: ns}\nspec: {stagedAction: Delete, tier: @, selector: @}",
            "kind: Tier\nmetadata: {name: @}\nspec: {order: #}",
            "kind: WorkloadEndpoint\nmetadata: {name: @, namespace: @}\nspec: {node: @, orchestrator: @, pod: @,"
                    + " endpoint: @, ipNetworks: [@], ipv4Gateway: @, mac: @, interfaceName: @,"
                    + " ipNATs: [{internalIP: @, externalIP: @}], ports: [{name: @, protocol: @, port: #, hostPort: #}]}",
            "kind: HostEndpoint\nmetadata: {name: @}\nspec: {node: @, interfaceName: @, expectedIPs: [@],"
                    + " ports: [{name: @, protocol: @, port: #}]}",
            "kind: IPPool\nmetadata: {name: @}\nspec: {cidr: @, blockSize: #, nodeSelector: @}",
            "kind: BGPPeer\nmetadata: {name: @}\nspec: {node: @, peerIP: @, asNumber: @, reachableBy: @,"
                    + " maxRestartTime: @, ttlSecurity: #, filters: [@]}",
            "kind: BGPConfiguration\nmetadata: {name: @}\nspec: {listenPort: #, communities: [{name: @, value: @}],"
                    + " prefixAdvertisements: [{cidr: @, communities: [@]}], nodeMeshMaxRestartTime: @}",
            "kind: BGPFilter\nmetadata: {name: @}\nspec: {exportV4: [{action: Accept, cidr: @, prefixLength: {min: #},"
                    + " interface: @, operations: [{addCommunity: {value: @}}]}]}",
            "kind: FelixConfiguration\nmetadata: {name: @}\nspec: {iptablesRefreshInterval: @, healthPort: #,"
                    + " chainInsertMode: @, natPortRange: @, natOutgoingAddress: @, mtuIfacePattern: @,"
                    + " failsafeInboundHostPorts: [{protocol: @, port: #, net: @}], routeTableRange: {min: #, max: #}}",
            "kind: Node\nmetadata: {name: @}\nspec: {bgp: {ipv4Address: @, asNumber: @}, addresses: [{address: @, type: #}]}");

    @Test
    void hostileValuesGiveErrorsNotExceptions() {
        Random random = new Random(42);
        int validated = 0;
        for (int i = 0; i < 3000; i++) {
            String template = TEMPLATES.get(i % TEMPLATES.size());
            StringBuilder yaml = new StringBuilder("apiVersion: projectcalico.org/v3\n");
            for (char c : template.toCharArray()) {
                yaml.append(c == '@' ? SCALARS.get(random.nextInt(SCALARS.size()))
                        : c == '#' ? NUMBERS.get(random.nextInt(NUMBERS.size())) : String.valueOf(c));
            }
            Resource r;
            try {
                r = ResourceCodec.get().parse(yaml.toString());
            } catch (ResourceParseException | IllegalArgumentException e) {
                continue; // the codec rejected a value's type; nothing to validate
            }
            try {
                ResourceValidator.get().defaultAndValidate(r);
            } catch (ValidationException e) {
                assertThat(e.errors()).isNotEmpty();
            }
            validated++;
        }
        assertThat(validated).as("resources that reached the validator").isGreaterThan(1500);
    }
}
