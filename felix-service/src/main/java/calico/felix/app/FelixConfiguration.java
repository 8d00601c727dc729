package calico.felix.app;

import calico.libcalico.config.Variables;
import calico.libcalico.datastore.config.DatastoreProperties;
import ch.qos.logback.classic.Level;
import java.util.AbstractMap;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;

/**
 * Everything felix is told, read once at start-up from Calico's variables (and {@code --NAME=value}
 * arguments) and checked there: a bad value stops felix with the variable and the reason named.
 *
 * @param felix       felix's local settings
 * @param typha       how it reaches typha (or not)
 * @param datastore   the datastore it reads, or that typha reads for it ({@code FELIX_DATASTORETYPE} over
 *                    {@code DATASTORE_TYPE}, {@code FELIX_ETCDENDPOINTS} over {@code ETCD_ENDPOINTS}, ...)
 * @param environment the {@code FELIX_*} variables, the calculation graph's highest config layer, checked
 * @param health      {@code /liveness}, {@code /readiness}, {@code /actuator/health}, {@code /actuator/prometheus}
 *                    (FELIX_HEALTHENABLED, FELIX_HEALTHHOST, FELIX_HEALTHPORT)
 * @param admin       {@code /felix/v1/...} (FELIX_ADMINHOST, FELIX_ADMINPORT; ours)
 * @param metrics     Calico's metrics port, {@code /metrics}: enabled by FELIX_PROMETHEUSMETRICSENABLED (or later by
 *                    a FelixConfiguration, {@link FelixMetricsPort}), on FELIX_PROMETHEUSMETRICSHOST/PORT
 * @param debug       Calico's debug port (FELIX_DEBUGHOST, FELIX_DEBUGPORT): enabled by a port other than 0
 */
public record FelixConfiguration(FelixProperties felix, FelixTyphaProperties typha, DatastoreProperties datastore,
                                 FelixEnvironment environment, Listener health, Listener admin, Listener metrics,
                                 Listener debug) {

    /** Felix's names for the shared datastore settings: {@code FELIX_DATASTORETYPE} over {@code DATASTORE_TYPE}. */
    static final DatastoreProperties.Source DATASTORE = DatastoreProperties.Source.of("felix", "FELIX_");

    /** The health port's default, Calico's. */
    public static final int DEFAULT_HEALTH_PORT = 9099;

    /**
     * Where one of felix's HTTP servers listens.
     *
     * @param enabled whether it is served at start-up
     * @param host    address (empty: all)
     * @param port    port (0: any free one)
     * @param setting the port's variable, as errors name it
     */
    public record Listener(boolean enabled, String host, int port, String setting) {
    }

    /**
     * {@return the configuration in {@code variables}} (the process environment, or a test's)
     *
     * @throws IllegalArgumentException naming the setting, its variable and the reason
     */
    public static FelixConfiguration fromVariables(Map<String, String> variables) {
        Variables v = new Variables(variables);
        FelixEnvironment environment = FelixEnvironment.from(variables);
        int debugPort = v.port("FELIX_DEBUGPORT", 0);
        return new FelixConfiguration(FelixProperties.fromVariables(v), FelixTyphaProperties.fromVariables(v),
                DatastoreProperties.fromVariables(calicoEtcdFiles(variables), DATASTORE), environment,
                new Listener(FelixProperties.bool(v, "calico.health.enabled (FELIX_HEALTHENABLED)", true,
                        "FELIX_HEALTHENABLED"), v.or("localhost", "FELIX_HEALTHHOST"),
                        v.port("FELIX_HEALTHPORT", DEFAULT_HEALTH_PORT), "FELIX_HEALTHPORT"),
                new Listener(true, v.or("localhost", "FELIX_ADMINHOST"), v.port("FELIX_ADMINPORT", 9097),
                        "FELIX_ADMINPORT"),
                new Listener(environment.settings().prometheusMetricsEnabled(), v.or("", "FELIX_PROMETHEUSMETRICSHOST"),
                        v.port("FELIX_PROMETHEUSMETRICSPORT", 9091),
                        "felix.prometheus-metrics-port (FELIX_PROMETHEUSMETRICSPORT)"),
                new Listener(debugPort != 0, v.or("localhost", "FELIX_DEBUGHOST"), debugPort,
                        "felix.debug-port (FELIX_DEBUGPORT)"));
    }

    /**
     * Calico's felix names its etcd files FELIX_ETCDCAFILE, FELIX_ETCDCERTFILE, FELIX_ETCDKEYFILE, which the shared
     * datastore settings read as FELIX_ETCDCACERTFILE, ...: {@code variables} with Calico's name answering for ours.
     */
    private static Map<String, String> calicoEtcdFiles(Map<String, String> variables) {
        Map<String, String> calicoNames = Map.of("FELIX_ETCDCACERTFILE", "FELIX_ETCDCAFILE");
        return new AbstractMap<>() {
            @Override
            public Set<Entry<String, String>> entrySet() {
                return variables.entrySet();
            }

            @Override
            public String get(Object name) {
                String calico = calicoNames.get(name);
                String value = calico == null ? null : variables.get(calico);
                return value != null && !value.isBlank() ? value : variables.get(name);
            }
        };
    }

    /**
     * {@return every variable felix reads at start-up}: the names {@link #fromVariables} asks for, recorded from an
     * environment with only the one required setting's last alternative ({@code HOSTNAME}), so that every
     * alternative before it is asked for too. The {@code FELIX_*} names of FelixConfiguration's fields (read by
     * {@link FelixEnvironment}) come on top. What a chart may set for felix (the charts module's test checks its
     * templates against it).
     */
    public static SortedSet<String> variablesRead() {
        return Variables.namesRead("HOSTNAME", FelixConfiguration::fromVariables);
    }

    /**
     * Calico's screen log level ({@code FELIX_LOGSEVERITYSCREEN}: Trace/Debug/Info/Warning/Error/Fatal) as applied
     * to the {@code calico} loggers at start-up, from the typed settings that own it.
     */
    public record FelixLogLevel(String severity, Level level) {

        static FelixLogLevel of(String severity) {
            calico.libcalico.config.LogSeverity s = calico.libcalico.config.LogSeverity.named(severity);
            return new FelixLogLevel(severity, s == null ? Level.ERROR : s.level()); // validated: Error and Fatal
        }

        /** Sets the {@code calico} loggers' level, when logback is the logging backend. */
        void apply() {
            if (org.slf4j.LoggerFactory.getLogger("calico") instanceof ch.qos.logback.classic.Logger calico) {
                calico.setLevel(level);
            }
        }
    }

    /** {@return the log level {@code FELIX_LOGSEVERITYSCREEN} asks for} */
    public FelixLogLevel logLevel() {
        return FelixLogLevel.of(environment.settings().logSeverityScreen());
    }
}
