package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * Status of a {@link KubeControllersConfiguration}: the effective configuration and the
 * environment variables that changed it.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record KubeControllersConfigurationStatus(KubeControllersConfigurationSpec runningConfig,
                                                 Map<String, String> environmentVars) {
    public KubeControllersConfigurationStatus {
        environmentVars = environmentVars == null ? Map.of() : Map.copyOf(environmentVars);
    }
}
