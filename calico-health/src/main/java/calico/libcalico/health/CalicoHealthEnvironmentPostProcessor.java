package calico.libcalico.health;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Adds the Actuator defaults that make a service answer probes the Calico way, as the
 * lowest-precedence property source, so that any property a service or user sets wins:
 *
 * <ul>
 *   <li>always: probes enabled; {@code health,info,prometheus} exposed over HTTP;</li>
 *   <li>unless {@code calico.health.enabled=false}: the management server on
 *       {@code calico.health.host}:{@code calico.health.port}; health groups {@code liveness}
 *       and {@code readiness} made of the aggregator's indicators only, with details, at the
 *       additional paths {@code /liveness} and {@code /readiness}.</li>
 * </ul>
 *
 * When the health port is the service's own {@code server.port}, there is no separate
 * management server: the paths go on {@code server:} and {@code server.address} applies (Boot
 * maps {@code management:} paths only on a separate management server, and refuses a
 * management address without one). Registered in {@code META-INF/spring.factories}.
 */
final class CalicoHealthEnvironmentPostProcessor implements EnvironmentPostProcessor {

    static final String SOURCE_NAME = "calicoHealthDefaults";

    private static final String PREFIX = CalicoHealthProperties.PREFIX;
    private static final int DEFAULT_SERVER_PORT = 8080;

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        defaults.put("management.endpoint.health.probes.enabled", "true");
        defaults.put("management.endpoints.web.exposure.include", "health,info,prometheus");
        if (environment.getProperty(PREFIX + ".enabled", Boolean.class, true)) {
            boolean separate = separateManagementServer(environment);
            if (separate) {
                defaults.put("management.server.port", "${" + PREFIX + ".port:" + CalicoHealthProperties.DEFAULT_PORT + "}");
                defaults.put("management.server.address", "${" + PREFIX + ".host:" + CalicoHealthProperties.DEFAULT_HOST + "}");
            }
            String namespace = separate ? "management" : "server";
            group(defaults, "liveness", "calicoLiveness", namespace);
            group(defaults, "readiness", "calicoReadiness", namespace);
        }
        environment.getPropertySources().remove(SOURCE_NAME);
        environment.getPropertySources().addLast(new MapPropertySource(SOURCE_NAME, defaults));
    }

    private static void group(Map<String, Object> defaults, String group, String indicator, String namespace) {
        String key = "management.endpoint.health.group." + group;
        defaults.put(key + ".include", indicator);
        defaults.put(key + ".show-details", "always");
        defaults.put(key + ".additional-path", namespace + ":/" + group);
    }

    /** Whether the management server will run on its own port (Boot's "DIFFERENT" port type); 0 means a random, so different, port. */
    private static boolean separateManagementServer(ConfigurableEnvironment environment) {
        Integer managementPort = environment.getProperty("management.server.port", Integer.class);
        if (managementPort == null) {
            managementPort = environment.getProperty(PREFIX + ".port", Integer.class,
                    Integer.valueOf(CalicoHealthProperties.DEFAULT_PORT));
        }
        Integer serverPort = environment.getProperty("server.port", Integer.class, DEFAULT_SERVER_PORT);
        return managementPort == 0 || !Objects.equals(managementPort, serverPort);
    }
}
