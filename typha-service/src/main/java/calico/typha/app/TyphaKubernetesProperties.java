package calico.typha.app;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationUnit;

/**
 * Where typha finds its own Kubernetes service, for {@code TYPHA_CONNECTIONREBALANCINGMODE=kubernetes};
 * names and defaults as Calico's typha.
 *
 * @param k8sServiceName  the typha service whose endpoints count the replicas (TYPHA_K8SSERVICENAME, calico-typha)
 * @param k8sNamespace    its namespace (TYPHA_K8SNAMESPACE, kube-system)
 * @param k8sPortName     the service port that is typha's (TYPHA_K8SPORTNAME, calico-typha)
 * @param k8sPollInterval how often the replica and node counts are read again
 *                        (TYPHA_K8SSERVICEPOLLINTERVALSECS, 30)
 * @param maxConnectionsLowerLimit the computed target never goes below this (TYPHA_MAXCONNECTIONSLOWERLIMIT, 400)
 */
@ConfigurationProperties(prefix = "typha")
public record TyphaKubernetesProperties(
        @DefaultValue("calico-typha") String k8sServiceName,
        @DefaultValue("kube-system") String k8sNamespace,
        @DefaultValue("calico-typha") String k8sPortName,
        @DefaultValue("30") @DurationUnit(ChronoUnit.SECONDS) Duration k8sPollInterval,
        @DefaultValue("400") int maxConnectionsLowerLimit) {

    public TyphaKubernetesProperties {
        // Absent: Calico's default; set but blank: kept blank, refused where it is needed.
        k8sServiceName = k8sServiceName == null ? "calico-typha" : k8sServiceName.trim();
        k8sNamespace = k8sNamespace == null || k8sNamespace.isBlank() ? "kube-system" : k8sNamespace.trim();
        k8sPortName = k8sPortName == null || k8sPortName.isBlank() ? "calico-typha" : k8sPortName.trim();
        if (k8sPollInterval == null || k8sPollInterval.isNegative() || k8sPollInterval.isZero()) {
            throw new IllegalArgumentException("typha.k8s-poll-interval (TYPHA_K8SSERVICEPOLLINTERVALSECS): must be "
                    + "positive, got " + k8sPollInterval);
        }
        if (maxConnectionsLowerLimit < 1) {
            throw new IllegalArgumentException("typha.max-connections-lower-limit (TYPHA_MAXCONNECTIONSLOWERLIMIT): "
                    + "must be at least 1, got " + maxConnectionsLowerLimit);
        }
    }

    /**
     * {@return Calico's per-replica connection target} With one replica (or none known) there is
     * nothing to balance: 0. Otherwise an even share over one replica fewer (so that losing one,
     * e.g. in a rolling update, moves nobody), plus 20%, per syncer type, kept between the lower
     * limit and {@code upperLimit}.
     */
    int target(int clients, int replicas, int syncerTypes, int upperLimit) {
        if (replicas <= 1 || clients <= 0) {
            return 0;
        }
        int share = syncerTypes * (1 + clients * 120 / (replicas - 1) / 100);
        return Math.min(upperLimit, Math.max(maxConnectionsLowerLimit, share));
    }
}
