package calico.felix.app;

import calico.felix.calc.ConfigResolver;
import calico.felix.calc.FelixSettings;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;

/**
 * The {@code FELIX_*} variables the calculation graph reads as its highest-priority config
 * layer, gathered from every property source of the Spring environment (the process
 * environment in production, test properties in tests). Constructing it validates them with
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

    /** {@return the FELIX_* entries visible in {@code environment}}, highest-precedence source winning. */
    public static FelixEnvironment from(ConfigurableEnvironment environment) {
        Map<String, String> vars = new TreeMap<>();
        for (PropertySource<?> source : environment.getPropertySources()) {
            if (source instanceof EnumerablePropertySource<?> e) {
                for (String name : e.getPropertyNames()) {
                    if (name.startsWith("FELIX_") && !vars.containsKey(name)) {
                        Object value = e.getProperty(name);
                        if (value != null) {
                            vars.put(name, value.toString());
                        }
                    }
                }
            }
        }
        return new FelixEnvironment(vars);
    }

    public Map<String, String> variables() {
        return variables;
    }
}
