package calico.libcalico.datastore.etcd;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreContractTest;
import calico.libcalico.testing.EtcdServerExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The datastore contract against a real etcd. */
class EtcdDatastoreContractTest extends DatastoreContractTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected Datastore newDatastore() {
        wipe();
        return new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()).withProgressInterval(Duration.ofMillis(200)));
    }

    @Override
    protected long compactHistory(Datastore store) {
        return ETCD.compact();
    }

    /** Deletes every Calico key so that each test starts from an empty store (history stays). */
    private static void wipe() {
        try (Client c = Client.builder().endpoints(ETCD.endpoint()).build()) {
            ByteSequence root = ByteSequence.from(new byte[] {'/'});
            c.getKVClient().delete(root, DeleteOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot wipe etcd", e);
        }
    }
}
