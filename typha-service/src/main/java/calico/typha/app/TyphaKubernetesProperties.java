package calico.typha.app;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationUnit;

/**
 * Where typha finds its own Kubernetes service, for {@code TYPHA_CONNECTIONREBALANCINGMODE=kubernetes}.
 *
 * @param k8sServiceName  the typha service whose endpoints count the replicas (TYPHA_K8SSERVICENAME)
 * @param k8sNamespace    its namespace (TYPHA_K8SNAMESPACE, kube-system)
 * @param k8sPortName     the service port that is typha's (TYPHA_K8SPORTNAME, calico-typha)
 * @param k8sPollInterval how often the replica and node counts are read again (ours; seconds)
 */
@ConfigurationProperties(prefix = "typha")
public record TyphaKubernetesProperties(
        @DefaultValue("") String k8sServiceName,
        @DefaultValue("kube-system") String k8sNamespace,
        @DefaultValue("calico-typha") String k8sPortName,
        @DefaultValue("10") @DurationUnit(ChronoUnit.SECONDS) Duration k8sPollInterval) {

    public TyphaKubernetesProperties {
        k8sServiceName = k8sServiceName == null ? "" : k8sServiceName.trim();
        k8sNamespace = k8sNamespace == null || k8sNamespace.isBlank() ? "kube-system" : k8sNamespace.trim();
        k8sPortName = k8sPortName == null ? "" : k8sPortName.trim();
        if (k8sPollInterval == null || k8sPollInterval.isNegative() || k8sPollInterval.isZero()) {
            throw new IllegalArgumentException("typha.k8s-poll-interval: must be positive, got " + k8sPollInterval);
        }
    }

    /** {@return whether a service name is set (the only switch for the Kubernetes discovery beans)} */
    public boolean enabled() {
        return !k8sServiceName.isEmpty();
    }
}
