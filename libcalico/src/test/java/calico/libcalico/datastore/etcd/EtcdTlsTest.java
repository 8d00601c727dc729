package calico.libcalico.datastore.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.EtcdServer;
import calico.libcalico.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TLS to etcd with client certificates, and what happens when the TLS files are wrong. */
class EtcdTlsTest {

    @TempDir
    static Path dir;

    private static TestCertificates pki;
    private static TestCertificates otherPki;
    private static EtcdServer etcd;

    @BeforeAll
    static void startTlsEtcd() {
        pki = TestCertificates.generate(dir.resolve("pki"));
        otherPki = TestCertificates.generate(dir.resolve("other"));
        etcd = EtcdServer.startTls(pki);
    }

    @AfterAll
    static void stop() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Test
    void readsWritesAndWatchesOverMutualTlsConfiguredFromTheEnvironment() {
        EtcdConfig config = EtcdConfig.fromEnvironment(Map.of(
                "ETCD_ENDPOINTS", etcd.endpoint().toString(),
                "ETCD_CA_CERT_FILE", pki.caCert().toString(),
                "ETCD_CERT_FILE", pki.clientCert().toString(),
                "ETCD_KEY_FILE", pki.clientKey().toString()));
        try (EtcdDatastore store = new EtcdDatastore(config.withProgressInterval(Duration.ofMillis(200)))) {
            WatchRecorder rec = new WatchRecorder();
            try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), rec)) {
                Resource r = store.create(set("secure"));

                assertThat(store.get(r.key())).contains(r);
                assertThat(rec.changes(1, Duration.ofSeconds(20)))
                        .containsExactly(new WatchEvent.Added(r, Long.parseLong(r.metadata().resourceVersion())));
            }
        }
    }

    @Test
    void withoutAClientCertificateTheServerRefusesAndCallsFailAsUnavailable() {
        EtcdConfig config = new EtcdConfig(List.of(etcd.endpoint()), pki.caCert(), null, null, Duration.ofSeconds(3));
        try (EtcdDatastore store = new EtcdDatastore(config)) {
            assertThatThrownBy(store::currentRevision).isInstanceOf(DatastoreException.Unavailable.class);
        }
    }

    @Test
    void aServerCertificateFromAnotherCaIsRejected() {
        EtcdConfig config = new EtcdConfig(List.of(etcd.endpoint()), otherPki.caCert(), otherPki.clientCert(),
                otherPki.clientKey(), Duration.ofSeconds(3));
        try (EtcdDatastore store = new EtcdDatastore(config)) {
            assertThatThrownBy(() -> store.create(set("x"))).isInstanceOf(DatastoreException.Unavailable.class);
        }
    }

    @Test
    void filesThatAreNotPemAreReportedAtStartupNamingTheVariables() throws Exception {
        Path junk = Files.writeString(dir.resolve("junk.pem"), "not a certificate");
        EtcdConfig config = new EtcdConfig(List.of(etcd.endpoint()), junk, null, null, null);

        assertThatThrownBy(() -> new EtcdDatastore(config))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ETCD_CA_CERT_FILE");

        EtcdConfig badKey = new EtcdConfig(List.of(etcd.endpoint()), pki.caCert(), pki.clientCert(), junk, null);
        assertThatThrownBy(() -> new EtcdDatastore(badKey))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ETCD_KEY_FILE");
    }

    private static GlobalNetworkSet set(String name) {
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(List.of("10.0.0.0/8")));
    }
}
