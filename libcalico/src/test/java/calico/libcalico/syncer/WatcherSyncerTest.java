package calico.libcalico.syncer;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static calico.libcalico.datastore.memory.TestResources.networkSet;
import static calico.libcalico.datastore.memory.TestResources.withNet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.syncer.RecordingCallbacks.StatusEntry;
import calico.libcalico.syncer.RecordingCallbacks.UpdateEntry;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.ForwardingDatastore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WatcherSyncerTest {

    private static final ResourceKind GNS = ResourceKind.GLOBAL_NETWORK_SET;
    private static final ResourceKind NS = ResourceKind.NETWORK_SET;
    private static final SyncerStatus WAIT = SyncerStatus.WAIT_FOR_DATASTORE;
    private static final SyncerStatus RESYNC = SyncerStatus.RESYNC_IN_PROGRESS;
    private static final SyncerStatus IN_SYNC = SyncerStatus.IN_SYNC;

    private final MemoryDatastore ds = new MemoryDatastore();
    private final GatedSleeper sleeper = new GatedSleeper();
    private final RecordingCallbacks cb = new RecordingCallbacks();
    private SyncerOptions options = SyncerOptions.defaults()
            .withSleeper(sleeper)
            .withRetryDelays(Duration.ofMillis(1), Duration.ofMillis(8));
    private WatcherSyncer syncer;

    private static final Duration WAIT_LIMIT = Duration.ofSeconds(10);

    /** {@return the live syncer threads (dispatchers and caches) of every syncer in this JVM} */
    private static Set<Thread> syncerThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("syncer-"))
                .collect(Collectors.toSet());
    }

    /**
     * Waits until no syncer thread is alive but those of {@code others} (alive before this test's
     * syncer started): from then on this syncer can call back no more.
     */
    private static void awaitSyncerThreadsEnded(Set<Thread> others) {
        Await.until("the syncer's threads ended", WAIT_LIMIT, () -> others.containsAll(syncerThreads()));
    }

    @AfterEach
    void tearDown() {
        if (syncer != null) {
            syncer.stop();
        }
        ds.close();
    }

    @Test
    void snapshotThenInSyncThenLiveUpdatesInOrder() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource b = ds.create(globalSet("b", "10.0.1.0/24"));
        Resource c = ds.create(globalSet("c", "10.0.2.0/24"));

        start(ds, GNS);
        cb.awaitStatus(IN_SYNC);

        assertThat(cb.log()).containsExactly(
                new StatusEntry(WAIT), new StatusEntry(RESYNC),
                new UpdateEntry(Update.of(UpdateType.NEW, a, rev(a)), 1),
                new UpdateEntry(Update.of(UpdateType.NEW, b, rev(b)), 1),
                new UpdateEntry(Update.of(UpdateType.NEW, c, rev(c)), 1),
                new StatusEntry(IN_SYNC));
        assertThat(syncer.status()).isEqualTo(IN_SYNC);

        int mark = cb.size();
        Resource d = ds.create(globalSet("d", "10.0.3.0/24"));
        Resource b2 = ds.update(withNet(b, "10.0.4.0/24"));
        ds.delete(a.key(), null);
        long deletedAt = ds.currentRevision();
        cb.awaitEntries(mark, 3);

        assertThat(cb.updatesAfter(mark)).containsExactly(
                Update.of(UpdateType.NEW, d, rev(d)),
                Update.of(UpdateType.UPDATED, b2, rev(b2)),
                Update.deleted(a.key(), deletedAt));
        cb.assertClean();
    }

    @Test
    void anEmptyDatastoreStillGoesInSync() throws Exception {
        start(ds, GNS, NS);
        cb.awaitStatus(IN_SYNC);

        assertThat(cb.log()).containsExactly(new StatusEntry(WAIT), new StatusEntry(RESYNC), new StatusEntry(IN_SYNC));
        cb.assertClean();
    }

    @Test
    void aBurstOfWritesDuringTheInitialListIsNeitherLostNorDuplicated() throws Exception {
        int count = 3000;
        CountDownLatch go = new CountDownLatch(1);
        Thread writer = new Thread(() -> {
            awaitQuietly(go);
            for (int i = 0; i < count; i++) {
                ds.create(globalSet("burst-" + i, "10.2.0.0/24"));
            }
        });
        writer.start();
        go.countDown();
        start(ds, GNS);
        writer.join();

        cb.awaitConverged(ds, GNS);
        Map<ResourceKey, List<UpdateType>> perKey = cb.updatesAfter(0).stream()
                .collect(Collectors.groupingBy(Update::key, Collectors.mapping(Update::type, Collectors.toList())));
        assertThat(perKey).hasSize(count);
        assertThat(perKey.values()).allSatisfy(types -> assertThat(types).containsExactly(UpdateType.NEW));
        cb.assertClean();
    }

    @Test
    void aCompactionDuringAnOutageResyncsAndReportsOnlyTheDifferences() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource b = ds.create(globalSet("b", "10.0.1.0/24"));
        Resource c = ds.create(globalSet("c", "10.0.2.0/24"));
        ds.create(globalSet("d", "10.0.3.0/24"));
        start(ds, GNS);
        awaitWatching();
        int mark = cb.size();

        // Break the watch and hold the syncer in its retry wait while the datastore moves on.
        sleeper.shut();
        ds.failWatches();
        sleeper.awaitWaiting(1);
        Resource e = ds.create(globalSet("e", "10.0.4.0/24"));
        Resource b2 = ds.update(withNet(b, "10.0.5.0/24"));
        ds.delete(c.key(), null);
        Resource f = ds.create(globalSet("f", "10.0.6.0/24"));
        ds.delete(f.key(), null);
        long listedAt = ds.currentRevision();
        ds.compact(listedAt);
        sleeper.open();

        cb.awaitConverged(ds, GNS);
        // A marker after the heal: anything the resync still had to say comes before it.
        Resource marker = ds.create(globalSet("marker", "10.0.7.0/24"));
        cb.awaitConverged(ds, GNS);
        // Only the net effect: nothing for a and d (unchanged) nor for f (created and deleted in the gap).
        assertThat(cb.updatesAfter(mark)).containsExactly(
                Update.of(UpdateType.UPDATED, b2, rev(b2)),
                Update.of(UpdateType.NEW, e, rev(e)),
                Update.deleted(c.key(), listedAt),
                Update.of(UpdateType.NEW, marker, rev(marker)));
        assertThat(cb.statuses()).containsExactly(WAIT, RESYNC, IN_SYNC);
        assertThat(a).isNotNull();
        cb.assertClean();
    }

    @Test
    void aBrokenWatchResumesFromItsRevisionAndMissesNothing() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource b = ds.create(globalSet("b", "10.0.1.0/24"));
        start(ds, GNS);
        awaitWatching();
        int mark = cb.size();

        sleeper.shut();
        ds.failWatches();
        sleeper.awaitWaiting(1);
        Resource e = ds.create(globalSet("e", "10.0.4.0/24"));
        Resource b2 = ds.update(withNet(b, "10.0.5.0/24"));
        ds.delete(a.key(), null);
        long aDeletedAt = ds.currentRevision();
        Resource f = ds.create(globalSet("f", "10.0.6.0/24"));
        ds.delete(f.key(), null);
        long fDeletedAt = ds.currentRevision();
        sleeper.open();

        cb.awaitEntries(mark, 5);
        // The history is intact, so the syncer resumed the watch: every change, once, in order.
        assertThat(cb.updatesAfter(mark)).containsExactly(
                Update.of(UpdateType.NEW, e, rev(e)),
                Update.of(UpdateType.UPDATED, b2, rev(b2)),
                Update.deleted(a.key(), aDeletedAt),
                Update.of(UpdateType.NEW, f, rev(f)),
                Update.deleted(f.key(), fDeletedAt));
        assertThat(cb.statuses()).containsExactly(WAIT, RESYNC, IN_SYNC);
        cb.assertClean();
    }

    @Test
    void anOutageIsRiddenOutAndHealedAfterwards() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        ds.create(globalSet("b", "10.0.1.0/24"));
        start(ds, GNS);
        cb.awaitStatus(IN_SYNC);
        int mark = cb.size();

        ds.setAvailable(false);
        // Enough failed rounds for broken watches to exceed the per-revision limit and fall back to failing lists.
        int rounds = sleeper.sleeps();
        Await.until("the outage outlasting the watch error limit", WAIT_LIMIT,
                () -> sleeper.sleeps() >= rounds + options.maxWatchErrorsPerRevision() + 3);
        ds.setAvailable(true);
        Resource c = ds.create(globalSet("c", "10.0.2.0/24"));
        ds.delete(a.key(), null);

        cb.awaitConverged(ds, GNS);
        assertThat(cb.updatesAfter(mark)).extracting(Update::type, Update::key)
                .containsExactly(tuple(UpdateType.NEW, c.key()), tuple(UpdateType.DELETED, a.key()));
        assertThat(cb.statuses()).containsExactly(WAIT, RESYNC, IN_SYNC);
        cb.assertClean();
    }

    @Test
    void startingWhileTheDatastoreIsDownWaitsForIt() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        ds.setAvailable(false);

        start(ds, GNS);
        // The syncer's own word that it tried and will try again: two failed rounds.
        Await.until("two failed rounds", WAIT_LIMIT, () -> sleeper.sleeps() >= 2);
        assertThat(cb.log()).containsExactly(new StatusEntry(WAIT));
        assertThat(syncer.status()).isEqualTo(WAIT);

        ds.setAvailable(true);
        cb.awaitStatus(IN_SYNC);
        assertThat(cb.log()).containsExactly(new StatusEntry(WAIT), new StatusEntry(RESYNC),
                new UpdateEntry(Update.of(UpdateType.NEW, a, rev(a)), 1), new StatusEntry(IN_SYNC));
        cb.assertClean();
    }

    @Test
    void inSyncWaitsForEveryKindsSnapshotWhileReadyKindsAlreadyFlow() throws Exception {
        Resource g = ds.create(globalSet("g", "10.0.0.0/24"));
        Resource x = ds.create(networkSet("ns1", "x", "10.1.0.0/24"));
        Resource y = ds.create(networkSet("ns2", "y", "10.1.1.0/24"));
        CountDownLatch releaseNetworkSets = new CountDownLatch(1);
        Datastore slowNetworkSetList = new SlowListDatastore(ds, NS, releaseNetworkSets);

        start(slowNetworkSetList, GNS, NS);
        cb.awaitEntries(0, 3);
        Resource g2 = ds.create(globalSet("g2", "10.0.1.0/24"));
        cb.awaitEntries(0, 4);
        assertThat(cb.statuses()).containsExactly(WAIT, RESYNC);
        assertThat(cb.updatesAfter(0)).containsExactly(
                Update.of(UpdateType.NEW, g, rev(g)), Update.of(UpdateType.NEW, g2, rev(g2)));

        releaseNetworkSets.countDown();
        cb.awaitStatus(IN_SYNC);
        List<RecordingCallbacks.Entry> log = cb.log();
        assertThat(log.subList(log.size() - 3, log.size())).containsExactly(
                new UpdateEntry(Update.of(UpdateType.NEW, x, rev(x)), 3),
                new UpdateEntry(Update.of(UpdateType.NEW, y, rev(y)), 3),
                new StatusEntry(IN_SYNC));

        int mark = cb.size();
        Resource x2 = ds.update(withNet(x, "10.1.2.0/24"));
        Resource g3 = ds.create(globalSet("g3", "10.0.2.0/24"));
        cb.awaitEntries(mark, 2);
        assertThat(cb.updatesAfter(mark)).containsExactlyInAnyOrder(
                Update.of(UpdateType.UPDATED, x2, rev(x2)), Update.of(UpdateType.NEW, g3, rev(g3)));
        cb.assertClean();
    }

    @Test
    void batchesNeverExceedTheConfiguredSize() throws Exception {
        for (int i = 0; i < 35; i++) {
            ds.create(globalSet("s" + i, "10.3.0.0/24"));
        }
        options = options.withMaxBatchSize(10);

        start(ds, GNS);
        cb.awaitStatus(IN_SYNC);

        assertThat(cb.batchSizes()).containsExactly(10, 10, 10, 5);
        cb.assertClean();
    }

    @Test
    void stopEndsTheCallbacks() throws Exception {
        Set<Thread> others = syncerThreads();
        start(ds, GNS);
        cb.awaitStatus(IN_SYNC);

        syncer.stop();
        int size = cb.size();
        ds.create(globalSet("after-stop", "10.0.0.0/24"));
        awaitSyncerThreadsEnded(others); // nothing left that could call back

        assertThat(cb.size()).isEqualTo(size);
        syncer.stop();
        syncer.close();
        assertThatThrownBy(syncer::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("stopped");
        cb.assertClean();
    }

    @Test
    void stopFromInsideACallbackEndsDeliveryAfterIt() throws Exception {
        AtomicInteger updateCalls = new AtomicInteger();
        CountDownLatch stopped = new CountDownLatch(1);
        WatcherSyncer[] self = new WatcherSyncer[1];
        Set<Thread> others = syncerThreads();
        ds.create(globalSet("a", "10.0.0.0/24"));
        syncer = new WatcherSyncer(ds, Set.of(GNS), new SyncerCallbacks() {
            @Override
            public void onStatusUpdated(SyncerStatus status) {
            }

            @Override
            public void onUpdates(List<Update> updates) {
                updateCalls.incrementAndGet();
                self[0].stop();
                stopped.countDown();
            }
        }, options);
        self[0] = syncer;
        syncer.start();

        assertThat(stopped.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        ds.create(globalSet("b", "10.0.1.0/24"));
        awaitSyncerThreadsEnded(others); // they end on their own after a stop from a callback
        assertThat(updateCalls).hasValue(1);
    }

    @Test
    void startTwiceIsRefusedAndBadArgumentsAreNamed() {
        start(ds, GNS);
        assertThatThrownBy(syncer::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("started");
        assertThatThrownBy(() -> new WatcherSyncer(ds, Set.of(), cb))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("kinds");
        assertThatThrownBy(() -> options.withMaxBatchSize(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxBatchSize");
        assertThatThrownBy(() -> options.withRetryDelays(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRetryDelay");
        assertThatThrownBy(() -> new Update(ResourceKey.of(GNS, "a"), null, 3, UpdateType.NEW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a value");
    }

    /**
     * Waits until the syncer's watch is live: IN_SYNC is sent before the watch opens, so a test
     * that breaks the watch first writes a probe and waits for the syncer to report it.
     */
    private void awaitWatching() throws InterruptedException {
        cb.awaitStatus(IN_SYNC);
        Resource probe = ds.create(globalSet("probe", "10.9.0.0/24"));
        cb.awaitEntries(0, cb.log().indexOf(new StatusEntry(IN_SYNC)) + 2);
        assertThat(cb.view()).containsEntry(probe.key(), probe);
    }

    private void start(Datastore datastore, ResourceKind... kinds) {
        syncer = new WatcherSyncer(datastore, Set.of(kinds), cb, options);
        syncer.start();
    }

    private static long rev(Resource r) {
        return Long.parseLong(r.metadata().resourceVersion());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The memory datastore, except that listing one kind waits for a latch (a slow server for that kind). */
    private static final class SlowListDatastore extends ForwardingDatastore {

        private final ResourceKind slowKind;
        private final CountDownLatch release;

        SlowListDatastore(MemoryDatastore delegate, ResourceKind slowKind, CountDownLatch release) {
            super(delegate);
            this.slowKind = slowKind;
            this.release = release;
        }

        @Override
        public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
            if (kind == slowKind) {
                awaitQuietly(release);
            }
            return super.list(kind, namespace, labelSelector);
        }
    }
}
