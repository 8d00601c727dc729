package calico.felix.app;

import calico.felix.calc.ConfigResolver;
import calico.felix.calc.FelixSettings;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code FELIX_*} variables the calculation graph reads as its highest-priority config
 * layer, taken from felix's variables (the process environment and {@code --FELIX_NAME=value}
 * arguments in production, a test's map in tests). Constructing it validates them with
 * {@link ConfigResolver#validateEnvironment}: an invalid value fails start-up naming the variable,
 * where Calico's felix would otherwise silently fall back to the next source.
 */
public final class FelixEnvironment {

    private final Map<String, String> variables;
    private final FelixSettings settings;

    public FelixEnvironment(Map<String, String> variables) {
        this.variables = Map.copyOf(new TreeMap<>(variables));
        List<String> problems = ConfigResolver.validateEnvironment(this.variables);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("invalid Felix environment: " + String.join("; ", problems));
        }
        this.settings = ConfigResolver.environmentSettings(this.variables);
    }

    /**
     * {@return the typed settings these variables give over Calico's defaults}: what felix runs
     * with before it reads FelixConfiguration (e.g. {@code logSeverityScreen} at start-up); the
     * graph's {@code ConfigUpdate} carries the fully resolved ones.
     */
    public FelixSettings settings() {
        return settings;
    }

    /** {@return the FELIX_* entries of {@code variables}} */
    public static FelixEnvironment from(Map<String, String> variables) {
        Map<String, String> felix = new TreeMap<>();
        variables.forEach((name, value) -> {
            if (name.startsWith("FELIX_") && value != null) {
                felix.put(name, value);
            }
        });
        return new FelixEnvironment(felix);
    }

    public Map<String, String> variables() {
        return variables;
    }
}
