package calico.goldmane.app;

import calico.goldmane.store.Buckets;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationUnit;

/**
 * Goldmane's settings, bound from {@code goldmane.*}; {@code application.yml} maps Calico's
 * goldmane environment names (PORT, AGGREGATION_WINDOW, SERVER_CERT_PATH, SERVER_KEY_PATH,
 * CA_CERT_PATH, CLIENT_CERT_PATH, CLIENT_KEY_PATH, PUSH_URL, LOG_LEVEL, HEALTH_PORT) and this
 * implementation's additions (RETENTION, REPLAY_HORIZON, SNAPSHOT_*, ...) onto them. Bare numbers
 * in durations are seconds. Every error names the variable.
 *
 * @param port              gRPC port (PORT; Calico's default is 443, the Service port 7443: 7443 here so
 *                          that it runs unprivileged)
 * @param host              listen address, empty for all (HOST)
 * @param aggregationWindow bucket width (AGGREGATION_WINDOW, 15s)
 * @param retention         history kept, a multiple of the window (RETENTION, 1h)
 * @param replayHorizon     how far back a flow is accepted and de-duplicated (REPLAY_HORIZON, 5m);
 *                          felix must not replay further back
 * @param maxIpsPerFlow     distinct source (and destination) addresses kept per key (MAX_IPS_PER_FLOW)
 * @param ingestQueueSize   flows queued for the writer (INGEST_QUEUE_SIZE)
 * @param ingestTimeout     how long a collector stream waits for queue room before it is ended
 * @param maxPageSize       the largest page_size accepted (MAX_PAGE_SIZE)
 * @param serverCertPath    TLS certificate (SERVER_CERT_PATH); with the key enables TLS
 * @param serverKeyPath     TLS key (SERVER_KEY_PATH)
 * @param caCertPath        CA for client certificates (mutual TLS) and for PUSH_URL (CA_CERT_PATH)
 * @param clientCertPath    client certificate towards PUSH_URL (CLIENT_CERT_PATH)
 * @param clientKeyPath     its key (CLIENT_KEY_PATH)
 * @param pushUrl           NDJSON sink endpoint, empty for none (PUSH_URL)
 * @param snapshotEnabled   keep the ring on disk and restore it at start (SNAPSHOT_ENABLED, true)
 * @param snapshotDir       where (SNAPSHOT_DIR)
 */
@ConfigurationProperties(prefix = "goldmane")
public record GoldmaneProperties(
        @DefaultValue("7443") int port,
        @DefaultValue("") String host,
        @DefaultValue("15s") @DurationUnit(ChronoUnit.SECONDS) Duration aggregationWindow,
        @DefaultValue("1h") @DurationUnit(ChronoUnit.SECONDS) Duration retention,
        @DefaultValue("5m") @DurationUnit(ChronoUnit.SECONDS) Duration replayHorizon,
        @DefaultValue("100") int maxIpsPerFlow,
        @DefaultValue("262144") int ingestQueueSize,
        @DefaultValue("10s") @DurationUnit(ChronoUnit.SECONDS) Duration ingestTimeout,
        @DefaultValue("1000") int maxPageSize,
        String serverCertPath,
        String serverKeyPath,
        String caCertPath,
        String clientCertPath,
        String clientKeyPath,
        String pushUrl,
        @DefaultValue("true") boolean snapshotEnabled,
        String snapshotDir) {

    public GoldmaneProperties {
        serverCertPath = trim(serverCertPath);
        serverKeyPath = trim(serverKeyPath);
        caCertPath = trim(caCertPath);
        clientCertPath = trim(clientCertPath);
        clientKeyPath = trim(clientKeyPath);
        pushUrl = trim(pushUrl);
        snapshotDir = trim(snapshotDir);
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("goldmane.port (PORT): " + port + " is not a port");
        }
        long w = aggregationWindow.toMillis();
        if (w < 1000 || w % 1000 != 0) {
            throw new IllegalArgumentException("goldmane.aggregation-window (AGGREGATION_WINDOW): must be whole "
                    + "seconds, at least 1s, got " + aggregationWindow);
        }
        if (retention.toMillis() % w != 0 || retention.toMillis() / w < 2) {
            throw new IllegalArgumentException("goldmane.retention (RETENTION): must be a multiple of "
                    + "AGGREGATION_WINDOW covering at least two buckets, got " + retention);
        }
        if (replayHorizon.toMillis() < w || replayHorizon.compareTo(retention) > 0) {
            throw new IllegalArgumentException("goldmane.replay-horizon (REPLAY_HORIZON): must be between "
                    + "AGGREGATION_WINDOW and RETENTION, got " + replayHorizon);
        }
        if (maxIpsPerFlow < 0) {
            throw new IllegalArgumentException("goldmane.max-ips-per-flow (MAX_IPS_PER_FLOW): must not be negative");
        }
        if (ingestQueueSize < 1024) {
            throw new IllegalArgumentException("goldmane.ingest-queue-size (INGEST_QUEUE_SIZE): at least 1024, got "
                    + ingestQueueSize);
        }
        if (maxPageSize < 1) {
            throw new IllegalArgumentException("goldmane.max-page-size (MAX_PAGE_SIZE): at least 1");
        }
        if ((serverCertPath == null) != (serverKeyPath == null)) {
            throw new IllegalArgumentException("goldmane.server-cert-path / server-key-path (SERVER_CERT_PATH, "
                    + "SERVER_KEY_PATH): set both for TLS, or neither");
        }
        if (caCertPath != null && serverCertPath == null && pushUrl == null) {
            throw new IllegalArgumentException("goldmane.ca-cert-path (CA_CERT_PATH): mutual TLS needs "
                    + "SERVER_CERT_PATH and SERVER_KEY_PATH");
        }
        if ((clientCertPath == null) != (clientKeyPath == null)) {
            throw new IllegalArgumentException("goldmane.client-cert-path / client-key-path (CLIENT_CERT_PATH, "
                    + "CLIENT_KEY_PATH): set both, or neither");
        }
        if (pushUrl != null) {
            URI u;
            try {
                u = URI.create(pushUrl);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("goldmane.push-url (PUSH_URL): not a URL: " + pushUrl);
            }
            if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
                throw new IllegalArgumentException("goldmane.push-url (PUSH_URL): needs an http or https URL, got "
                        + pushUrl);
            }
        }
        if (snapshotEnabled && snapshotDir == null) {
            throw new IllegalArgumentException("goldmane.snapshot-dir (SNAPSHOT_DIR): required while "
                    + "SNAPSHOT_ENABLED is true");
        }
    }

    private static String trim(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    Buckets buckets() {
        long w = aggregationWindow.toSeconds();
        return new Buckets(w, (int) (retention.toSeconds() / w), (int) Math.max(1, replayHorizon.toSeconds() / w));
    }

    boolean tls() {
        return serverCertPath != null;
    }

    Path snapshotPath() {
        return Path.of(snapshotDir);
    }
}
