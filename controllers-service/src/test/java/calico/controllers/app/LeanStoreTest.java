package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

/**
 * The informer stores keep what the runs read and drop the rest: a run sees the same view of a restored
 * object as of the whole one (so a field a view starts to read and the store drops fails here).
 */
class LeanStoreTest {

    private final KubernetesSerialization json = new KubernetesSerialization();

    @Test
    void aRestoredPodGivesTheSameViewWithoutItsContainersOrManagedFields() {
        Pod pod = new PodBuilder().withNewMetadata().withNamespace("ns1").withName("web-0").withResourceVersion("42")
                .addToLabels("app", "web").addToAnnotations(KubernetesPods.POD_IP, "10.0.0.5/32")
                .addToAnnotations(KubernetesPods.POD_IPS, "10.0.0.5/32,fd00::5/128")
                .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubectl").withOperation("Apply").build())
                .endMetadata()
                .withNewSpec().withNodeName("node-a").addNewContainer().withName("c").withImage("nginx").endContainer()
                .endSpec()
                .withNewStatus().withPhase("Succeeded").withPodIP("10.0.0.6").addNewPodIP("10.0.0.6").addNewPodIP("fd00::6")
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
        ItemStore<Pod> store = LeanStore.pods(json);
        String key = store.getKey(pod);
        store.put(key, pod);

        Pod restored = store.get(key);

        assertThat(KubernetesPods.view(restored)).isEqualTo(KubernetesPods.view(pod));
        assertThat(KubernetesPods.view(restored).ips()).hasSize(4);
        assertThat(restored.getMetadata().getResourceVersion()).isEqualTo("42");
        assertThat(restored.getSpec().getContainers()).isNullOrEmpty();
        assertThat(restored.getMetadata().getManagedFields()).isNullOrEmpty();
        assertThat(restored.getMetadata().getLabels()).isNullOrEmpty();
        assertThat(restored.getStatus().getConditions()).isNullOrEmpty();
    }

    @Test
    void aRestoredServiceGivesTheSameViewWithoutItsPortsOrSelector() {
        Service service = new ServiceBuilder().withNewMetadata().withNamespace("ns1").withName("lb").withUid("u-1")
                .withResourceVersion("7").addToAnnotations("projectcalico.org/ipv4pools", "[\"lb-pool\"]").endMetadata()
                .withNewSpec().withType("LoadBalancer").withIpFamilies("IPv4", "IPv6").addToSelector("app", "web")
                .addNewPort().withPort(80).endPort().endSpec()
                .withNewStatus().withNewLoadBalancer().addNewIngress().withIp("10.61.0.1").endIngress().endLoadBalancer()
                .endStatus().build();
        ItemStore<Service> store = LeanStore.services(json);
        String key = store.getKey(service);
        store.put(key, service);

        Service restored = store.get(key);

        assertThat(KubernetesServices.view(restored)).isEqualTo(KubernetesServices.view(service));
        assertThat(KubernetesServices.view(restored).ingress()).containsExactly("10.61.0.1");
        assertThat(restored.getSpec().getPorts()).isNullOrEmpty();
        assertThat(restored.getSpec().getSelector()).isNullOrEmpty();
    }
}
