package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code DATASTORE_TYPE=kubernetes} from the environment: a working datastore, or an error naming the variable. */
class KubernetesDatastoreConfigTest {

    @TempDir
    Path dir;

    @Test
    void kubeconfigFromTheEnvironmentOpensAWorkingDatastore() throws Exception {
        try (KubernetesApiServer server = new KubernetesApiServer()) {
            Path kubeconfig = Kubeconfigs.write(dir, server.url());

            DatastoreConfig config = DatastoreConfig.fromEnvironment(Map.of(
                    "DATASTORE_TYPE", "kubernetes", "KUBECONFIG", kubeconfig.toString()));

            assertThat(config.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
            assertThat(config.kubernetes().client().getMasterUrl()).startsWith(server.url());
            assertThat(config.kubernetes().client().isOnlyHttpWatches()).isTrue();
            try (Datastore ds = config.open()) {
                assertThat(ds).isInstanceOf(KubernetesDatastore.class);
                ds.create(new GlobalNetworkSet(ObjectMeta.named("a"), new GlobalNetworkSetSpec(List.of("10.0.0.0/8"))));
                assertThat(ds.list(ResourceKind.GLOBAL_NETWORK_SET).items()).extracting(r -> r.metadata().name())
                        .containsExactly("a");
            }
        }
    }

    @Test
    void errorsNameTheVariable() throws Exception {
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of(
                "DATASTORE_TYPE", "kubernetes", "KUBECONFIG", dir.resolve("missing").toString())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("KUBECONFIG:").hasMessageContaining("is not a readable file");

        Path garbage = Files.writeString(dir.resolve("garbage"), "clusters: [[[");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of(
                "DATASTORE_TYPE", "kubernetes", "KUBECONFIG", garbage.toString())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("KUBECONFIG:").hasMessageContaining("not a usable kubeconfig");

        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of(
                "DATASTORE_TYPE", "kubernetes", "K8S_API_ENDPOINT", "ftp://x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("K8S_API_ENDPOINT:");

        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "kdd")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("DATASTORE_TYPE:").hasMessageContaining("kubernetes");
    }
}
