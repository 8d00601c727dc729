package calico.typha.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.datastore.DatastoreConfig;
import calico.libcalico.datastore.kubernetes.Kubeconfigs;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TYPHA_* settings: the rebalancing target, TLS completeness, and errors naming the variable. */
class TyphaPropertiesTest {

    private static TyphaProperties props(String mode, int replicas, int expected, String ca, String cert, String key,
                                         String cn, String uriSan) {
        return props("memory", mode, replicas, expected, ca, cert, key, cn, uriSan);
    }

    private static TyphaProperties props(String datastore, String mode, int replicas, int expected, String ca,
                                         String cert, String key, String cn, String uriSan) {
        return props(datastore, mode, replicas, expected, Duration.ofSeconds(1), ca, cert, key, cn, uriSan);
    }

    private static TyphaProperties props(String datastore, String mode, int replicas, int expected, Duration drop,
                                         String ca, String cert, String key, String cn, String uriSan) {
        return new TyphaProperties(datastore, "http://127.0.0.1:2379", null, null, null, 5473, "", 10000,
                Duration.ofSeconds(10), Duration.ofSeconds(60), 100000, mode, replicas, expected, drop, ca, cert, key,
                cn, uriSan);
    }

    @Test
    void connectionDropIntervalPacesTheShedding() {
        assertThat(props("none", 1, 0, null, null, null, null, null).serverSettings().rebalanceInterval())
                .as("Calico's default, 1 s").isEqualTo(Duration.ofSeconds(1));
        assertThat(props("memory", "config", 3, 1000, Duration.ofSeconds(5), null, null, null, null, null)
                .serverSettings().rebalanceInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThatThrownBy(() -> props("memory", "config", 3, 1000, Duration.ZERO, null, null, null, null, null))
                .hasMessageContaining("TYPHA_CONNECTIONDROPINTERVALSECS").hasMessageContaining("positive");
        assertThatThrownBy(() -> props("memory", "config", 3, 1000, Duration.ofSeconds(-1), null, null, null, null,
                null)).hasMessageContaining("TYPHA_CONNECTIONDROPINTERVALSECS");
    }

    @Test
    void configRebalancingTargetsAnEvenShareWithHeadroom() {
        assertThat(props("config", 3, 1000, null, null, null, null, null).serverSettings().rebalanceTarget())
                .isEqualTo(400);
        assertThat(props("config", 1, 0, null, null, null, null, null).rebalanceTarget()).isZero();
        assertThat(props("none", 3, 1000, null, null, null, null, null).rebalanceTarget()).isZero();
        assertThat(props("kubernetes", 3, 1000, null, null, null, null, null).rebalanceTarget()).isZero();
    }

    @Test
    void settingsReachTheServer() {
        var s = props("NONE", 1, 0, null, null, null, null, null).serverSettings();
        assertThat(s.port()).isEqualTo(5473);
        assertThat(s.maxConnections()).isEqualTo(10000);
        assertThat(s.pingInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.pongTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(s.maxDeltaLogUpdates()).isEqualTo(100000);
    }

    @Test
    void badValuesNameTheVariable() {
        assertThatThrownBy(() -> props("sideways", 1, 0, null, null, null, null, null))
                .hasMessageContaining("TYPHA_CONNECTIONREBALANCINGMODE").hasMessageContaining("sideways");
        assertThatThrownBy(() -> props("none", 0, 0, null, null, null, null, null))
                .hasMessageContaining("TYPHA_REPLICAS");
        assertThatThrownBy(() -> props("none", 1, 0, "/ca", "/cert", null, "felix", null))
                .hasMessageContaining("TYPHA_SERVERKEYFILE");
        assertThatThrownBy(() -> props("none", 1, 0, "/ca", "/cert", "/key", "", " "))
                .hasMessageContaining("TYPHA_CLIENTCN").hasMessageContaining("TYPHA_CLIENTURISAN");
        assertThat(props("none", 1, 0, "/ca", "/cert", "/key", "", "spiffe://x").tls()).isTrue();
    }

    @Test
    void kubernetesDatastoreReadsKubeconfigAndNamesItWhenUnusable(@TempDir Path dir) throws Exception {
        Path kubeconfig = Kubeconfigs.write(dir, "https://10.96.0.1:443");
        TyphaProperties p = props("kubernetes", "none", 1, 0, null, null, null, null, null);
        DatastoreConfig config = p.datastore(Map.of("KUBECONFIG", kubeconfig.toString()));
        assertThat(config.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
        assertThat(config.kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.1");
        assertThatThrownBy(() -> p.datastore(Map.of("KUBECONFIG", dir.resolve("missing").toString())))
                .hasMessageContaining("KUBECONFIG");
    }
}
