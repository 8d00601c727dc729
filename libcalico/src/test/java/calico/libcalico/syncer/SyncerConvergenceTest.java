package calico.libcalico.syncer;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static calico.libcalico.datastore.memory.TestResources.networkSet;
import static calico.libcalico.datastore.memory.TestResources.withNet;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Randomised: writes to two kinds interleaved with broken watches, compactions (explicit and from
 * a small history limit) and short outages. Whatever happens, the view the listener rebuilds from
 * the updates converges to the datastore's lists, and the protocol checks of
 * {@link RecordingCallbacks} (no duplicate NEW, no unknown UPDATED/DELETED, increasing revisions
 * per key, one callback thread) hold throughout. Each seed is a reproducible case.
 */
class SyncerConvergenceTest {

    private static final ResourceKind GNS = ResourceKind.GLOBAL_NETWORK_SET;
    private static final ResourceKind NS = ResourceKind.NETWORK_SET;
    private static final int STEPS = 400;
    private static final int NAMES = 12;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233})
    void theListenersViewConvergesToTheDatastore(long seed) throws Exception {
        Random rnd = new Random(seed);
        RecordingCallbacks cb = new RecordingCallbacks();
        SyncerOptions options = SyncerOptions.defaults()
                .withRetryDelays(Duration.ZERO, Duration.ofMillis(2))
                .withMaxBatchSize(1 + rnd.nextInt(50))
                // Random 0-2 ms retry waits: varies the interleavings on purpose (not a wait for an event).
                .withSleeper(d -> Thread.sleep(ThreadLocalRandom.current().nextInt(3)));
        int historyLimit = 10 + rnd.nextInt(200);
        try (MemoryDatastore ds = new MemoryDatastore(MemoryDatastore.Settings.defaults().withHistoryLimit(historyLimit));
             WatcherSyncer syncer = new WatcherSyncer(ds, Set.of(GNS, NS), cb, options)) {
            for (int i = 0; i < 5; i++) {
                write(ds, rnd);
            }
            syncer.start();
            for (int step = 0; step < STEPS; step++) {
                int op = rnd.nextInt(100);
                if (op < 80) {
                    write(ds, rnd);
                } else if (op < 86) {
                    ds.failWatches();
                } else if (op < 92) {
                    ds.compact(Math.max(1, ds.currentRevision() - rnd.nextInt(5)));
                } else if (op < 95) {
                    ds.setAvailable(false);
                    Thread.sleep(rnd.nextInt(3)); // an outage of random length: the scenario, not a wait
                    ds.setAvailable(true);
                } else {
                    Thread.sleep(rnd.nextInt(3)); // lets the syncer run ahead of the writes: the scenario, not a wait
                }
                if (step % 100 == 99) {
                    cb.awaitConverged(ds, GNS, NS);
                }
            }
            cb.awaitConverged(ds, GNS, NS);
            assertThat(cb.statuses()).containsExactly(
                    SyncerStatus.WAIT_FOR_DATASTORE, SyncerStatus.RESYNC_IN_PROGRESS, SyncerStatus.IN_SYNC);
            cb.assertClean();
        }
    }

    /** One random create, update (with or without a resourceVersion) or delete of a random key. */
    private static void write(MemoryDatastore ds, Random rnd) {
        boolean global = rnd.nextBoolean();
        String name = "r" + rnd.nextInt(NAMES);
        String namespace = "ns" + rnd.nextInt(2);
        ResourceKey key = global ? ResourceKey.of(GNS, name) : ResourceKey.of(NS, namespace, name);
        String net = "10." + rnd.nextInt(256) + ".0.0/16";
        Optional<Resource> current = ds.get(key);
        try {
            if (current.isEmpty()) {
                ds.create(global ? globalSet(name, net) : networkSet(namespace, name, net));
            } else if (rnd.nextInt(3) == 0) {
                ds.delete(key, rnd.nextBoolean() ? current.get().metadata().resourceVersion() : null);
            } else if (rnd.nextBoolean()) {
                ds.update(withNet(current.get(), net));
            } else {
                Resource fresh = global ? globalSet(name, net) : networkSet(namespace, name, net);
                ds.update(fresh);
            }
        } catch (DatastoreException e) {
            throw new AssertionError("single writer: no write may fail here", e);
        }
    }
}
