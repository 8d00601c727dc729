package calico.node.startup.app;

import calico.node.startup.steps.KubeadmConfig;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code kube-system/kubeadm-config} ConfigMap read through fabric8 with the service's
 * kubeconfig. No cluster, no ConfigMap, or no right to read it: nothing (calico-node warns and
 * goes on to its own default, and so do we).
 */
final class FabricKubeadmConfig implements KubeadmConfig {

    private static final Logger LOG = LoggerFactory.getLogger(FabricKubeadmConfig.class);

    private final Supplier<Optional<Config>> config;

    FabricKubeadmConfig(Supplier<Optional<Config>> config) {
        this.config = config;
    }

    @Override
    public Optional<Map<String, String>> data() {
        Optional<Config> c = config.get();
        if (c.isEmpty()) {
            return Optional.empty();
        }
        try (KubernetesClient client = FabricKubernetesNodes.quickClient(c.get())) {
            ConfigMap map = client.configMaps().inNamespace("kube-system").withName("kubeadm-config").get();
            return map == null || map.getData() == null ? Optional.empty() : Optional.of(Map.copyOf(map.getData()));
        } catch (KubernetesClientException e) {
            LOG.warn("Cannot read kube-system/kubeadm-config ({}); the default pools do not follow kubeadm's podSubnet",
                    e.getMessage());
            return Optional.empty();
        }
    }
}
