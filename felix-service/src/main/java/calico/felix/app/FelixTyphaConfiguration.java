package calico.felix.app;

import calico.libcalico.typha.TyphaDiscovery;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.Random;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Typha discovery from Kubernetes, present only when FELIX_TYPHAK8SSERVICENAME is set (an
 * explicit FELIX_TYPHAADDR still wins, as in Calico). The Kubernetes client is the context's if
 * one is defined (a test's mock server), otherwise Fabric8's default: the pod's service account
 * inside a cluster, or the kubeconfig.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("!'${felix.typha-k8s-service-name:}'.trim().isEmpty()")
class FelixTyphaConfiguration {

    /** A client this configuration built (closed with the context); one from elsewhere is left alone. */
    record FelixKubernetesClient(KubernetesClient client, boolean owned) implements AutoCloseable {
        @Override
        public void close() {
            if (owned) {
                client.close();
            }
        }
    }

    @Bean
    FelixKubernetesClient felixKubernetesClient(ObjectProvider<KubernetesClient> given) {
        KubernetesClient c = given.getIfAvailable();
        return c != null ? new FelixKubernetesClient(c, false)
                : new FelixKubernetesClient(new KubernetesClientBuilder().build(), true);
    }

    @Bean
    TyphaDiscovery typhaDiscovery(FelixKubernetesClient k, FelixTyphaProperties typha, FelixProperties felix) {
        return new TyphaDiscovery(k.client(), typha.typhaK8sNamespace(), typha.typhaK8sServiceName().trim(),
                felix.hostname(), new Random(), "felix.typha-k8s-service-name (FELIX_TYPHAK8SSERVICENAME)");
    }
}
