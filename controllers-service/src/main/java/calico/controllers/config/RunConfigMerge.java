package calico.controllers.config;

import calico.api.model.ControllerMode;
import calico.api.model.FelixConfigurationEnums;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.model.KubeControllersConfigurationSpec.AutoHostEndpoint;
import calico.api.model.KubeControllersConfigurationSpec.Controllers;
import calico.api.model.KubeControllersConfigurationSpec.NodeController;
import calico.api.model.KubeControllersConfigurationSpec.Reconciler;
import calico.api.model.KubeControllersConfigurationStatus;
import calico.api.model.ObjectMeta;
import calico.api.validation.Durations;
import calico.controllers.node.HostEndpointSettings;
import calico.controllers.node.HostEndpointTemplate;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Merges KubeControllersConfiguration {@code default} with Calico's environment variables, as
 * Calico's kube-controllers do: a variable that is set wins over the resource's field and is listed
 * in {@code status.environmentVars}; {@code status.runningConfig} says what runs. Pure: the same
 * inputs give the same result.
 */
public final class RunConfigMerge {

    private static final Logger LOG = LoggerFactory.getLogger(RunConfigMerge.class);

    /** The only KubeControllersConfiguration the controllers read. */
    public static final String NAME = "default";
    static final Duration DEFAULT_PERIOD = Duration.ofMinutes(5);
    static final Duration DEFAULT_COMPACTION = Duration.ofMinutes(10);
    static final Duration DEFAULT_LEAK_GRACE = Duration.ofMinutes(15);
    /** Calico's kube-controllers metrics port. */
    public static final int DEFAULT_METRICS_PORT = 9094;

    private RunConfigMerge() {
    }

    /** The run configuration and the status that describes it. */
    public record Merged(RunConfig config, KubeControllersConfigurationStatus status) {
    }

    /** {@return the {@code default} resource created when there is none}, with Calico's defaults. */
    public static KubeControllersConfiguration defaults() {
        String period = Durations.format(DEFAULT_PERIOD);
        Controllers controllers = new Controllers(
                new NodeController(period, ControllerMode.Enabled,
                        new AutoHostEndpoint(ControllerMode.Disabled, ControllerMode.Enabled, null),
                        Durations.format(DEFAULT_LEAK_GRACE)),
                new Reconciler(period), new Reconciler(period), new Reconciler(period), new Reconciler(period),
                new KubeControllersConfigurationSpec.LoadBalancerController(KubeControllersConfigurationSpec.AssignIPs.AllServices),
                null);
        return new KubeControllersConfiguration(ObjectMeta.named(NAME), new KubeControllersConfigurationSpec("Info",
                ControllerMode.Enabled, Durations.format(DEFAULT_COMPACTION), DEFAULT_METRICS_PORT, controllers, null));
    }

