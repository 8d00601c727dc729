package calico.felix.flows;

import static calico.felix.flows.FlowAggregatorTest.ALLOW_80;
import static calico.felix.flows.FlowAggregatorTest.ct;
import static calico.felix.flows.FlowAggregatorTest.ip;
import static calico.felix.flows.FlowAggregatorTest.nflog;
import static calico.felix.flows.FlowAggregatorTest.renderedPrefix;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.KubernetesService;
import calico.api.model.KubernetesServiceSpec;
import calico.api.model.KubernetesServiceSpec.ServicePort;
import calico.api.model.ObjectMeta;
import calico.dataplane.netfilter.ConntrackEntry;
import calico.dataplane.netfilter.FlowTuple;
import calico.felix.calc.CalculationGraph;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Ruleset;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A Kubernetes Service from the syncer to the flow report: the calculation graph is fed the
 * KubernetesService update (as the kubernetes datastore's syncer delivers it), its flow-log
 * lookups are applied as {@code FlowLogs} applies them, and a DNAT'd connection (real NFLOG and
 * conntrack records) to the service's cluster IP is reported with the service's name, namespace
 * and port name. The kernel side of the same DNAT is {@code e2e/FlowLogsE2ETest} (on etcd, where
 * no Service reaches felix, as in Calico).
 */
class ServiceFlowTest {

    final DataplaneModel model = FlowAggregatorTest.model();
    final Ruleset rendered = RuleRenderer.render(model, Set.of(IpFamily.V4));
    final FlowLookups lookups = new FlowLookups();
    // Every batch the graph flushes goes to the lookups, as FlowLogs.apply hands its lookups on.
    final CalculationGraph graph = CalculationGraph.create("node-a", batch -> batch.forEach(lookups::apply));

    static KubernetesService api(int port) {
        return new KubernetesService(ObjectMeta.namespaced("prod", "api"), new KubernetesServiceSpec(
                List.of("10.96.0.10"), List.of(), List.of(), List.of(new ServicePort("http", "TCP", port, 0))));
    }

    static FelixConfiguration flowLogsOn() {
        return new FelixConfiguration(ObjectMeta.named("default"), ResourceCodec.get().jsonMapper()
                .convertValue(Map.of("flowLogsGoldmaneServer", "goldmane:7443"), FelixConfigurationSpec.class));
    }

    /** Client 10.70.1.1 dials {@code 10.96.0.10:80}; DNAT'd to api 10.70.0.2:8080, which allows it. */
    FlowKey reportOfADnatConnection(int clientPort) {
        FlowAggregator agg = new FlowAggregator(() -> FlowContext.of(model, lookups));
        FlowTuple vip = new FlowTuple(ip("10.70.1.1"), ip("10.96.0.10"), 6, clientPort, 80);
        FlowTuple post = new FlowTuple(ip("10.70.1.1"), ip("10.70.0.2"), 6, clientPort, 8080);
        agg.onNflog(nflog(1, renderedPrefix(rendered, Names.policyInbound(ALLOW_80), 0), post));
        agg.onConntrackDump(List.of(ct(vip, post.reversed(), 3, 180, 2, 120, 0xe | ConntrackEntry.STATUS_DST_NAT,
                ConntrackEntry.TCP_ESTABLISHED)));
        List<Flow> flows = agg.flush(1000, 1015);
        assertThat(flows).hasSize(1);
        assertThat(flows.get(0).getKey().getReporter()).isEqualTo(Reporter.Dst);
        return flows.get(0).getKey();
    }

    @Test
    void aServiceTheGraphIsFedNamesTheDnatConnectionsToIt() {
        graph.onUpdates(List.of(Update.of(UpdateType.NEW, flowLogsOn(), 1), Update.of(UpdateType.NEW, api(80), 2)));
        graph.onStatus(SyncerStatus.IN_SYNC);

        FlowKey k = reportOfADnatConnection(40001);
        assertThat(k.getDestName()).isEqualTo("api");
        assertThat(k.getDestServiceNamespace()).isEqualTo("prod");
        assertThat(k.getDestServiceName()).isEqualTo("api");
        assertThat(k.getDestServicePortName()).isEqualTo("http");
        assertThat(k.getDestServicePort()).isEqualTo(80);

        // The service moves to port 81: a new connection to :80 is no longer its.
        graph.onUpdates(List.of(Update.of(UpdateType.UPDATED, api(81), 3)));
        assertThat(reportOfADnatConnection(40002).getDestServiceName()).isEmpty();
        graph.onUpdates(List.of(Update.of(UpdateType.UPDATED, api(80), 4)));
        assertThat(reportOfADnatConnection(40003).getDestServiceName()).isEqualTo("api");
        // Deleted: the index holds nothing of it.
        graph.onUpdates(List.of(Update.deleted(api(80).key(), 5)));
        assertThat(reportOfADnatConnection(40004).getDestServiceName()).isEmpty();
        assertThat(lookups.size()).isZero();
    }

    @Test
    void withFlowLogsOffTheGraphSendsNoServiceAndNoFlowNamesOne() {
        graph.onUpdates(List.of(Update.of(UpdateType.NEW, api(80), 1)));
        graph.onStatus(SyncerStatus.IN_SYNC);
        assertThat(lookups.size()).isZero();
        assertThat(reportOfADnatConnection(40001).getDestServiceName()).isEmpty();
    }
}
