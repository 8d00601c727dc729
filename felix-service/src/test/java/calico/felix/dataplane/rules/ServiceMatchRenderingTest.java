package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.k8s.KubernetesConverter;
import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesEndpointSliceSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.dataplane.iptables.IptablesFormatter;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.NflogPrefix.Verdict;
import calico.felix.dataplane.rules.Ruleset.Table;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A rule's destination {@code services} match from the graph to the neutral ruleset: the
 * service's (address, protocol, port) set is matched as a named-port set (iptables
 * {@code dst,dst}), and with flow logs on the rule's NFLOG prefix still names the policy and rule,
 * whether the set has members (kubernetes datastore) or none (etcd).
 */
class ServiceMatchRenderingTest {

    private static final PolicyId TO_API = new PolicyId("default", "shop", "to-api", ResourceKind.NETWORK_POLICY);

    private static DataplaneModel model(boolean servicesPresented) {
        DataplaneModel model = new DataplaneModel();
        CalculationGraph graph = CalculationGraph.create("n1", Map.of("FELIX_FLOWLOGSGOLDMANESERVER", "goldmane:7443"),
                batch -> batch.forEach(model::apply), new KubernetesConverter(), servicesPresented);
        ResourceCodec codec = ResourceCodec.get();
        List<Resource> world = new java.util.ArrayList<>(List.of(
                codec.parse("""
                        apiVersion: projectcalico.org/v3
                        kind: Tier
                        metadata: {name: default}
                        spec: {order: 1000000}
                        """),
                codec.parse("""
                        apiVersion: projectcalico.org/v3
                        kind: WorkloadEndpoint
                        metadata: {name: n1-k8s-client-eth0, namespace: shop, labels: {app: client}}
                        spec: {node: n1, orchestrator: k8s, pod: client, endpoint: eth0, interfaceName: cali1,
                               ipNetworks: [10.0.0.1/32]}
                        """),
                codec.parse("""
                        apiVersion: projectcalico.org/v3
                        kind: NetworkPolicy
                        metadata: {name: to-api, namespace: shop}
                        spec:
                          selector: app == 'client'
                          types: [Egress]
                          egress:
                            - action: Allow
                              protocol: TCP
                              destination: {services: {name: api}}
                        """)));
        if (servicesPresented) { // etcd presents no EndpointSlices
            world.add(new KubernetesEndpointSlice(ObjectMeta.namespaced("shop", "api-1"), new KubernetesEndpointSliceSpec("api",
                        List.of(new KubernetesEndpointSliceSpec.Endpoint(List.of("10.0.0.2"))),
                        List.of(new KubernetesEndpointSliceSpec.EndpointPort("http", "TCP", 80)))));
        }
        long rev = 0;
        List<Update> updates = new java.util.ArrayList<>();
        for (Resource r : world) {
            updates.add(Update.of(UpdateType.NEW, r, ++rev));
        }
        graph.onUpdates(updates);
        graph.onStatus(calico.libcalico.syncer.SyncerStatus.IN_SYNC);
        return model;
    }

    @Test
    void theServiceSetIsMatchedAsANamedPortSetAndTheRuleKeepsItsFlowLogName() {
        for (boolean servicesPresented : List.of(true, false)) {
            DataplaneModel model = model(servicesPresented);
            Ruleset rs = RuleRenderer.render(model, Set.of(IpFamily.V4));
            List<GenericRule> out = ((Rules) rs.chains(Table.FILTER).get(Names.policyOutbound(TO_API))).rules();
            GenericRule verdict = out.get(0);
            Match.NamedPortSet set = verdict.matches().stream().filter(m -> m instanceof Match.NamedPortSet)
                    .map(m -> (Match.NamedPortSet) m).findFirst().orElseThrow();
            assertThat(set.dir()).isEqualTo(Match.Dir.DST);
            assertThat(set.setId()).startsWith("svc:");
            assertThat(model.ipSets().get(set.setId()).type()).isEqualTo(IpSetType.IP_AND_PORT);
            assertThat(model.ipSets().get(set.setId()).members()).extracting(Object::toString)
                    .containsExactlyElementsOf(servicesPresented ? List.of("10.0.0.2,tcp:80") : List.of());
            assertThat(new IptablesFormatter(IpFamily.V4).rule(verdict, new HashMap<>()).get(0).render())
                    .contains("--match-set " + Names.ipSet(IpFamily.V4, set.setId()) + " dst,dst");
            Target.Nflog log = (Target.Nflog) out.get(1).target();
            RuleHit hit = RuleRenderer.hitTable(model).decode(log.prefix());
            assertThat(hit.policy()).as("etcd: %s", !servicesPresented).isEqualTo(TO_API);
            assertThat(hit.ruleIndex()).isZero();
            assertThat(hit.inbound()).isFalse();
            assertThat(hit.verdict()).isEqualTo(Verdict.ALLOW);
        }
    }
}
