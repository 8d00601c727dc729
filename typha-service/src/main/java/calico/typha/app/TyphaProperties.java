package calico.typha.app;

import calico.typha.server.ServerSettings;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationUnit;

/**
 * Typha's settings, bound from {@code typha.*}; {@code application.yml} maps Calico's TYPHA_*
 * names onto them. Durations given as bare numbers are seconds, as in Calico. Every error names
 * the property and the variable it comes from.
 *
 * <p>The datastore settings ({@code typha.datastore-type}, {@code typha.etcd-*}, {@code typha.kubeconfig},
 * {@code typha.k8s-api-endpoint}: TYPHA_DATASTORETYPE / DATASTORE_TYPE, ...) are libcalico's shared
 * {@link calico.libcalico.datastore.config.DatastoreProperties}, bound under the same prefix by {@link TyphaConfiguration}.
 *
 * @param serverPort             gRPC port (TYPHA_SERVERPORT, 5473 as in the manifests)
 * @param serverHost             listen address, empty for all (TYPHA_SERVERHOST)
 * @param maxConnectionsUpperLimit streams beyond this are refused (TYPHA_MAXCONNECTIONSUPPERLIMIT)
 * @param pingInterval           (TYPHA_PINGINTERVAL, seconds)
 * @param pongTimeout            (TYPHA_PONGTIMEOUT, seconds)
 * @param maxDeltaLogUpdates     shared delta log bound; a client further behind is dropped
 * @param connectionRebalancingMode {@code none}, {@code config} (target from the two settings
 *                               below) or {@code kubernetes} (replicas from the endpoints of
 *                               TYPHA_K8SSERVICENAME, see {@link KubernetesRebalanceTarget})
 *                               (TYPHA_CONNECTIONREBALANCINGMODE)
 * @param replicas               typha replicas, for {@code config} rebalancing and the {@code kubernetes}
 *                               fallback (TYPHA_REPLICAS)
 * @param expectedClients        clients across all replicas (TYPHA_EXPECTEDCLIENTS); in {@code kubernetes}
 *                               mode 0 means the cluster's node count
 * @param connectionDropInterval while this typha has more connections than the rebalancing target,
 *                               one is shed (asked to reconnect elsewhere) per this interval, ±10%
 *                               jitter as in Calico (TYPHA_CONNECTIONDROPINTERVALSECS, seconds, 1)
 * @param caFile                 CA that signs felix's certificates; with the two below enables mTLS
 * @param serverCertFile         this typha's certificate (TYPHA_SERVERCERTFILE)
 * @param serverKeyFile          its key (TYPHA_SERVERKEYFILE)
 * @param clientCn               a client certificate must have this CN... (TYPHA_CLIENTCN)
 * @param clientUriSan           ...or this URI SAN (TYPHA_CLIENTURISAN); either matching suffices
 */
@ConfigurationProperties(prefix = "typha")
public record TyphaProperties(
        @DefaultValue("5473") int serverPort,
        @DefaultValue("") String serverHost,
        @DefaultValue("10000") int maxConnectionsUpperLimit,
        @DefaultValue("10") @DurationUnit(ChronoUnit.SECONDS) Duration pingInterval,
        @DefaultValue("60") @DurationUnit(ChronoUnit.SECONDS) Duration pongTimeout,
        @DefaultValue("100000") int maxDeltaLogUpdates,
        @DefaultValue("none") String connectionRebalancingMode,
        @DefaultValue("1") int replicas,
        @DefaultValue("0") int expectedClients,
        @DefaultValue("1") @DurationUnit(ChronoUnit.SECONDS) Duration connectionDropInterval,
        String caFile,
        String serverCertFile,
        String serverKeyFile,
        String clientCn,
        String clientUriSan) {

    public TyphaProperties {
        connectionRebalancingMode = connectionRebalancingMode == null ? "none"
                : connectionRebalancingMode.trim().toLowerCase(Locale.ROOT);
        if (!List.of("none", "config", "kubernetes").contains(connectionRebalancingMode)) {
            throw new IllegalArgumentException("typha.connection-rebalancing-mode (TYPHA_CONNECTIONREBALANCINGMODE): \""
                    + connectionRebalancingMode + "\" is not one of none, config, kubernetes");
        }
        if (replicas < 1) {
            throw new IllegalArgumentException("typha.replicas (TYPHA_REPLICAS): must be at least 1, got " + replicas);
        }
        if (connectionDropInterval == null || connectionDropInterval.isNegative() || connectionDropInterval.isZero()) {
            throw new IllegalArgumentException("typha.connection-drop-interval (TYPHA_CONNECTIONDROPINTERVALSECS): "
                    + "must be a positive number of seconds, got " + connectionDropInterval);
        }
        int tlsParts = (blank(caFile) ? 0 : 1) + (blank(serverCertFile) ? 0 : 1) + (blank(serverKeyFile) ? 0 : 1);
        if (tlsParts != 0 && tlsParts != 3) {
            throw new IllegalArgumentException("typha.ca-file, typha.server-cert-file, typha.server-key-file "
                    + "(TYPHA_CAFILE, TYPHA_SERVERCERTFILE, TYPHA_SERVERKEYFILE): set all three for TLS, or none");
        }
        if (tlsParts == 3 && blank(clientCn) && blank(clientUriSan)) {
            throw new IllegalArgumentException("typha.client-cn / typha.client-uri-san (TYPHA_CLIENTCN, "
                    + "TYPHA_CLIENTURISAN): with TLS at least one is required, as in Calico");
        }
    }

    static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    boolean tls() {
        return !blank(caFile);
    }

    /**
     * {@return the fixed rebalancing target ({@code config} mode): 20% above an even share of the
     * expected clients; 0 for none} In {@code kubernetes} mode the target is live
     * ({@link KubernetesRebalanceTarget}) and this is 0.
     */
    int rebalanceTarget() {
        return connectionRebalancingMode.equals("config") ? target(expectedClients, replicas) : 0;
    }

    /** {@return ⌈1.2 × clients / replicas⌉, or 0 (no rebalancing) without clients or replicas} */
    static int target(int clients, int replicas) {
        if (clients <= 0 || replicas <= 0) {
            return 0;
        }
        return (int) Math.ceil(clients * 1.2 / replicas);
    }

    ServerSettings serverSettings() {
        ServerSettings d = ServerSettings.defaults(serverPort);
        return new ServerSettings(serverPort, serverHost, maxConnectionsUpperLimit, pingInterval, pongTimeout,
                maxDeltaLogUpdates, d.snapshotChunkBytes(), d.snapshotMaxAge(), rebalanceTarget(),
                connectionDropInterval, d.catchUpWait());
    }
}
