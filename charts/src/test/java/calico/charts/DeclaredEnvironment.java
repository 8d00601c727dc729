package calico.charts;

import calico.api.model.FelixConfigurationEnums;
import calico.api.model.FelixConfigurationSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.lang.reflect.RecordComponent;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The environment variables each service of the repository really reads, taken from the
 * service's own sources: every {@code ${NAME...}} placeholder of its {@code application.yml},
 * and, for the CNI daemon (no Spring), the upper-case string literals of the classes that read
 * its environment; confd and felix (no Spring either) name what they read themselves
 * ({@code ConfdConfiguration.variablesRead}, {@code FelixConfiguration.variablesRead}), felix's
 * {@code FELIX_<field>} for each FelixConfiguration field (its FelixEnvironment layer) on top.
 */
final class DeclaredEnvironment {

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z][A-Z0-9_]*)[:}]");
    private static final Pattern LITERAL = Pattern.compile("\"([A-Z][A-Z0-9_]+)\"");

    private static final String CONFD = "confd-service";
    private static final String FELIX = "felix-service";

    /** Not a module: install-cni runs the chart's own script, which declares what it reads as ${NAME}. */
    static final String INSTALL_SCRIPT = "charts/calico/templates/calico-node-config.yaml";

    /** Each chart container → the module whose process it runs. */
    static final Map<String, String> MODULE_OF_CONTAINER = Map.ofEntries(
            Map.entry("felix", "felix-service"),
            Map.entry("confd", "confd-service"),
            Map.entry("node-startup", "node-startup"),
            Map.entry("allocate-tunnel-addrs", "node-startup"),
            Map.entry("cni-daemon", "cni-plugin"),
            Map.entry("calico-typha", "typha-service"),
            Map.entry("calico-kube-controllers", "controllers-service"),
            Map.entry("calico-apiserver", "apiserver-service"),
            Map.entry("goldmane", "goldmane-service"),
            Map.entry("whisker", "whisker-backend"),
            Map.entry("install-cni", INSTALL_SCRIPT));

    /**
     * Each module's names and health port, read once: every rendered variant checks every
     * container against them, and the sources do not change under a test run.
     */
    private static final Map<String, Set<String>> DECLARED = MODULE_OF_CONTAINER.values().stream().distinct()
            .collect(Collectors.toUnmodifiableMap(m -> m, DeclaredEnvironment::declared));
    private static final Map<String, HealthPort> HEALTH_PORTS = java.util.stream.Stream.concat(
            MODULE_OF_CONTAINER.values().stream().distinct()
                    .filter(m -> !m.equals(INSTALL_SCRIPT) && Files.exists(applicationYml(m)))
                    .flatMap(m -> readHealthPort(m).stream().map(h -> Map.entry(m, h))),
            java.util.stream.Stream.of(Map.entry(CONFD, new HealthPort("CONFD_HEALTHPORT",
                    calico.confd.app.ConfdConfiguration.DEFAULT_HEALTH_PORT)), Map.entry(FELIX, new HealthPort(
                    "FELIX_HEALTHPORT", calico.felix.app.FelixConfiguration.DEFAULT_HEALTH_PORT))))
            .collect(Collectors.toUnmodifiableMap(Map.Entry::getKey, Map.Entry::getValue));

    private DeclaredEnvironment() {
    }

    /** {@return the environment variables {@code module} (one of {@link #MODULE_OF_CONTAINER}'s) reads} */
    static Set<String> of(String module) {
        Set<String> names = DECLARED.get(module);
        if (names == null) {
            throw new AssertionError(module + " is not a module of " + MODULE_OF_CONTAINER.keySet());
        }
        return names;
    }

    private static Set<String> declared(String module) {
        Path root = Helm.ROOT;
        SortedSet<String> names = new TreeSet<>();
        if (module.equals(INSTALL_SCRIPT)) {
            String config = read(root.resolve(INSTALL_SCRIPT));
            collect(PLACEHOLDER, config.substring(config.indexOf("install.sh:")), names);
            return Collections.unmodifiableSortedSet(names);
        }
        if (module.equals("cni-plugin")) {
            for (String source : new String[] {
                    "cni-plugin/src/main/java/calico/cni/Main.java",
                    "libcalico/src/main/java/calico/libcalico/datastore/config/DatastoreConfig.java",
                    "libcalico/src/main/java/calico/libcalico/datastore/etcd/EtcdConfig.java",
                    "libcalico/src/main/java/calico/libcalico/datastore/kubernetes/KubernetesConfig.java"}) {
                collect(LITERAL, read(root.resolve(source)), names);
            }
            return Collections.unmodifiableSortedSet(names);
        }
        if (module.equals(CONFD)) {
            return calico.confd.app.ConfdConfiguration.variablesRead();
        }
        if (module.equals(FELIX)) {
            names.addAll(calico.felix.app.FelixConfiguration.variablesRead());
            Arrays.stream(FelixConfigurationSpec.class.getRecordComponents())
                    .map(c -> "FELIX_" + c.getName().toUpperCase(Locale.ROOT))
                    .forEach(names::add);
            // Calico's older names felix also accepts (FELIX_IPINIPMTU, ...).
            collect(LITERAL, read(root.resolve("felix-service/src/main/java/calico/felix/calc/ConfigFields.java")), names);
            return Collections.unmodifiableSortedSet(names);
        }
        collect(PLACEHOLDER, read(applicationYml(module)), names);
        return Collections.unmodifiableSortedSet(names);
    }

    /**
     * {@return what is wrong with the {@code FELIX_*} values of {@code env}}: a value outside a
     * closed FelixConfiguration field's allowed values (calico-api's FelixConfigurationEnums), or
     * not {@code true}/{@code false} for a boolean field, or not an integer for an integer one.
     */
    static List<String> felixValueProblems(Map<String, String> env) {
        List<String> problems = new ArrayList<>();
        for (RecordComponent c : FelixConfigurationSpec.class.getRecordComponents()) {
            String value = env.get("FELIX_" + c.getName().toUpperCase(Locale.ROOT));
            if (value == null) {
                continue;
            }
            var allowed = FelixConfigurationEnums.of(c.getName());
            if (allowed.isPresent() && allowed.get().canonical(value).isEmpty()) {
                problems.add(c.getName() + "=" + value + " not in " + allowed.get().values());
            } else if (c.getType() == Boolean.class && !value.equals("true") && !value.equals("false")) {
                problems.add(c.getName() + "=" + value + " is not true or false");
            } else if (c.getType() == Integer.class && !value.matches("-?\\d+")) {
                problems.add(c.getName() + "=" + value + " is not an integer");
            }
        }
        return problems;
    }

    /**
     * {@return the default of {@code calico.health.port} in a module's application.yml}: the port
     * its probes must use unless the chart sets the variable.
     */
    static HealthPort healthPort(String module) {
        HealthPort port = HEALTH_PORTS.get(module);
        if (port == null) {
            throw new AssertionError(module + ": no calico.health.port in application.yml");
        }
        return port;
    }

    private static Optional<HealthPort> readHealthPort(String module) {
        Matcher m = Pattern.compile("(?m)^  health:\\n(?:    .*\\n)*?    port: \\$\\{([A-Z_]+):(\\d+)}").matcher(read(applicationYml(module)));
        return m.find() ? Optional.of(new HealthPort(m.group(1), Integer.parseInt(m.group(2)))) : Optional.empty();
    }

    private static Path applicationYml(String module) {
        return Helm.ROOT.resolve(module).resolve("src/main/resources/application.yml");
    }

    /** A health port: the variable that sets it and its default. */
    record HealthPort(String variable, int defaultPort) {
    }

    private static void collect(Pattern p, String text, Set<String> into) {
        Matcher m = p.matcher(text);
        while (m.find()) {
            into.add(m.group(1));
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
