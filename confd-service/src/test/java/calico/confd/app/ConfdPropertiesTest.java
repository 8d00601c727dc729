package calico.confd.app;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Bad settings fail at startup with the property and the variable named. */
class ConfdPropertiesTest {

    private static ConfdProperties props(String node, String backend, String datastore) {
        return props(node, backend, datastore, null);
    }

    private static ConfdProperties props(String node, String backend, String datastore, String kubeconfig) {
        return new ConfdProperties(node, backend, datastore, "http://127.0.0.1:2379", null, null, null, kubeconfig,
                Path.of("/tmp/bird.ctl"), Path.of("/tmp/bird.cfg"), "/usr/sbin/bird", "", null, "kube-system",
                Duration.ofSeconds(30), Duration.ofSeconds(5));
    }

    @Test
    void namesTheVariable() {
        assertThatThrownBy(() -> props("", "bird", "etcdv3")).hasMessageContaining("NODENAME");
        assertThatThrownBy(() -> props("n", "gobgp", "etcdv3")).hasMessageContaining("CALICO_NETWORKING_BACKEND")
                .hasMessageContaining("gobgp");
        assertThatThrownBy(() -> props("n", "bird", "consul")).hasMessageContaining("DATASTORE_TYPE");
        props("", "none", "etcdv3");
    }

    /** confd.kubeconfig (KUBECONFIG) is the file the kubernetes datastore reads. */
    @Test
    void theKubeconfigSettingReachesTheKubernetesDatastore() {
        assertThatThrownBy(() -> props("n", "bird", "kubernetes", "/nonexistent/kubeconfig").datastore(Map.of()))
                .hasMessageContaining("KUBECONFIG").hasMessageContaining("/nonexistent/kubeconfig");
    }
}
