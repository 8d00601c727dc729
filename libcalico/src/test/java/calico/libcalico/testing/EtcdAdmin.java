package calico.libcalico.testing;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.CompactOption;
import io.etcd.jetcd.options.DeleteOption;
import java.net.URI;
import java.util.concurrent.TimeUnit;

/** Administrative calls tests make on any etcd, however it was started (process or container). */
public final class EtcdAdmin {

    private EtcdAdmin() {
    }

    /** Compacts away all history before the current revision; {@return the compaction revision}. */
    public static long compact(URI endpoint) {
        try (Client c = Client.builder().endpoints(endpoint).build()) {
            long rev = c.getKVClient().get(ByteSequence.from(new byte[] {0})).get(10, TimeUnit.SECONDS)
                    .getHeader().getRevision();
            c.getKVClient().compact(rev, CompactOption.builder().withCompactPhysical(true).build())
                    .get(10, TimeUnit.SECONDS);
            return rev;
        } catch (Exception e) {
            throw new IllegalStateException("compaction of " + endpoint + " failed", e);
        }
    }

    /** Deletes every key, so a test starts from an empty store (history stays). */
    public static void wipe(URI endpoint) {
        try (Client c = Client.builder().endpoints(endpoint).build()) {
            ByteSequence root = ByteSequence.from(new byte[] {'/'});
            c.getKVClient().delete(root, DeleteOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot wipe " + endpoint, e);
        }
    }
}
