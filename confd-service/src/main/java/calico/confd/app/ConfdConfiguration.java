package calico.confd.app;

import calico.libcalico.config.Variables;
import calico.libcalico.datastore.config.DatastoreProperties;
import java.util.Map;
import java.util.SortedSet;

/**
 * Everything confd is told, read once at start-up from calico-node's variables and checked there:
 * a bad value stops confd with the variable and the reason named.
 *
 * @param confd     confd's own settings
 * @param typha     how it reaches typha (or not)
 * @param datastore the datastore it reads, or whose settings say where password Secrets live
 * @param health    {@code /liveness}, {@code /readiness}, {@code /actuator/health}, {@code /actuator/prometheus}
 *                  (CONFD_HEALTHENABLED, CONFD_HEALTHHOST, CONFD_HEALTHPORT; ours: Calico's confd has none)
 * @param admin     {@code GET /peers} (CONFD_ADMINHOST, CONFD_ADMINPORT; ours)
 */
public record ConfdConfiguration(ConfdProperties confd, ConfdTyphaProperties typha, DatastoreProperties datastore,
                                 Listener health, Listener admin) {

    /** confd's names for the shared datastore settings: Calico's generic variables, no prefix of its own. */
    static final DatastoreProperties.Source DATASTORE = DatastoreProperties.Source.of("confd", "");

    /**
     * Where one of confd's HTTP servers listens. 9086 and 9087 are no Calico component's ports nor any
     * other of this suite's: confd runs beside felix (health 9099, metrics 9091, admin 9097) in the
     * node's network, and 9094 is kube-controllers' metrics port ({@code DefaultPortsTest}).
     *
     * @param enabled whether it is served at all
     * @param host    address (empty: all)
     * @param port    port (0: any free one)
     * @param setting the port's variable, as errors name it
     */
    public record Listener(boolean enabled, String host, int port, String setting) {
    }

    /** The health port's default. */
    public static final int DEFAULT_HEALTH_PORT = 9086;
    /** The admin port's default. */
    public static final int DEFAULT_ADMIN_PORT = 9087;

    /**
     * {@return the configuration in {@code variables}} (the process environment, or a test's)
     *
     * @throws IllegalArgumentException naming the setting, its variable and the reason
     */
    public static ConfdConfiguration fromVariables(Map<String, String> variables) {
        Variables v = new Variables(variables);
        return new ConfdConfiguration(ConfdProperties.fromVariables(variables), ConfdTyphaProperties.fromVariables(variables),
                DatastoreProperties.fromVariables(variables, DATASTORE),
                new Listener(v.bool("CONFD_HEALTHENABLED", true), v.or("localhost", "CONFD_HEALTHHOST"),
                        v.port("CONFD_HEALTHPORT", DEFAULT_HEALTH_PORT), "CONFD_HEALTHPORT"),
                new Listener(true, v.or("localhost", "CONFD_ADMINHOST"), v.port("CONFD_ADMINPORT", DEFAULT_ADMIN_PORT),
                        "CONFD_ADMINPORT"));
    }

    /**
     * {@return every variable confd reads}: the names {@link #fromVariables} asks for, recorded from an
     * environment with only the one required setting's last alternative ({@code HOSTNAME}), so that every
     * alternative before it is asked for too. What a chart may set for confd (the charts module's test
     * checks its templates against it).
     */
    public static SortedSet<String> variablesRead() {
        return Variables.namesRead("HOSTNAME", ConfdConfiguration::fromVariables);
    }
}
