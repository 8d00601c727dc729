package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * Spec of the {@link KubeControllersConfiguration} {@code default}: logging, health,
 * metrics and which controllers run. A controller whose entry is absent is disabled.
 * Durations are Go duration strings ("5m").
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record KubeControllersConfigurationSpec(
        String logSeverityScreen,
        ControllerMode healthChecks,
        @JsonProperty("etcdV3CompactionPeriod") String etcdV3CompactionPeriod,
        Integer prometheusMetricsPort,
        Controllers controllers,
        Integer debugProfilePort) {

    /** The controllers to run and their settings; {@code null} disables one. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Controllers(
            NodeController node,
            Reconciler policy,
            Reconciler workloadEndpoint,
            Reconciler serviceAccount,
            Reconciler namespace,
            LoadBalancerController loadBalancer,
            PolicyMigration policyMigration) {
    }

    /** A controller whose only setting is how often it reconciles with the datastore. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Reconciler(String reconcilerPeriod) {
    }

    /**
     * The node controller: cleans up after deleted nodes, copies node labels, garbage-collects
     * leaked IPs after {@code leakGracePeriod}, optionally creates host endpoints.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record NodeController(
            String reconcilerPeriod,
            ControllerMode syncLabels,
            AutoHostEndpoint hostEndpoint,
            String leakGracePeriod) {
    }

    /** Automatic host endpoints: one per node ({@code autoCreate}) and/or per template. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record AutoHostEndpoint(
            ControllerMode autoCreate,
            ControllerMode createDefaultHostEndpoint,
            List<Template> templates) {
        public AutoHostEndpoint {
            templates = templates == null ? List.of() : List.copyOf(templates);
        }
    }

    /** Creates host endpoints for the selected nodes' interfaces matching a pattern or CIDRs. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Template(
            String generateName,
            @JsonProperty("interfaceCIDRs") List<String> interfaceCIDRs,
            String interfacePattern,
            Map<String, String> labels,
            String nodeSelector) {
        public Template {
            interfaceCIDRs = interfaceCIDRs == null ? List.of() : List.copyOf(interfaceCIDRs);
            labels = labels == null ? Map.of() : Map.copyOf(labels);
        }
    }

    /** The LoadBalancer IPAM controller. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record LoadBalancerController(@JsonProperty("assignIPs") AssignIPs assignIPs) {
    }

    /** Which LoadBalancer services get addresses from Calico IPAM. */
    public enum AssignIPs {
        AllServices, RequestedServicesOnly
    }

    /** The migration of old-style policy names; Calico spells its switch {@code enabled}. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PolicyMigration(ControllerMode enabled) {
    }
}
