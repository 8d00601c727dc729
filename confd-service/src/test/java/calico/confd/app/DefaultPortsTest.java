package calico.confd.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;

/**
 * No two components listen on the same port by default: under {@code ./calico up} they share a host, and
 * in a cluster confd, felix and typha share the node's network. Every service's real {@code application.yml}
 * is bound as the service binds it, with no variable set (so every {@code ${VAR:default}} gives its
 * default); confd, a plain main, reads its variables in {@link ConfdConfiguration}, so its defaults are
 * what that reads from an environment without them; felix, a plain main too, says its defaults in its
 * FelixConfiguration's source. Kept in confd's tests because confd is the component that clashed (with felix, then with
 * kube-controllers' metrics port).
 */
class DefaultPortsTest {

    /** Each service's listening ports: what the port is (with its variable) → the property holding it. */
    private static final Map<String, Map<String, String>> PORTS = services();

    private static Map<String, Map<String, String>> services() {
        Map<String, Map<String, String>> s = new LinkedHashMap<>();
        s.put("typha-service", Map.of("typha (TYPHA_SERVERPORT)", "typha.server-port",
                "typha health (TYPHA_HEALTHPORT)", "calico.health.port", "typha admin (TYPHA_ADMINPORT)", "server.port",
                "typha metrics (TYPHA_PROMETHEUSMETRICSPORT)", "typha.prometheus-metrics-port"));
        s.put("controllers-service", Map.of("kube-controllers health (KUBE_CONTROLLERS_HEALTHPORT)", "calico.health.port",
                "kube-controllers admin (KUBE_CONTROLLERS_ADMINPORT)", "server.port"));
        s.put("apiserver-service", Map.of("apiserver (secure port)", "server.port",
                "apiserver health (HEALTH_PORT)", "calico.health.port"));
        s.put("goldmane-service", Map.of("goldmane (PORT)", "goldmane.port", "goldmane health (HEALTH_PORT)",
                "calico.health.port", "goldmane admin (ADMIN_PORT)", "server.port"));
        s.put("whisker-backend", Map.of("whisker-backend (PORT)", "server.port",
                "whisker-backend health (HEALTH_PORT)", "calico.health.port"));
        return s;
    }

    /** Set in KubeControllersConfiguration {@code default}, not in a file: Calico's default. */
    private static final int KUBE_CONTROLLERS_METRICS = 9094;

    @Test
    void noTwoComponentsListenOnTheSamePortByDefault() throws IOException {
        Map<String, Integer> all = new TreeMap<>();
        for (var service : PORTS.entrySet()) {
            Binder b = binder(new FileSystemResource(Path.of("..", service.getKey(), "src/main/resources/application.yml")));
            service.getValue().forEach((what, property) -> all.put(what, b.bind(property, Integer.class)
                    .orElseThrow(() -> new AssertionError(service.getKey() + ": no default for " + property))));
        }
        all.putAll(felixPorts());
        ConfdConfiguration confd = ConfdConfiguration.fromVariables(Map.of("NODENAME", "node-1"));
        all.put("confd health (CONFD_HEALTHPORT)", confd.health().port());
        all.put("confd admin (CONFD_ADMINPORT)", confd.admin().port());
        all.put("kube-controllers metrics (KubeControllersConfiguration prometheusMetricsPort)", KUBE_CONTROLLERS_METRICS);

        assertThat(all).as("Calico's own defaults").containsEntry("felix health (FELIX_HEALTHPORT)", 9099)
                .containsEntry("typha health (TYPHA_HEALTHPORT)", 9098).containsEntry("typha (TYPHA_SERVERPORT)", 5473)
                .containsEntry("felix metrics (FELIX_PROMETHEUSMETRICSPORT)", 9091)
                .containsEntry("typha metrics (TYPHA_PROMETHEUSMETRICSPORT)", 9093);
        Map<Integer, List<String>> byPort = new TreeMap<>();
        all.forEach((what, port) -> byPort.computeIfAbsent(port, p -> new ArrayList<>()).add(what));
        assertThat(byPort.entrySet()).as("ports listened on by more than one component").filteredOn(
                e -> e.getValue().size() > 1).isEmpty();
    }

    /**
     * felix's ports (a plain main; felix's tests depend on confd's, not the other way): the defaults of the
     * {@code v.port("FELIX_…", default)} reads in its FelixConfiguration, a constant of that class or a number.
     */
    private static Map<String, Integer> felixPorts() throws IOException {
        String source = java.nio.file.Files.readString(Path.of("..",
                "felix-service/src/main/java/calico/felix/app/FelixConfiguration.java"));
        Map<String, String> names = Map.of("FELIX_HEALTHPORT", "felix health (FELIX_HEALTHPORT)", "FELIX_ADMINPORT",
                "felix admin (FELIX_ADMINPORT)", "FELIX_PROMETHEUSMETRICSPORT", "felix metrics (FELIX_PROMETHEUSMETRICSPORT)");
        Map<String, Integer> ports = new TreeMap<>();
        var m = java.util.regex.Pattern.compile("v\\.port\\(\"(FELIX_[A-Z]+)\",\\s*(\\w+)\\)").matcher(source);
        while (m.find()) {
            String value = m.group(2);
            if (!value.matches("\\d+")) {
                var constant = java.util.regex.Pattern.compile(value + " = (\\d+);").matcher(source);
                assertThat(constant.find()).as("felix's constant " + value).isTrue();
                value = constant.group(1);
            }
            if (names.containsKey(m.group(1))) {
                ports.put(names.get(m.group(1)), Integer.parseInt(value));
            }
        }
        assertThat(ports).as("felix's ports in FelixConfiguration").hasSize(names.size());
        return ports;
    }

    /** The file as the only property source: placeholders fall back to their defaults. */
    private static Binder binder(Resource yml) throws IOException {
        assertThat(yml.exists()).as(yml.getDescription()).isTrue();
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
        env.getPropertySources().remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
        new YamlPropertySourceLoader().load(yml.getDescription(), yml).forEach(env.getPropertySources()::addLast);
        return Binder.get(env);
    }
}
