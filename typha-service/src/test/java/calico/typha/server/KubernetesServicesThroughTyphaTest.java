package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.client;
import static calico.typha.server.TyphaFixture.clientOptions;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesService;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.kubernetes.KubernetesApiServer;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.datastore.kubernetes.TestServices;
import calico.libcalico.typha.TyphaClient;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Typha on the kubernetes datastore hands its felix clients the cluster's Services (kind
 * KubernetesService) and EndpointSlices (KubernetesEndpointSlice), as Calico's typha does for
 * felix's flow logs and services matches: created, changed and deleted in the Kubernetes API
 * (fabric8's CRUD mock behind {@link KubernetesApiServer}).
 */
class KubernetesServicesThroughTyphaTest {

    private KubernetesApiServer api;
    private KubernetesDatastore ds;
    private TyphaServer typha;
    private TyphaClient felix;

    @BeforeEach
    void setUp() {
        api = new KubernetesApiServer();
        ds = api.datastore();
    }

    @AfterEach
    void tearDown() {
        if (felix != null) {
            felix.close();
        }
        if (typha != null) {
            typha.close();
        }
        ds.close();
        api.close();
    }

    @Test
    void felixClientsGetServicesEndpointSlicesAndTheirChanges() {
        KubernetesClient k8s = api.client();
        k8s.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("shop").endMetadata().build())
                .create();
        k8s.services().inNamespace("shop").resource(TestServices.service("api", "10.96.0.10", 80)).create();
        typha = server(ds, ServerSettings.defaults(0));
        ViewRecorder view = new ViewRecorder();
        felix = client(clientOptions("node-1", typha.port()), view);
        await("in sync", view::inSync);
        ResourceKey key = ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, "shop", "api");
        assertThat(((KubernetesService) view.view().get(key)).spec().ports())
                .extracting(p -> p.name() + "/" + p.protocol() + "/" + p.port()).containsExactly("http/TCP/80", "dns/UDP/53");

        k8s.services().inNamespace("shop").withName("api").edit(s -> new ServiceBuilder(s).editSpec()
                .editFirstPort().withPort(8080).endPort().endSpec().build());
        await("port change", () -> view.view().get(key) instanceof KubernetesService s
                && s.spec().ports().get(0).port() == 8080);

        ResourceKey slice = ResourceKey.of(ResourceKind.KUBERNETES_ENDPOINT_SLICE, "shop", "api-1");
        k8s.discovery().v1().endpointSlices().inNamespace("shop")
                .resource(TestServices.endpointSlice("api-1", "api", 8080, "10.70.0.2")).create();
        await("endpoint slice", () -> view.view().get(slice) instanceof KubernetesEndpointSlice es
                && es.spec().serviceName().equals("api"));
        k8s.discovery().v1().endpointSlices().inNamespace("shop")
                .resource(TestServices.endpointSlice("api-1", "api", 8080, "10.70.0.3")).update();
        await("endpoint moved", () -> view.view().get(slice) instanceof KubernetesEndpointSlice es
                && es.spec().endpoints().get(0).addresses().equals(java.util.List.of("10.70.0.3")));

        k8s.services().inNamespace("shop").withName("api").delete();
        k8s.discovery().v1().endpointSlices().inNamespace("shop").withName("api-1").delete();
        await("deletion", () -> !view.view().containsKey(key) && !view.view().containsKey(slice));
        assertThat(view.violations()).isEmpty();
    }
}
