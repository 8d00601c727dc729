package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.felixConfig;
import static calico.felix.calc.InfraFixtures.node;
import static calico.felix.calc.InfraFixtures.pool;
import static calico.felix.calc.InfraFixtures.set;
import static calico.felix.calc.InfraFixtures.wep;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The four stages wired by {@link InfraStages#registerAll} on one dispatcher, driven with one
 * snapshot in several orders (after Felix's state-sequence expanders): the final state depends
 * only on the resources, never on the order they arrived in or on what came and went before.
 */
class InfraStagesTest {

    private static final String HOST = "node-a";

    static List<Update> snapshot() {
        return List.of(
                set(felixConfig("default", Map.of("logSeverityScreen", "Warning", "healthPort", 9100))),
                set(felixConfig("node." + HOST, Map.of("healthPort", 9200))),
                set(felixConfig("node.node-b", Map.of("healthPort", 9999))),
                set(node(HOST, "192.168.0.1/24", null, Map.of("zone", "a"))),
                set(node("node-b", "192.168.0.2/24", null)),
                set(pool("default-pool", "10.0.0.0/16", true)),
                set(pool("v6", "fd00:10::/64", false)),
                set(wep("ns", "a1", HOST, "cali1", "10.0.0.1/32", "fd00:10::1/128")),
                set(wep("ns", "b1", "node-b", "caliB", "10.0.0.2/32")),
                set(wep("ns", "dup", "node-b", "caliD", "10.0.0.1/32")));
    }

    /** Leading junk that is later removed again; must leave no trace. */
    static List<Update> churn() {
        return List.of(
                set(felixConfig("default", Map.of("interfacePrefix", "tap"))),
                set(node("node-c", "192.168.0.3/24", null)),
                set(pool("old", "10.0.0.0/8", false)),
                set(wep("ns", "gone", "node-c", null, "10.0.0.9/32", "10.0.0.2/32")),
                deleted(ResourceKind.WORKLOAD_ENDPOINT, "ns", "gone"),
                deleted(ResourceKind.IP_POOL, "old"),
                deleted(ResourceKind.NODE, "node-c"));
    }

    static Stream<Arguments> orders() {
        UnaryOperator<List<Update>> identity = l -> l;
        UnaryOperator<List<Update>> reversed = l -> {
            List<Update> r = new ArrayList<>(l);
            Collections.reverse(r);
            return r;
        };
        UnaryOperator<List<Update>> churnFirst = l -> {
            List<Update> r = new ArrayList<>(churn());
            r.addAll(l);
            return r;
        };
        UnaryOperator<List<Update>> twice = l -> {
            List<Update> r = new ArrayList<>(l);
            r.addAll(l);
            return r;
        };
        return Stream.of(Arguments.of("as listed", identity), Arguments.of("reversed", reversed),
                Arguments.of("after churn", churnFirst), Arguments.of("everything twice", twice));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("orders")
    void finalStateDependsOnlyOnTheResources(String name, UnaryOperator<List<Update>> order) {
        Dispatcher dispatcher = new Dispatcher();
        InfraRecorder out = new InfraRecorder();
        InfraStages.registerAll(dispatcher, HOST, Map.of("FELIX_LOGSEVERITYSCREEN", "Debug"), out);

        dispatcher.onStatus(SyncerStatus.RESYNC_IN_PROGRESS);
        order.apply(snapshot()).forEach(u -> dispatcher.onUpdates(List.of(u)));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(out.state).containsOnlyKeys("config", "host:node-a", "host:node-b", "pool:default-pool", "pool:v6",
                "route:10.0.0.1/32", "route:10.0.0.2/32", "route:fd00:10::1/128", "route:192.168.0.1/32",
                "route:192.168.0.2/32");
        var config = ((DataplaneUpdate.ConfigUpdate) out.state.get("config")).settings().effective();
        assertThat(config).containsEntry("logSeverityScreen", "Debug").containsEntry("healthPort", "9200")
                .containsEntry("interfacePrefix", "cali");
        assertThat(out.events.stream().filter(e -> e instanceof DataplaneUpdate.ConfigUpdate)).hasSize(1);
        assertThat(out.routes().get("10.0.0.1/32")).isEqualTo(new DataplaneUpdate.RouteUpdate("10.0.0.1/32",
                DataplaneUpdate.RouteType.LOCAL_WORKLOAD, HOST, "192.168.0.1", "cali1", "default-pool", true));
        assertThat(out.routes().get("10.0.0.2/32")).isEqualTo(new DataplaneUpdate.RouteUpdate("10.0.0.2/32",
                DataplaneUpdate.RouteType.REMOTE_WORKLOAD, "node-b", "192.168.0.2", null, "default-pool", true));
        assertThat(out.state.get("host:node-a")).isEqualTo(
                new DataplaneUpdate.HostMetadataUpdate(HOST, "192.168.0.1", null, Map.of("zone", "a")));
    }

    @Test
    void bgpConfigurationDefaultsServiceRangesAreSentWhenTheyChange() {
        Dispatcher dispatcher = new Dispatcher();
        InfraRecorder out = new InfraRecorder();
        InfraStages.registerAll(dispatcher, HOST, Map.of(), out);
        dispatcher.onStatus(SyncerStatus.IN_SYNC);
        out.drain();
        dispatcher.onUpdates(List.of(set(bgpConfig("node." + HOST, "10.99.0.0/16", null))));
        assertThat(out.drain()).as("only the default one counts").isEmpty();
        dispatcher.onUpdates(List.of(set(bgpConfig("default", "10.96.0.0/12", "192.0.2.7"))));
        assertThat(out.drain()).containsExactly(new DataplaneUpdate.ServiceCidrsUpdate(List.of("10.96.0.0/12",
                "192.0.2.7/32")));
        dispatcher.onUpdates(List.of(set(bgpConfig("default", "10.96.0.0/12", "192.0.2.7"))));
        assertThat(out.drain()).as("unchanged: nothing").isEmpty();
        dispatcher.onUpdates(List.of(deleted(ResourceKind.BGP_CONFIGURATION, "default")));
        assertThat(out.drain()).containsExactly(new DataplaneUpdate.ServiceCidrsUpdate(List.of()));
    }

    private static calico.api.model.Resource bgpConfig(String name, String clusterIps, String externalIp) {
        return calico.api.codec.ResourceCodec.get().parse("apiVersion: projectcalico.org/v3\nkind: BGPConfiguration\n"
                + "metadata: {name: " + name + "}\nspec: {serviceClusterIPs: [{cidr: " + clusterIps + "}]"
                + (externalIp == null ? "" : ", serviceExternalIPs: [{cidr: " + externalIp + "}]") + "}\n");
    }
}
