package calico.libcalico.datastore.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.datastore.kubernetes.Kubeconfigs;
import calico.libcalico.datastore.kubernetes.OwnedKubernetesClient;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/** The datastore settings every service shares: binding, the names in errors, the conversion. */
class DatastorePropertiesTest {

    private static final DatastoreProperties.Source FELIX = DatastoreProperties.Source.of("felix", "FELIX_");
    private static final DatastoreProperties.Source CONFD = DatastoreProperties.Source.of("confd", "");

    private static StandardEnvironment environment(Map<String, Object> properties) {
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addFirst(new MapPropertySource("test", properties));
        return env;
    }

    private static DatastoreProperties props(DatastoreProperties.Source source, String type, String endpoints) {
        return new DatastoreProperties(source, type, endpoints, null, null, null, null, null);
    }

    @Test
    void bindsUnderTheServicesPrefixWithCalicosDefaults() {
        DatastoreProperties d = DatastoreProperties.bind(environment(Map.of()), FELIX);
        assertThat(d.type()).isEqualTo(DatastoreConfig.Type.ETCDV3);
        assertThat(d.toConfig(Map.of()).etcd().endpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));

        d = DatastoreProperties.bind(environment(Map.of("felix.datastore-type", " Memory ",
                "typha.datastore-type", "kubernetes")), FELIX);
        assertThat(d.datastoreType()).isEqualTo("memory");
        assertThat(d.toConfig(Map.of()).type()).isEqualTo(DatastoreConfig.Type.MEMORY);

