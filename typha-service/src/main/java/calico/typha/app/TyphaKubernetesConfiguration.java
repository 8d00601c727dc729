package calico.typha.app;

import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.OwnedKubernetesClient;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Lister;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.cloud.kubernetes.commons.discovery.KubernetesDiscoveryProperties;
import org.springframework.cloud.kubernetes.fabric8.discovery.Fabric8DiscoveryClient;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Kubernetes side of rebalancing, and nothing else: present only with
 * TYPHA_CONNECTIONREBALANCINGMODE=kubernetes (then TYPHA_K8SSERVICENAME, default calico-typha as
 * in Calico, names the service). Spring Cloud Kubernetes' own auto-configurations are excluded in
 * {@code application.yml} (they would start a client and informers over every namespace inside
 * any pod); here one Fabric8 discovery client is built, watching services and endpoints in
 * TYPHA_K8SNAMESPACE only, with TYPHA_K8SPORTNAME as its primary port. The Kubernetes client is
 * the context's if one is defined (a test's mock), otherwise one built from typha's datastore
 * settings (KUBECONFIG, K8S_API_ENDPOINT), else Fabric8's default (in-cluster service account, or
 * ~/.kube/config).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${typha.connection-rebalancing-mode:none}'.trim().equalsIgnoreCase('kubernetes')")
class TyphaKubernetesConfiguration {

    /** The context's Kubernetes client if there is one, else one from typha's datastore settings, closed with the context. */
    @Bean
    OwnedKubernetesClient typhaKubernetesClient(ObjectProvider<KubernetesClient> given, DatastoreProperties datastore) {
        return OwnedKubernetesClient.of(given.getIfAvailable(), datastore::kubernetesClientConfig);
    }

    @Bean
    Fabric8DiscoveryClient typhaDiscoveryClient(OwnedKubernetesClient k, TyphaKubernetesProperties p) {
        if (p.k8sServiceName().isEmpty()) {
            throw new IllegalArgumentException("typha.k8s-service-name (TYPHA_K8SSERVICENAME): required with "
                    + "TYPHA_CONNECTIONREBALANCINGMODE=kubernetes (the typha service whose endpoints count the replicas)");
        }
        KubernetesClient client = k.client();
        String ns = p.k8sNamespace();
        SharedIndexInformer<Service> services = client.services().inNamespace(ns).inform();
        SharedIndexInformer<Endpoints> endpoints = client.endpoints().inNamespace(ns).inform();
        KubernetesDiscoveryProperties d = KubernetesDiscoveryProperties.DEFAULT;
        KubernetesDiscoveryProperties props = new KubernetesDiscoveryProperties(true, false, Set.of(ns), true,
                d.cacheLoadingTimeoutSeconds(), false, null, d.knownSecurePorts(), d.serviceLabels(),
                p.k8sPortName(), d.metadata(), d.order(), false, false, null);
        return new Fabric8DiscoveryClient(client, List.of(new Lister<>(services.getIndexer(), ns)),
                List.of(new Lister<>(endpoints.getIndexer(), ns)), List.of(services), List.of(endpoints), props,
                s -> true);
    }

    @Bean
    KubernetesRebalanceTarget kubernetesRebalanceTarget(Fabric8DiscoveryClient discovery, OwnedKubernetesClient k,
                                                        TyphaKubernetesProperties p, TyphaProperties config) {
        return new KubernetesRebalanceTarget(discovery, k.client(), p, config);
    }
}
