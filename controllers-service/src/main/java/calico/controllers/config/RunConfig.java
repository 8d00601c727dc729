package calico.controllers.config;

import calico.api.model.KubeControllersConfigurationSpec.AssignIPs;
import calico.controllers.node.HostEndpointSettings;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the controllers run with: KubeControllersConfiguration {@code default} merged with the
 * environment ({@link RunConfigMerge}). A controller absent from {@code enabled} does not run.
 *
 * @param logSeverity       Calico's severity ({@code Info}, ...)
 * @param healthEnabled     whether health reporting counts
 * @param compactionPeriod  etcd compaction period (0: none)
 * @param prometheusPort    the metrics port ({@code /metrics}); 0 serves none
 * @param debugProfilePort  the debug profile port ({@code /debug/pprof/}); 0 serves none
 * @param enabled           the controllers that run
 * @param node              the node controller's settings, present exactly when it is enabled
 * @param reconcilerPeriods the reconciler period of each other enabled controller
 * @param loadBalancer      which Services get LoadBalancer addresses, present exactly when that controller is enabled
 */
public record RunConfig(String logSeverity, boolean healthEnabled, Duration compactionPeriod, int prometheusPort,
                        int debugProfilePort, Set<Controller> enabled, Optional<NodeConfig> node,
                        Map<Controller, Duration> reconcilerPeriods, Optional<AssignIPs> loadBalancer) {

    public RunConfig {
        enabled = Set.copyOf(enabled);
        reconcilerPeriods = Map.copyOf(reconcilerPeriods);
        if (node.isPresent() != enabled.contains(Controller.NODE)) {
            throw new IllegalArgumentException("node: settings must be present exactly when the node controller is enabled");
        }
        if (loadBalancer.isPresent() != enabled.contains(Controller.LOAD_BALANCER)) {
            throw new IllegalArgumentException("loadBalancer: present exactly when the loadbalancer controller is enabled");
        }
    }

    /**
     * The node controller's settings.
     *
     * @param syncLabels        copy Kubernetes node labels onto Calico Nodes (etcd only)
     * @param hostEndpoints     which host endpoints the controller keeps ({@code hostEndpoint})
     * @param deleteNodes       delete Calico Nodes whose Kubernetes Node is gone (etcd: on KDD they are one object)
     * @param leakGracePeriod   how long an allocation must look leaked before it is released; empty: IPAM GC off
     * @param reconcilerPeriod  how often the controller reconciles without an event
     */
    public record NodeConfig(boolean syncLabels, HostEndpointSettings hostEndpoints, boolean deleteNodes,
                             Optional<Duration> leakGracePeriod, Duration reconcilerPeriod) {
    }
}
