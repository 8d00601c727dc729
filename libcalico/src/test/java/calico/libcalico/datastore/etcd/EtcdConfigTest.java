package calico.libcalico.datastore.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EtcdConfigTest {

    @TempDir
    Path dir;

    @Test
    void defaultsToTheLocalEtcdWithTenSecondDeadlines() {
        EtcdConfig c = EtcdConfig.fromEnvironment(Map.of());

        assertThat(c.endpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.tls()).isFalse();
    }

    @Test
    void readsCommaSeparatedEndpointsAndTlsFiles() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.crt"), "x");
        Path cert = Files.writeString(dir.resolve("c.crt"), "x");
        Path key = Files.writeString(dir.resolve("c.key"), "x");

        EtcdConfig c = EtcdConfig.fromEnvironment(Map.of(
                "ETCD_ENDPOINTS", " https://10.0.0.1:2379, https://10.0.0.2:2379 ,",
                "ETCD_CA_CERT_FILE", ca.toString(), "ETCD_CERT_FILE", cert.toString(), "ETCD_KEY_FILE", key.toString()));

        assertThat(c.endpoints()).containsExactly(URI.create("https://10.0.0.1:2379"), URI.create("https://10.0.0.2:2379"));
        assertThat(c.caCertFile()).isEqualTo(ca);
        assertThat(c.tls()).isTrue();
    }

    @Test
    void namesTheVariableOfAMissingFile() {
        assertThatThrownBy(() -> EtcdConfig.fromEnvironment(Map.of("ETCD_CA_CERT_FILE", dir.resolve("nope.crt").toString())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("ETCD_CA_CERT_FILE: ")
                .hasMessageContaining("nope.crt")
                .hasMessageContaining("does not exist");
        assertThatThrownBy(() -> EtcdConfig.fromEnvironment(Map.of("ETCD_CERT_FILE", dir.toString(),
                "ETCD_KEY_FILE", dir.toString())))
                .hasMessageStartingWith("ETCD_CERT_FILE: ");
    }

    @Test
    void aCertificateNeedsItsKeyAndViceVersa() throws Exception {
        Path f = Files.writeString(dir.resolve("f"), "x");

        assertThatThrownBy(() -> EtcdConfig.fromEnvironment(Map.of("ETCD_CERT_FILE", f.toString())))
                .hasMessageStartingWith("ETCD_KEY_FILE: required");
        assertThatThrownBy(() -> EtcdConfig.fromEnvironment(Map.of("ETCD_KEY_FILE", f.toString())))
                .hasMessageStartingWith("ETCD_CERT_FILE: required");
    }

    @Test
    void rejectsEndpointsThatAreNotHttpUrlsWithAPort() {
        for (String bad : List.of("127.0.0.1:2379", "unix:///run/etcd.sock", "http://127.0.0.1", "http://a:1,https://b:2", "ht tp://x")) {
            assertThatThrownBy(() -> EtcdConfig.fromEnvironment(Map.of("ETCD_ENDPOINTS", bad)))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("ETCD_ENDPOINTS: ");
        }
    }

    @Test
    void rejectsNonPositiveTimeouts() {
        assertThatThrownBy(() -> new EtcdConfig(List.of(URI.create("http://a:1")), null, null, null, Duration.ZERO))
                .hasMessageStartingWith("requestTimeout: ");
    }
}
