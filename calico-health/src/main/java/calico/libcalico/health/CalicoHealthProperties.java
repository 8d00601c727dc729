package calico.libcalico.health;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Where a component serves {@code /liveness} and {@code /readiness} (Calico's
 * {@code HealthEnabled}, {@code HealthHost}, {@code HealthPort}). Services map their Calico
 * environment names onto these, for example felix:
 * {@code calico.health.port: ${FELIX_HEALTHPORT:9099}}, typha: {@code ${TYPHA_HEALTHPORT:9098}}.
 *
 * <p>The Actuator management server is put on this host and port (see
 * {@link CalicoHealthEnvironmentPostProcessor}), so {@code /actuator/prometheus} is served
 * there as well.
 *
 * @param enabled whether the probe endpoints are served at all; the aggregator exists either way
 * @param host    the address to listen on
 * @param port    the port to listen on; 0 picks a free one (tests)
 */
@ConfigurationProperties(CalicoHealthProperties.PREFIX)
public record CalicoHealthProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue(DEFAULT_HOST) String host,
        @DefaultValue(DEFAULT_PORT) int port) {

    public static final String PREFIX = "calico.health";
    /** Calico felix's default health host. */
    public static final String DEFAULT_HOST = "localhost";
    /** Calico felix's default health port (typha uses 9098). */
    public static final String DEFAULT_PORT = "9099";

    public CalicoHealthProperties {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException(PREFIX + ".host: must not be blank");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(PREFIX + ".port: must be between 0 and 65535, got " + port);
        }
    }
}
