package calico.typha.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.Kubeconfigs;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

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
        return new TyphaProperties(5473, "", 10000,
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

    /** Typha's datastore settings, as TyphaConfiguration binds them from the real application.yml. */
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new ConfigDataApplicationContextInitializer())
            .withUserConfiguration(TyphaConfiguration.class);

    @Test
    void datastoreSettingsBindFromCalicosVariables(@TempDir Path dir) throws Exception {
        runner.run(context -> {
            DatastoreConfig config = context.getBean(DatastoreProperties.class).toConfig();
            assertThat(config.type()).isEqualTo(DatastoreConfig.Type.ETCDV3);
            assertThat(config.etcd().endpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
        });
        Path ca = Files.writeString(dir.resolve("ca.pem"), "ca");
        Path cert = Files.writeString(dir.resolve("cert.pem"), "cert");
        Path key = Files.writeString(dir.resolve("key.pem"), "key");
        runner.withPropertyValues("DATASTORE_TYPE=memory", "TYPHA_DATASTORETYPE=etcdv3",
                "ETCD_ENDPOINTS=http://10.0.0.1:2379", "TYPHA_ETCDENDPOINTS=http://10.0.0.2:2379",
                "ETCD_CA_CERT_FILE=" + ca, "TYPHA_ETCDCERTFILE=" + cert, "ETCD_KEY_FILE=" + key).run(context -> {
            DatastoreConfig config = context.getBean(DatastoreProperties.class).toConfig();
            assertThat(config.type()).as("TYPHA_DATASTORETYPE wins").isEqualTo(DatastoreConfig.Type.ETCDV3);
            assertThat(config.etcd().endpoints()).containsExactly(URI.create("http://10.0.0.2:2379"));
            assertThat(config.etcd().caCertFile()).isEqualTo(ca);
            assertThat(config.etcd().certFile()).isEqualTo(cert);
            assertThat(config.etcd().keyFile()).isEqualTo(key);
        });
        Path kubeconfig = Kubeconfigs.write(dir, "https://10.96.0.1:443");
        runner.withPropertyValues("DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig).run(context -> {
            DatastoreConfig config = context.getBean(DatastoreProperties.class).toConfig();
            assertThat(config.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
            assertThat(config.kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.1");
        });
        runner.withPropertyValues("DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig,
                "K8S_API_ENDPOINT=https://10.96.0.9:6443").run(context -> assertThat(context.getBean(
                DatastoreProperties.class).toConfig().kubernetes().client().getMasterUrl())
                .startsWith("https://10.96.0.9:6443"));
        runner.withPropertyValues("TYPHA_DATASTORETYPE=kubernetes", "KUBECONFIG=" + dir.resolve("missing"))
                .run(context -> assertThatThrownBy(() -> context.getBean(DatastoreProperties.class).toConfig())
                        .hasMessageContaining("KUBECONFIG"));
        runner.withPropertyValues("TYPHA_DATASTORETYPE=zookeeper").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("typha.datastore-type (TYPHA_DATASTORETYPE or "
                        + "DATASTORE_TYPE)").hasMessageContaining("zookeeper"));
        runner.withPropertyValues("ETCD_ENDPOINTS=127.0.0.1:2379").run(context -> assertThat(context).hasFailed()
                .getFailure().rootCause().hasMessageContaining("TYPHA_ETCDENDPOINTS or ETCD_ENDPOINTS"));
    }
}
