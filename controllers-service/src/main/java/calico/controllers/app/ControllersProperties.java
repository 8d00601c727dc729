package calico.controllers.app;

import calico.api.validation.Durations;
import calico.controllers.config.Controller;
import calico.controllers.config.EnvOverrides;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * kube-controllers' environment ({@code application.yml} maps Calico's variables), checked once at
 * start-up: a bad value fails naming the property, the variable and the reason, as Calico exits on
 * one. Empty means "not set": KubeControllersConfiguration {@code default} decides.
 *
 * @param logLevel           {@code LOG_LEVEL}: trace, debug, info, warning (warn), error, fatal, panic
 * @param enabledControllers {@code ENABLED_CONTROLLERS}: comma-separated node, policy, namespace (profile),
 *                           workloadendpoint, serviceaccount, loadbalancer
 * @param reconcilerPeriod   {@code RECONCILER_PERIOD}: a Go duration
 * @param compactionPeriod   {@code COMPACTION_PERIOD}: a Go duration
 * @param healthEnabled      {@code HEALTH_ENABLED}: a Go boolean
 * @param syncNodeLabels     {@code SYNC_NODE_LABELS}: a Go boolean
 * @param autoHostEndpoints  {@code AUTO_HOST_ENDPOINTS}: enabled or disabled
 * @param leaderElection     ours: one active replica, chosen by a Lease
 * @param loopStuckAfter     ours ({@code KUBE_CONTROLLERS_LOOP_STUCK_AFTER}, default 3m): a reconcile run lasting
 *                           longer makes its loop neither live nor ready
 */
