package calico.felix.app;

import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.OwnedKubernetesClient;
import calico.libcalico.typha.TyphaDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Random;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Typha discovery from Kubernetes, present only when FELIX_TYPHAK8SSERVICENAME is set (an
 * explicit FELIX_TYPHAADDR still wins, as in Calico). The Kubernetes client is the context's if
 * one is defined (a test's mock server), otherwise one built from felix's datastore settings
 * ({@code KUBECONFIG}, {@code K8S_API_ENDPOINT}), else Fabric8's default: the pod's service
 * account inside a cluster, or {@code ~/.kube/config}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnSetting(name = "felix.typha-k8s-service-name", matches = "(?s).*\\S.*")
class FelixTyphaConfiguration {

    /** The context's Kubernetes client if there is one, else one from felix's datastore settings, closed with the context. */
    @Bean
    OwnedKubernetesClient felixKubernetesClient(ObjectProvider<KubernetesClient> given, DatastoreProperties datastore) {
        return OwnedKubernetesClient.of(given.getIfAvailable(), datastore::kubernetesClientConfig);
    }

    @Bean
    TyphaDiscovery typhaDiscovery(OwnedKubernetesClient k, FelixTyphaProperties typha, FelixProperties felix) {
        return new TyphaDiscovery(k.client(), typha.typhaK8sNamespace(), typha.typhaK8sServiceName().trim(),
                felix.hostname(), new Random(), "felix.typha-k8s-service-name (FELIX_TYPHAK8SSERVICENAME)");
    }
}
