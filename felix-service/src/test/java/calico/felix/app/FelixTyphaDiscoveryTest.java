package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.MockApiClients;
import calico.libcalico.typha.TyphaDiscovery;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * FELIX_TYPHAK8SSERVICENAME against the fabric8 mock API server (CRUD mode): addresses from the
 * service's EndpointSlices (ready endpoints, port calico-typha, this node's first, shuffled), a
 * clear error naming the setting when there is none, and the felix application finding a typha
 * that way.
 */
@EnableKubernetesMockClient(crud = true)
class FelixTyphaDiscoveryTest {

    static KubernetesClient client;
    /** The test's writes: sent once, however slow the mock is under load (see {@link MockApiClients}). */
    @RegisterExtension
    static final MockApiClients.PerClass API = MockApiClients.perClass(() -> client);

    private static EndpointSlice slice(String namespace, String name, String service, int port, Object... ipNodeReady) {
        EndpointSliceBuilder b = new EndpointSliceBuilder().withNewMetadata().withNamespace(namespace).withName(name)
                .addToLabels("kubernetes.io/service-name", service).endMetadata().withAddressType("IPv4")
                .addNewPort().withName("metrics").withPort(9093).endPort()
                .addNewPort().withName("calico-typha").withPort(port).endPort();
        for (int i = 0; i < ipNodeReady.length; i += 3) {
            b.addToEndpoints(new EndpointBuilder().withAddresses((String) ipNodeReady[i])
                    .withNodeName((String) ipNodeReady[i + 1]).withNewConditions().withReady((Boolean) ipNodeReady[i + 2])
                    .endConditions().build());
        }
        return b.build();
    }

    private static void put(EndpointSlice s) {
        API.get().discovery().v1().endpointSlices().inNamespace(s.getMetadata().getNamespace()).resource(s)
                .createOr(x -> x.update());
    }

    @Test
    void readyTyphasOnThisNodeFirstEachGroupShuffled() {
        put(slice("calico-system", "typha-a", "calico-typha", 5473,
                "10.0.0.1", "node-a", true, "10.0.0.2", "node-b", true, "10.0.0.3", "node-c", false,
                "10.0.0.4", "node-a", null, "10.0.0.5", "node-c", true));
        put(slice("calico-system", "typha-b", "calico-typha", 5473, "fd00::7", "node-d", true));
        // Another service's slice, and the same service name in another namespace: not ours.
        put(slice("calico-system", "other", "other", 1, "10.9.0.1", "node-a", true));
        put(slice("kube-system", "typha-x", "calico-typha", 5473, "10.9.0.2", "node-a", true));

        TyphaDiscovery d = new TyphaDiscovery(client, "calico-system", "calico-typha", "node-a", new Random(1),
                "felix.typha-k8s-service-name (FELIX_TYPHAK8SSERVICENAME)");
        Set<List<String>> localOrders = new HashSet<>();
        Set<List<String>> remoteOrders = new HashSet<>();
        for (int i = 0; i < 30; i++) {
            List<String> a = d.addresses();
            assertThat(a.subList(0, 2)).as("this node's typhas first (missing ready counts as ready)")
                    .containsExactlyInAnyOrder("10.0.0.1:5473", "10.0.0.4:5473");
            assertThat(a.subList(2, a.size())).as("then the others; not-ready 10.0.0.3 left out")
                    .containsExactlyInAnyOrder("10.0.0.2:5473", "10.0.0.5:5473", "[fd00::7]:5473");
            localOrders.add(a.subList(0, 2));
            remoteOrders.add(a.subList(2, a.size()));
        }
        assertThat(localOrders).as("shuffled").hasSize(2);
        assertThat(remoteOrders).as("shuffled").hasSizeGreaterThan(1);

        assertThatThrownBy(() -> new TyphaDiscovery(client, "calico-system", "absent", "node-a", new Random(),
                "felix.typha-k8s-service-name (FELIX_TYPHAK8SSERVICENAME)")
                .addresses()).hasMessageContaining("FELIX_TYPHAK8SSERVICENAME").hasMessageContaining("calico-system/absent");
    }

    @Test
    void felixFindsTyphaThroughItsService() throws Exception {
        FelixTyphaWiringTest.MiniTypha typha = new FelixTyphaWiringTest.MiniTypha();
        typha.put(new ClusterInformation(ObjectMeta.named("default"), new ClusterInformationSpec("t", "k8s", null, true,
                null)));
        typha.put(new Tier(ObjectMeta.named("default"), new TierSpec(null, null)));
        Server server = NettyServerBuilder.forPort(0).addService(typha).build().start();
        try (FelixApplication felix = FelixTestApps.start(new FelixApplication.Parts(null, client),
                "--FELIX_ADMINPORT=0", "--FELIX_ADMINHOST=127.0.0.1", "--FELIX_HEALTHPORT=0",
                        "--FELIX_HEALTHHOST=127.0.0.1", "--HOSTNAME=", "--FELIX_FELIXHOSTNAME=node-f",
                        "--FELIX_TYPHAK8SSERVICENAME=typha-f", "--FELIX_TYPHAK8SNAMESPACE=calico-system",
                        "--FELIX_ETCDENDPOINTS=http://127.0.0.1:1", "--FELIX_DATAPLANEDRIVERNAME=model", "--FELIX_READYPOLLINITIAL=50ms",
                        "--FELIX_READYPOLLMAX=200ms")) {
            FelixDaemon daemon = felix.daemon();
            var health = felix.health();
            // No endpoint yet: felix keeps looking and says so.
            Await.until("startup reports discovery", Duration.ofSeconds(30),
                    () -> health.status("FelixStartup").orElseThrow().detail(), d -> d.contains("discovering typha"));
            assertThat(typha.streams).isEmpty();

            put(slice("calico-system", "typha-f", "typha-f", server.getPort(), "127.0.0.1", "node-z", true));
            record Seen(SyncerStatus syncer, int typhaStreams) {
            }
            Await.until("felix in sync through the discovered typha", Duration.ofSeconds(30),
                    () -> new Seen(daemon.syncerStatus(), typha.streams.size()),
                    seen -> seen.syncer() == SyncerStatus.IN_SYNC && seen.typhaStreams() == 1);
        } finally {
            server.shutdownNow();
        }
    }
}