@ConfigurationProperties(prefix = "controllers")
public record ControllersProperties(String logLevel, String enabledControllers, String reconcilerPeriod,
                                    String compactionPeriod, String healthEnabled, String syncNodeLabels,
                                    String autoHostEndpoints, LeaderElection leaderElection,
                                    @DefaultValue("3m") Duration loopStuckAfter) {

    /**
     * @param enabled       {@code KUBE_CONTROLLERS_LEADER_ELECTION} (ours, default true)
     * @param leaseName     the Lease ({@code calico-kube-controllers})
     * @param leaseNamespace its namespace ({@code POD_NAMESPACE}, else {@code kube-system})
     * @param identity      this replica ({@code POD_NAME}, else {@code HOSTNAME}); empty: a random one
     * @param leaseDuration how long a leader's lease holds without renewal: a standby takes over after it
     * @param renewDeadline how long the leader keeps trying to renew before it stops leading
     * @param retryPeriod   how often candidates try
     */
    public record LeaderElection(@DefaultValue("true") boolean enabled,
                                 @DefaultValue("calico-kube-controllers") String leaseName,
                                 @DefaultValue("kube-system") String leaseNamespace, @DefaultValue("") String identity,
                                 @DefaultValue("10s") Duration leaseDuration, @DefaultValue("7s") Duration renewDeadline,
                                 @DefaultValue("2s") Duration retryPeriod) {
        public LeaderElection {
            if (!(retryPeriod.compareTo(renewDeadline) < 0 && renewDeadline.compareTo(leaseDuration) < 0)) {
                throw new IllegalArgumentException("controllers.leader-election: retry-period (" + retryPeriod
                        + ") < renew-deadline (" + renewDeadline + ") < lease-duration (" + leaseDuration + ") must hold");
            }
        }
    }

    public ControllersProperties {
        leaderElection = leaderElection == null ? new LeaderElection(true, "calico-kube-controllers", "kube-system", "",
                Duration.ofSeconds(10), Duration.ofSeconds(7), Duration.ofSeconds(2)) : leaderElection;
        loopStuckAfter = loopStuckAfter == null ? Duration.ofMinutes(3) : loopStuckAfter;
        if (loopStuckAfter.isNegative() || loopStuckAfter.isZero()) {
            throw new IllegalArgumentException("controllers.loop-stuck-after (KUBE_CONTROLLERS_LOOP_STUCK_AFTER): "
                    + loopStuckAfter + " is not a positive duration");
        }
        toOverrides(logLevel, enabledControllers, reconcilerPeriod, compactionPeriod, healthEnabled, syncNodeLabels,
                autoHostEndpoints); // checked at start-up
    }

    /** {@return the overrides these variables make} */
    public EnvOverrides toOverrides() {
        return toOverrides(logLevel, enabledControllers, reconcilerPeriod, compactionPeriod, healthEnabled, syncNodeLabels,
                autoHostEndpoints);
    }

    @SuppressWarnings("checkstyle:ParameterNumber")
    private static EnvOverrides toOverrides(String logLevel, String enabledControllers, String reconcilerPeriod,
                                            String compactionPeriod, String healthEnabled, String syncNodeLabels,
                                            String autoHostEndpoints) {
        Map<String, String> given = new LinkedHashMap<>();
        put(given, "LOG_LEVEL", logLevel);
        put(given, "ENABLED_CONTROLLERS", enabledControllers);
        put(given, "RECONCILER_PERIOD", reconcilerPeriod);
        put(given, "COMPACTION_PERIOD", compactionPeriod);
        put(given, "HEALTH_ENABLED", healthEnabled);
        put(given, "SYNC_NODE_LABELS", syncNodeLabels);
        put(given, "AUTO_HOST_ENDPOINTS", autoHostEndpoints);
        return new EnvOverrides(given, text(logLevel).map(ControllersProperties::severity),
                text(enabledControllers).map(ControllersProperties::controllers),
                text(reconcilerPeriod).map(v -> duration(v, "reconciler-period (RECONCILER_PERIOD)")),
                text(compactionPeriod).map(v -> duration(v, "compaction-period (COMPACTION_PERIOD)")),
                text(healthEnabled).map(v -> bool(v, "health-enabled (HEALTH_ENABLED)")),
                text(syncNodeLabels).map(v -> bool(v, "sync-node-labels (SYNC_NODE_LABELS)")),
                text(autoHostEndpoints).map(ControllersProperties::autoHep));
    }

    private static void put(Map<String, String> given, String name, String value) {
        text(value).ifPresent(v -> given.put(name, v));
    }

    private static Optional<String> text(String s) {
        return s == null || s.isBlank() ? Optional.empty() : Optional.of(s.trim());
    }

    /** logrus' level names, as Calico parses {@code LOG_LEVEL}, to Calico's severities. */
    private static String severity(String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "trace" -> "Trace";
            case "debug" -> "Debug";
            case "info" -> "Info";
            case "warn", "warning" -> "Warning";
            case "error" -> "Error";
            case "fatal", "panic" -> "Fatal";
            default -> throw new IllegalArgumentException("controllers.log-level (LOG_LEVEL): \"" + v
                    + "\" is not one of trace, debug, info, warning, error, fatal, panic");
        };
    }

    private static Set<Controller> controllers(String v) {
        Set<Controller> out = EnumSet.noneOf(Controller.class);
        for (String name : v.split(",")) {
            if (name.isBlank()) {
                continue;
            }
            if (name.trim().equals("flannelmigration")) {
                throw new IllegalArgumentException("controllers.enabled-controllers (ENABLED_CONTROLLERS): "
                        + "flannelmigration is not supported");
            }
            out.add(Controller.byEnvName(name).orElseThrow(() -> new IllegalArgumentException(
                    "controllers.enabled-controllers (ENABLED_CONTROLLERS): \"" + name.trim()
                            + "\" is not one of node, policy, namespace, profile, workloadendpoint, serviceaccount, loadbalancer")));
        }
        return out;
    }

    private static Duration duration(String v, String setting) {
        return Durations.parse(v).filter(d -> !d.isNegative()).orElseThrow(() -> new IllegalArgumentException(
                "controllers." + setting + ": \"" + v + "\" is not a Go duration such as 5m or 90s"));
    }

    /** Go's {@code strconv.ParseBool}, as Calico reads these variables. */
    private static boolean bool(String v, String setting) {
        return switch (v) {
            case "1", "t", "T", "TRUE", "true", "True" -> true;
            case "0", "f", "F", "FALSE", "false", "False" -> false;
            default -> throw new IllegalArgumentException("controllers." + setting + ": \"" + v
                    + "\" is not a boolean (true, false, 1, 0, t, f)");
        };
    }

    private static boolean autoHep(String v) {
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "enabled" -> true;
            case "disabled" -> false;
            default -> throw new IllegalArgumentException("controllers.auto-host-endpoints (AUTO_HOST_ENDPOINTS): \"" + v
                    + "\" is not enabled or disabled");
        };
    }
}
