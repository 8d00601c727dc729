package calico.apiserver.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.Kubeconfigs;
import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.Environment;

/**
 * The API server's datastore settings: libcalico's shared record bound as {@link ApiServerConfiguration}
 * binds it, from Calico's variables through the real {@code application.yml}.
 */
class ApiServerDatastorePropertiesTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new ConfigDataApplicationContextInitializer());

    private static DatastoreProperties bind(Environment environment) {
        return DatastoreProperties.bind(environment, ApiServerConfiguration.DATASTORE);
    }

    @Test
    void bindsFromCalicosVariables(@TempDir Path dir) throws Exception {
        runner.run(context -> {
            DatastoreConfig config = bind(context.getEnvironment()).toConfig();
            assertThat(config.type()).isEqualTo(DatastoreConfig.Type.ETCDV3);
            assertThat(config.etcd().endpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
        });
        runner.withPropertyValues("DATASTORE_TYPE=etcdv3", "ETCD_ENDPOINTS=http://10.0.0.1:2379").run(context ->
                assertThat(bind(context.getEnvironment()).toConfig().etcd().endpoints())
                        .containsExactly(URI.create("http://10.0.0.1:2379")));
        runner.withPropertyValues("DATASTORE_TYPE=MEMORY").run(context ->
                assertThat(bind(context.getEnvironment()).type()).isEqualTo(DatastoreConfig.Type.MEMORY));
        Path kubeconfig = Kubeconfigs.write(dir, "https://10.96.0.1:443");
        runner.withPropertyValues("DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig,
                "K8S_API_ENDPOINT=https://10.96.0.9:6443").run(context -> {
            DatastoreConfig config = bind(context.getEnvironment()).toConfig();
            assertThat(config.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
            assertThat(config.kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.9:6443");
        });
        // The apiserver backend is a client of this server: it cannot hold the store itself.
        runner.withPropertyValues("DATASTORE_TYPE=apiserver").run(context ->
                assertThatThrownBy(() -> bind(context.getEnvironment())).hasMessage("apiserver.datastore-type "
                        + "(DATASTORE_TYPE): \"apiserver\" is not one of etcdv3, kubernetes, memory"));
        runner.withPropertyValues("ETCD_ENDPOINTS=127.0.0.1:2379").run(context ->
                assertThatThrownBy(() -> bind(context.getEnvironment()))
                        .hasMessageContaining("apiserver.etcd-endpoints (ETCD_ENDPOINTS)"));
    }
}
