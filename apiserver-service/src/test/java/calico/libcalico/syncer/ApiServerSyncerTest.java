package calico.libcalico.syncer;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static calico.libcalico.datastore.memory.TestResources.networkSet;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.apiserver.datastore.SharedApiServer;
import calico.libcalico.datastore.apiserver.ApiServerDatastore;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The unchanged {@link WatcherSyncer} (what typha and felix run) over {@code ApiServerDatastore}
 * and a real apiserver-service: in sync, following changes, and healing broken watch streams
 * followed by a compaction (reconnect gets 410, the syncer lists again). In libcalico's package:
 * its test helpers are package-private.
 */
class ApiServerSyncerTest {

    private static final ResourceKind[] KINDS = {ResourceKind.GLOBAL_NETWORK_SET, ResourceKind.NETWORK_SET};

    private final RecordingCallbacks cb = new RecordingCallbacks();

    @Test
    void reachesInSyncFollowsChangesAndHealsBrokenStreamsAcrossACompaction() throws Exception {
        // Retries slower than the writes below, so the re-watch starts from a compacted revision.
        try (ApiServerDatastore store = SharedApiServer.get().newDatastore();
             WatcherSyncer syncer = new WatcherSyncer(store, Set.of(KINDS), cb,
                     SyncerOptions.defaults().withRetryDelays(Duration.ofMillis(1_000), Duration.ofMillis(2_000)))) {
            store.create(globalSet("a", "10.1.0.0/16"));
            store.create(networkSet("prod", "n", "10.9.0.0/24"));
            syncer.start();
            cb.awaitStatus(SyncerStatus.IN_SYNC);
            assertThat(cb.view()).isEqualTo(RecordingCallbacks.snapshot(store, KINDS));

            store.update(globalSet("a", "10.2.0.0/16"));
            store.create(globalSet("b", "10.3.0.0/16"));
            cb.awaitConverged(store, KINDS);

            MemoryDatastore server = SharedApiServer.get().serverStore();
            server.failWatches(); // every stream ends with ERROR 500: the syncer's watches fail
            store.delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"), null);
            store.create(globalSet("c", "10.4.0.0/16"));
            server.compact(server.currentRevision());

            cb.awaitConverged(store, KINDS);
            assertThat(cb.view().keySet()).containsExactlyInAnyOrder(
                    ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "b"),
                    ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "c"),
                    ResourceKey.of(ResourceKind.NETWORK_SET, "prod", "n"));
            assertThat(cb.violations()).isEmpty();

            store.create(globalSet("d", "10.5.0.0/16"));
            cb.awaitConverged(store, KINDS);
            assertThat(cb.view()).containsKey(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "d"));
        }
    }
}
