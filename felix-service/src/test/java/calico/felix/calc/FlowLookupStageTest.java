package calico.felix.calc;

import static calico.felix.calc.Res.gns;
import static calico.felix.calc.Res.hep;
import static calico.felix.calc.Res.labels;
import static calico.felix.calc.Res.netset;
import static calico.felix.calc.Res.wep;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.KubernetesService;
import calico.api.model.KubernetesServiceSpec;
import calico.api.model.KubernetesServiceSpec.ServicePort;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.felix.calc.DataplaneUpdate.FlowLookupRemove;
import calico.felix.calc.DataplaneUpdate.FlowLookupType;
import calico.felix.calc.DataplaneUpdate.FlowLookupUpdate;
import calico.felix.calc.DataplaneUpdate.ServiceLookupUpdate;
import calico.felix.calc.DataplaneUpdate.ServicePortLookup;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The whole graph's flow-log lookups: remote workloads, host endpoints (any node) and network
 * sets come out only while the effective configuration has {@code flowLogsGoldmaneServer};
 * turning it on emits what was held, off removes it; local workloads never come as lookups;
 * Kubernetes Services come as service lookups (addresses, ports with IP protocol numbers).
 */
class FlowLookupStageTest {

    static final String NODE = "node-a";

    static List<DataplaneUpdate> lookups(List<DataplaneUpdate> batch) {
        return batch.stream().filter(u -> u instanceof DataplaneUpdate.FlowLookup).toList();
    }

    static List<DataplaneUpdate> allLookups(Harness h) {
        return h.batches.stream().flatMap(b -> lookups(b).stream()).toList();
    }

    @Test
    void nothingIsEmittedWhileFlowLogsAreOffAndEverythingHeldOnceTheyTurnOn() {
        Harness h = new Harness(NODE);
        h.put(wep("prod", "node--b-k8s-db-eth0", "node-b", "10.65.2.7", labels("app", "db")),
                wep("prod", "node--a-k8s-api-eth0", NODE, "10.65.1.3", labels("app", "api")),
                hep("eth0-b", "node-b", "192.168.9.2", labels("role", "gateway")),
                gns("internet-ish", labels("kind", "ext"), "100.64.0.0/10"),
                netset("prod", "partners", labels("tier", "partner"), "100.64.8.0/24", "2001:db8::/32"));
        h.inSync();
        assertThat(allLookups(h)).as("flow logs off: nothing more than before").isEmpty();

        h.put(InfraFixtures.felixConfig("default", Map.of("flowLogsGoldmaneServer", "goldmane:7443")));
        List<DataplaneUpdate> on = lookups(h.last());
        assertThat(on).hasSize(4).allMatch(u -> u instanceof FlowLookupUpdate);
        Map<String, FlowLookupUpdate> byKey = new java.util.HashMap<>();
        on.forEach(u -> byKey.put(((FlowLookupUpdate) u).key(), (FlowLookupUpdate) u));
        assertThat(byKey).containsOnlyKeys("WorkloadEndpoint/prod/node--b-k8s-db-eth0", "HostEndpoint/eth0-b",
                "GlobalNetworkSet/internet-ish", "NetworkSet/prod/partners");
        FlowLookupUpdate db = byKey.get("WorkloadEndpoint/prod/node--b-k8s-db-eth0");
        assertThat(db.type()).isEqualTo(FlowLookupType.REMOTE_WORKLOAD);
        assertThat(db.namespace()).isEqualTo("prod");
        assertThat(db.labels()).containsEntry("app", "db");
        assertThat(db.nets()).containsExactly("10.65.2.7/32");
        assertThat(byKey.get("HostEndpoint/eth0-b").type()).isEqualTo(FlowLookupType.HOST_ENDPOINT);
        assertThat(byKey.get("HostEndpoint/eth0-b").labels()).containsEntry("role", "gateway");
        assertThat(byKey.get("NetworkSet/prod/partners").nets()).containsExactly("100.64.8.0/24", "2001:db8::/32");
        assertThat(byKey.get("GlobalNetworkSet/internet-ish").namespace()).isEmpty();

        // While on: changes and deletes follow; an unchanged re-put says nothing.
        h.put(netset("prod", "partners", labels("tier", "partner"), "100.64.9.0/24"));
        assertThat(lookups(h.last())).singleElement().satisfies(u ->
                assertThat(((FlowLookupUpdate) u).nets()).containsExactly("100.64.9.0/24"));
        int batches = h.batches.size();
        h.put(netset("prod", "partners", labels("tier", "partner"), "100.64.9.0/24"));
        assertThat(h.batches.subList(batches, h.batches.size())).allMatch(b -> lookups(b).isEmpty());
        h.delete(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "prod", "node--b-k8s-db-eth0"));
        assertThat(lookups(h.last())).containsExactly(new FlowLookupRemove("WorkloadEndpoint/prod/node--b-k8s-db-eth0"));