        d = DatastoreProperties.bind(environment(Map.of("felix.etcd-endpoints", "http://10.0.0.1:2379, http://10.0.0.2:2379")),
                FELIX);
        assertThat(d.toConfig(Map.of()).etcd().endpoints())
                .containsExactly(URI.create("http://10.0.0.1:2379"), URI.create("http://10.0.0.2:2379"));
    }

    /** A service without Spring reads the same record from Calico's variables, its own prefix winning. */
    @Test
    void readsCalicosVariablesWithoutSpring() {
        DatastoreProperties d = DatastoreProperties.fromVariables(Map.of(), CONFD);
        assertThat(d.type()).isEqualTo(DatastoreConfig.Type.ETCDV3);
        assertThat(d.etcdEndpoints()).isEqualTo(DatastoreProperties.DEFAULT_ETCD_ENDPOINTS);
        d = DatastoreProperties.fromVariables(Map.of("DATASTORE_TYPE", "kubernetes", "KUBECONFIG", "/k",
                "K8S_API_ENDPOINT", " ", "ETCD_ENDPOINTS", ""), CONFD);
        assertThat(d.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
        assertThat(d.kubeconfig()).isEqualTo("/k");
        assertThat(d.k8sApiEndpoint()).as("blank is unset").isEmpty();
        d = DatastoreProperties.fromVariables(Map.of("DATASTORE_TYPE", "kubernetes", "FELIX_DATASTORETYPE", "memory"), FELIX);
        assertThat(d.type()).as("the service's own variable wins").isEqualTo(DatastoreConfig.Type.MEMORY);
        assertThatThrownBy(() -> DatastoreProperties.fromVariables(Map.of("ETCD_ENDPOINTS", "localhost"), CONFD))
                .hasMessageContaining("confd.etcd-endpoints (ETCD_ENDPOINTS)");
        assertThatThrownBy(() -> DatastoreProperties.fromVariables(Map.of("DATASTORE_TYPE", "consul"), CONFD))
                .hasMessageContaining("confd.datastore-type (DATASTORE_TYPE)").hasMessageContaining("consul");
    }

    @Test
    void errorsNameThePropertyAndItsVariables() {
        assertThatThrownBy(() -> props(FELIX, "zookeeper", "http://127.0.0.1:2379")).hasMessage(
                "felix.datastore-type (FELIX_DATASTORETYPE or DATASTORE_TYPE): \"zookeeper\" is not one of "
                        + DatastoreConfig.TYPE_NAMES);
        assertThatThrownBy(() -> props(CONFD, "etcdv3", "127.0.0.1:2379"))
                .hasMessageContaining("confd.etcd-endpoints (ETCD_ENDPOINTS)").hasMessageContaining("127.0.0.1:2379");
        assertThatThrownBy(() -> props(FELIX, "etcdv3", "")).hasMessageContaining(
                "felix.etcd-endpoints (FELIX_ETCDENDPOINTS or ETCD_ENDPOINTS)");
        assertThatThrownBy(() -> DatastoreProperties.bind(environment(Map.of("felix.datastore-type", "etcd")), FELIX))
                .hasMessageContaining("FELIX_DATASTORETYPE").hasMessageContaining("\"etcd\"");
        // Endpoints are only read on etcd.
        assertThat(props(FELIX, "memory", "not a url").type()).isEqualTo(DatastoreConfig.Type.MEMORY);
        var storeOnly = new DatastoreProperties.Source("apiserver", "",
                Set.of(DatastoreConfig.Type.ETCDV3, DatastoreConfig.Type.KUBERNETES, DatastoreConfig.Type.MEMORY));
        assertThatThrownBy(() -> props(storeOnly, "apiserver", "")).hasMessage(
                "apiserver.datastore-type (DATASTORE_TYPE): \"apiserver\" is not one of etcdv3, kubernetes, memory");
    }

    @Test
    void theKubernetesSettingsWinOverTheProcessEnvironment(@TempDir Path dir) throws Exception {
        Path mine = Kubeconfigs.write(java.nio.file.Files.createDirectories(dir.resolve("a")), "https://10.96.0.1:443");
        Path theirs = Kubeconfigs.write(java.nio.file.Files.createDirectories(dir.resolve("b")), "https://10.96.0.2:443");
        DatastoreProperties d = new DatastoreProperties(FELIX, "kubernetes", "", null, null, null, mine.toString(), null);
        DatastoreConfig config = d.toConfig(Map.of("KUBECONFIG", theirs.toString()));
        assertThat(config.kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.1");
        // Unset: the environment's.
        d = new DatastoreProperties(FELIX, "kubernetes", "", null, null, null, null, null);
        assertThat(d.toConfig(Map.of("KUBECONFIG", theirs.toString())).kubernetes().client().getMasterUrl())
                .startsWith("https://10.96.0.2");
        d = new DatastoreProperties(FELIX, "kubernetes", "", null, null, null, mine.toString(), "https://10.96.0.9:6443");
        assertThat(d.toConfig(Map.of()).kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.9:6443");
        assertThat(d.kubernetesClientConfig().getMasterUrl()).startsWith("https://10.96.0.9:6443");
        assertThatThrownBy(() -> new DatastoreProperties(FELIX, "kubernetes", "", null, null, null,
                dir.resolve("missing").toString(), null).toConfig(Map.of())).hasMessageContaining("KUBECONFIG");
    }

    @Test
    void anOwnedClientIsBuiltOnlyWithoutAGivenOne() {
        AtomicInteger built = new AtomicInteger();
        try (KubernetesClient given = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:1").build()).build()) {
            OwnedKubernetesClient c = OwnedKubernetesClient.of(given, () -> {
                built.incrementAndGet();
                return new ConfigBuilder().build();
            });
            assertThat(c.client()).isSameAs(given);
            assertThat(c.owned()).isFalse();
            assertThat(built).hasValue(0);
        }
        try (OwnedKubernetesClient c = OwnedKubernetesClient.of(null,
                () -> new ConfigBuilder().withMasterUrl("http://127.0.0.1:2").build())) {
            assertThat(c.owned()).isTrue();
            assertThat(c.client().getMasterUrl().toString()).startsWith("http://127.0.0.1:2");
        }
    }
}
