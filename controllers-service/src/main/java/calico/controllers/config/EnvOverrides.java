package calico.controllers.config;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Calico's environment variables that override KubeControllersConfiguration {@code default}, parsed
 * once (see {@code ControllersProperties}, which names the variable of a bad value). Empty means the
 * variable is not set, so the resource decides.
 *
 * @param given              the variables as set, verbatim: {@code status.environmentVars}
 * @param logLevel           {@code LOG_LEVEL}, as Calico's severity ({@code Info}, {@code Debug}, ...)
 * @param enabledControllers {@code ENABLED_CONTROLLERS}
 * @param reconcilerPeriod   {@code RECONCILER_PERIOD}, for every enabled controller but node
 * @param compactionPeriod   {@code COMPACTION_PERIOD}
 * @param healthEnabled      {@code HEALTH_ENABLED}
 * @param syncNodeLabels     {@code SYNC_NODE_LABELS} (etcd only: on KDD the labels are the Node's own)
 * @param autoHostEndpoints  {@code AUTO_HOST_ENDPOINTS} ({@code enabled} / {@code disabled})
 */
public record EnvOverrides(Map<String, String> given, Optional<String> logLevel, Optional<Set<Controller>> enabledControllers,
                           Optional<Duration> reconcilerPeriod, Optional<Duration> compactionPeriod,
                           Optional<Boolean> healthEnabled, Optional<Boolean> syncNodeLabels,
                           Optional<Boolean> autoHostEndpoints) {

    public EnvOverrides {
        given = Map.copyOf(given);
        enabledControllers = enabledControllers.map(s -> s.isEmpty() ? Set.<Controller>of() : Set.copyOf(EnumSet.copyOf(s)));
    }

    /** No variable set: the resource decides everything. */
    public static EnvOverrides none() {
        return new EnvOverrides(Map.of(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty());
    }
}