        // Off again: everything that was sent is removed.
        h.delete(ResourceKey.of(ResourceKind.FELIX_CONFIGURATION, "default"));
        assertThat(lookups(h.last())).hasSize(3).allMatch(u -> u instanceof FlowLookupRemove);
    }

    static KubernetesService service(String ns, String name, List<String> clusterIPs, ServicePort... ports) {
        return new KubernetesService(ObjectMeta.namespaced(ns, name), new KubernetesServiceSpec(clusterIPs,
                List.of("192.0.2.10"), List.of("198.51.100.10"), List.of(ports)));
    }

    @Test
    void kubernetesServicesComeAsServiceLookupsWithIpProtocolNumbersOnlyWhileFlowLogsAreOn() {
        Harness h = new Harness(NODE);
        h.put(service("shop", "api", List.of("10.96.0.10", "fd00:96::10"),
                new ServicePort("http", "TCP", 80, 30080), new ServicePort("dns", "UDP", 53, 0),
                new ServicePort("assoc", "SCTP", 9999, 0), new ServicePort("odd", "QUIC", 443, 0)),
                service("shop", "portless", List.of("10.96.0.11")));
        h.inSync();
        assertThat(allLookups(h)).as("flow logs off").isEmpty();

        h.put(InfraFixtures.felixConfig("default", Map.of("flowLogsGoldmaneServer", "goldmane:7443")));
        assertThat(lookups(h.last())).as("a service without a port a client can dial is not held")
                .containsExactly(new ServiceLookupUpdate("KubernetesService/shop/api", "shop", "api",
                        List.of("10.96.0.10", "fd00:96::10", "192.0.2.10", "198.51.100.10"),
                        List.of(new ServicePortLookup("http", 6, 80, 30080), new ServicePortLookup("dns", 17, 53, 0),
                                new ServicePortLookup("assoc", 132, 9999, 0))));

        h.put(service("shop", "api", List.of("10.96.0.10"), new ServicePort("", null, 8080, 0)));
        assertThat(lookups(h.last())).containsExactly(new ServiceLookupUpdate("KubernetesService/shop/api", "shop",
                "api", List.of("10.96.0.10", "192.0.2.10", "198.51.100.10"),
                List.of(new ServicePortLookup("", 6, 8080, 0))));
        h.delete(ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, "shop", "api"));
        assertThat(lookups(h.last())).containsExactly(new FlowLookupRemove("KubernetesService/shop/api"));
    }

    @Test
    void lookupsNeverChangeWhatIsProgrammed() {
        Harness on = new Harness(NODE);
        Harness off = new Harness(NODE);
        on.put(InfraFixtures.felixConfig("default", Map.of("flowLogsGoldmaneServer", "goldmane:7443")));
        off.put(InfraFixtures.felixConfig("default", Map.of("logSeverityScreen", "Info")));
        for (Harness h : List.of(on, off)) {
            h.put(wep("prod", "node--b-k8s-db-eth0", "node-b", "10.65.2.7", labels("app", "db")),
                    wep("prod", "node--a-k8s-api-eth0", NODE, "10.65.1.3", labels("app", "api")),
                    gns("ext", labels(), "100.64.0.0/10"));
            h.inSync(); // the effective configuration is emitted once in sync
        }
        assertThat(allLookups(on)).hasSize(2);
        assertThat(on.state.workloads).isEqualTo(off.state.workloads);
        assertThat(on.state.workloads).containsOnlyKeys("prod/node--a-k8s-api-eth0");
    }
}
