package calico.libcalico.datastore.etcd;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreContractTest;
import calico.libcalico.testing.EtcdAdmin;
import java.net.URI;
import java.time.Duration;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The datastore contract against etcd 3.5 in a container, beside the local-process etcd 3.4
 * of {@link EtcdDatastoreContractTest}: the backend must work with the etcd a cluster really
 * runs. Runs where a Docker engine exists; skipped (not failed) where none does, as here.
 */
@Testcontainers(disabledWithoutDocker = true)
class EtcdContainerContractTest extends DatastoreContractTest {

    private static final int CLIENT_PORT = 2379;

    @Container
    static final GenericContainer<?> ETCD = new GenericContainer<>("quay.io/coreos/etcd:v3.5.17")
            .withExposedPorts(CLIENT_PORT)
            .withCommand("etcd",
                    "--listen-client-urls", "http://0.0.0.0:" + CLIENT_PORT,
                    "--advertise-client-urls", "http://127.0.0.1:" + CLIENT_PORT)
            .waitingFor(Wait.forHttp("/health").forPort(CLIENT_PORT).withStartupTimeout(Duration.ofSeconds(60)));

    private static URI endpoint() {
        return URI.create("http://" + ETCD.getHost() + ":" + ETCD.getMappedPort(CLIENT_PORT));
    }

    @Override
    protected Datastore newDatastore() {
        EtcdAdmin.wipe(endpoint());
        return new EtcdDatastore(EtcdConfig.of(endpoint()).withProgressInterval(Duration.ofMillis(200)));
    }

    @Override
    protected long compactHistory(Datastore store) {
        return EtcdAdmin.compact(endpoint());
    }
}
