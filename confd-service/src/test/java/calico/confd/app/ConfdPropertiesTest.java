package calico.confd.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.Kubeconfigs;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad settings fail at startup with the property and the variable named. */
class ConfdPropertiesTest {

    /** confd's datastore settings, as ConfdConfiguration reads them from calico-node's variables. */
    private static DatastoreProperties read(String... variables) {
        java.util.Map<String, String> env = new java.util.HashMap<>(Map.of("NODENAME", "node-1"));
        for (String v : variables) {
            env.put(v.substring(0, v.indexOf('=')), v.substring(v.indexOf('=') + 1));
        }
        return ConfdConfiguration.fromVariables(env).datastore();
    }

    private static ConfdProperties props(String node, String backend) {
        return new ConfdProperties(node, backend, Path.of("/tmp/bird.ctl"), Path.of("/tmp/bird.cfg"),
                "/usr/sbin/bird", "", null, "kube-system", Duration.ofSeconds(30), Duration.ofSeconds(5), null);
    }

    private static DatastoreProperties datastore(String type, String kubeconfig) {
        return new DatastoreProperties(ConfdConfiguration.DATASTORE, type, "http://127.0.0.1:2379", null, null, null,
                kubeconfig, null);
    }

    @Test
    void namesTheVariable() {
        assertThatThrownBy(() -> props("", "bird")).hasMessageContaining("NODENAME");
        assertThatThrownBy(() -> props("n", "gobgp")).hasMessageContaining("CALICO_NETWORKING_BACKEND")
                .hasMessageContaining("gobgp");
        assertThatThrownBy(() -> datastore("consul", null)).hasMessageContaining("confd.datastore-type (DATASTORE_TYPE)")
                .hasMessageContaining("consul");
        props("", "none");
    }

    /** confd.kubeconfig (KUBECONFIG) is the file the kubernetes datastore reads. */
    @Test
    void theKubeconfigSettingReachesTheKubernetesDatastore() {
        assertThatThrownBy(() -> datastore("kubernetes", "/nonexistent/kubeconfig").toConfig(Map.of()))
                .hasMessageContaining("KUBECONFIG").hasMessageContaining("/nonexistent/kubeconfig");
    }

    @Test
    void datastoreSettingsBindFromCalicosVariables(@TempDir Path dir) throws Exception {
        DatastoreConfig config = read().toConfig();
        assertThat(config.type()).isEqualTo(DatastoreConfig.Type.ETCDV3);
        assertThat(config.etcd().endpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
        assertThat(read("DATASTORE_TYPE=etcdv3", "ETCD_ENDPOINTS=http://10.0.0.1:2379,http://10.0.0.2:2379").toConfig()
                .etcd().endpoints()).containsExactly(URI.create("http://10.0.0.1:2379"), URI.create("http://10.0.0.2:2379"));
        Path kubeconfig = Kubeconfigs.write(dir, "https://10.96.0.1:443");
        config = read("DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig,
                "K8S_API_ENDPOINT=https://10.96.0.9:6443").toConfig();
        assertThat(config.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
        assertThat(config.kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.9:6443");
        assertThatThrownBy(() -> read("DATASTORE_TYPE=consul")).hasMessageContaining("confd.datastore-type (DATASTORE_TYPE)");
        assertThatThrownBy(() -> read("ETCD_ENDPOINTS=localhost")).hasMessageContaining("confd.etcd-endpoints (ETCD_ENDPOINTS)");
    }

    /** What a chart may set for confd: every alternative of every setting, the datastore's and typha's included. */
    @Test
    void variablesReadNameEveryAlternative() {
        assertThat(ConfdConfiguration.variablesRead()).contains("NODENAME", "HOSTNAME", "CALICO_NETWORKING_BACKEND",
                "CALICO_ROUTER_ID", "NAMESPACE", "DATASTORE_TYPE", "ETCD_ENDPOINTS", "ETCD_CA_CERT_FILE", "KUBECONFIG",
                "K8S_API_ENDPOINT", "CALICO_TYPHAADDR", "FELIX_TYPHAADDR", "CONFD_TYPHAADDR", "CALICO_TYPHAK8SSERVICENAME",
                "CONFD_TYPHAREADTIMEOUT", "CONFD_HEALTHENABLED", "CONFD_HEALTHPORT", "CONFD_ADMINPORT")
                .doesNotContain("FELIX_DATASTORETYPE");
    }
}