    /**
     * @param env        the environment's overrides
     * @param spec       the resource's spec (null: an empty one)
     * @param kubernetes whether the datastore is the Kubernetes API (no label sync, no Calico Node deletion)
     */
    public static Merged merge(EnvOverrides env, KubeControllersConfigurationSpec spec, boolean kubernetes) {
        KubeControllersConfigurationSpec s = spec == null
                ? new KubeControllersConfigurationSpec(null, null, null, null, null, null) : spec;
        Controllers c = s.controllers() == null ? new Controllers(null, null, null, null, null, null, null) : s.controllers();
        Map<String, String> envStatus = new HashMap<>(env.given());

        String logSeverity = env.logLevel().orElseGet(() -> {
            if (s.logSeverityScreen() != null && FelixConfigurationEnums.LOG_SEVERITIES.contains(s.logSeverityScreen())) {
                return s.logSeverityScreen();
            }
            if (s.logSeverityScreen() != null) {
                LOG.warn("KubeControllersConfiguration default: unknown logSeverityScreen \"{}\", using Info",
                        s.logSeverityScreen());
            }
            return "Info";
        });

        Set<Controller> enabled = env.enabledControllers().orElseGet(() -> fromSpec(c));
        Map<Controller, Duration> periods = new EnumMap<>(Controller.class);
        Map<Controller, String> statusPeriods = new EnumMap<>(Controller.class);
        for (Controller k : Controller.values()) {
            if (!enabled.contains(k) || k == Controller.NODE || k == Controller.LOAD_BALANCER) {
                continue;
            }
            if (section(c, k) instanceof Reconciler r) {
                periods.put(k, duration(r.reconcilerPeriod(), DEFAULT_PERIOD, k.envName() + ".reconcilerPeriod"));
                statusPeriods.put(k, r.reconcilerPeriod());
            } else {
                periods.put(k, DEFAULT_PERIOD); // enabled by ENABLED_CONTROLLERS without a section in the spec
            }
        }
        env.reconcilerPeriod().ifPresent(d -> periods.replaceAll((k, old) -> {
            statusPeriods.put(k, Durations.format(d));
            return d;
        }));

        Duration compaction = env.compactionPeriod().orElseGet(() ->
                duration(s.etcdV3CompactionPeriod(), DEFAULT_COMPACTION, "etcdV3CompactionPeriod"));
        boolean health = env.healthEnabled().orElse(s.healthChecks() != ControllerMode.Disabled);
        int metricsPort = s.prometheusMetricsPort() == null ? DEFAULT_METRICS_PORT : s.prometheusMetricsPort();
        int debugPort = s.debugProfilePort() == null ? 0 : s.debugProfilePort();

        Optional<RunConfig.NodeConfig> node = Optional.empty();
        NodeController statusNode = null;
        if (enabled.contains(Controller.NODE)) {
            NodeController n = c.node();
            boolean syncLabels;
            if (kubernetes) {
                envStatus.put("DATASTORE_TYPE", "kubernetes");
                syncLabels = false;
            } else {
                syncLabels = env.syncNodeLabels().orElse(n == null || n.syncLabels() != ControllerMode.Disabled);
            }
            AutoHostEndpoint hep = n == null ? null : n.hostEndpoint();
            boolean autoHep = env.autoHostEndpoints().orElse(hep != null && hep.autoCreate() == ControllerMode.Enabled);
            boolean defaultHep = hep == null || hep.createDefaultHostEndpoint() != ControllerMode.Disabled;
            List<HostEndpointTemplate> templates = hep == null ? List.of()
                    : hep.templates().stream().map(HostEndpointTemplate::of).flatMap(Optional::stream).toList();
            String leakText = n == null ? null : n.leakGracePeriod();
            Duration leak = duration(leakText, DEFAULT_LEAK_GRACE, "node.leakGracePeriod");
            Duration nodePeriod = duration(n == null ? null : n.reconcilerPeriod(), DEFAULT_PERIOD, "node.reconcilerPeriod");
            node = Optional.of(new RunConfig.NodeConfig(syncLabels, new HostEndpointSettings(autoHep, defaultHep, templates),
                    !kubernetes,
                    leak.isZero() ? Optional.empty() : Optional.of(leak), nodePeriod));
            statusNode = new NodeController(null, mode(syncLabels),
                    new AutoHostEndpoint(mode(autoHep), mode(defaultHep), hep == null ? null : hep.templates()),
                    Durations.format(leak));
        }

        Optional<KubeControllersConfigurationSpec.AssignIPs> assignIPs = enabled.contains(Controller.LOAD_BALANCER)
                ? Optional.of(c.loadBalancer() == null || c.loadBalancer().assignIPs() == null
                        ? KubeControllersConfigurationSpec.AssignIPs.AllServices : c.loadBalancer().assignIPs())
                : Optional.empty();
        RunConfig config = new RunConfig(logSeverity, health, compaction, metricsPort, debugPort, enabled, node, periods,
                assignIPs);
        Controllers running = new Controllers(statusNode,
                statusReconciler(enabled, Controller.POLICY, statusPeriods),
                statusReconciler(enabled, Controller.WORKLOAD_ENDPOINT, statusPeriods),
                statusReconciler(enabled, Controller.SERVICE_ACCOUNT, statusPeriods),
                statusReconciler(enabled, Controller.NAMESPACE, statusPeriods),
                assignIPs.map(KubeControllersConfigurationSpec.LoadBalancerController::new).orElse(null),
                null);
        KubeControllersConfigurationSpec runningConfig = new KubeControllersConfigurationSpec(logSeverity,
                mode(health), Durations.format(compaction), metricsPort, running, s.debugProfilePort());
        return new Merged(config, new KubeControllersConfigurationStatus(runningConfig, envStatus));
    }

    /** {@return the spec's section of controller {@code k}}, null when the spec leaves it out (it does not run). */
    private static Object section(Controllers c, Controller k) {
        return switch (k) {
            case NODE -> c.node();
            case POLICY -> c.policy();
            case WORKLOAD_ENDPOINT -> c.workloadEndpoint();
            case SERVICE_ACCOUNT -> c.serviceAccount();
            case NAMESPACE -> c.namespace();
            case LOAD_BALANCER -> c.loadBalancer();
        };
    }

    private static Set<Controller> fromSpec(Controllers c) {
        Set<Controller> out = EnumSet.noneOf(Controller.class);
        for (Controller k : Controller.values()) {
            if (section(c, k) != null) {
                out.add(k);
            }
        }
        return out;
    }

    private static Reconciler statusReconciler(Set<Controller> enabled, Controller k, Map<Controller, String> periods) {
        return enabled.contains(k) ? new Reconciler(periods.get(k)) : null;
    }

    /** A field of the resource: written past validation (kubectl on the CRD), so a bad value warns and defaults. */
    private static Duration duration(String text, Duration fallback, String field) {
        if (text == null || text.isEmpty()) {
            return fallback;
        }
        Optional<Duration> d = Durations.parse(text).filter(x -> !x.isNegative());
        if (d.isEmpty()) {
            LOG.warn("KubeControllersConfiguration default: spec.controllers {} \"{}\" is not a duration, using {}", field,
                    text, Durations.format(fallback));
        }
        return d.orElse(fallback);
    }

    private static ControllerMode mode(boolean on) {
        return on ? ControllerMode.Enabled : ControllerMode.Disabled;
    }
}
