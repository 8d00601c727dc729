package calico.libcalico.datastore.memory;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static calico.libcalico.datastore.memory.TestResources.net;
import static calico.libcalico.datastore.memory.TestResources.networkSet;
import static calico.libcalico.datastore.memory.TestResources.withNet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MemoryDatastoreTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-01T10:15:30.750Z"), ZoneOffset.UTC);
    private static final ResourceKind GNS = ResourceKind.GLOBAL_NETWORK_SET;
    private static final ResourceKind NS = ResourceKind.NETWORK_SET;

    private final MemoryDatastore ds = new MemoryDatastore(MemoryDatastore.Settings.defaults().withClock(CLOCK));

    @AfterEach
    void close() {
        ds.close();
    }

    // ---- create / get --------------------------------------------------------------------------

    @Test
    void createStampsUidTimestampAndRevision() {
        assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION);

        Resource stored = ds.create(globalSet("a", "10.0.0.0/24"));

        assertThat(stored.metadata().resourceVersion()).isEqualTo(Long.toString(MemoryDatastore.INITIAL_REVISION + 1));
        assertThat(stored.metadata().uid()).matches("[0-9a-f-]{36}");
        assertThat(stored.metadata().creationTimestamp()).isEqualTo("2026-12-01T10:15:30Z");
        assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION + 1);
        assertThat(ds.get(stored.key())).contains(stored);
        assertThat(ds.get(ResourceKey.of(GNS, "missing"))).isEmpty();
    }

    @Test
    void everyWriteTakesTheNextRevisionAcrossKinds() {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource b = ds.create(networkSet("ns1", "b", "10.0.1.0/24"));
        Resource a2 = ds.update(withNet(a, "10.0.2.0/24"));
        Resource gone = ds.delete(b.key(), null);

        long r0 = MemoryDatastore.INITIAL_REVISION;
        assertThat(List.of(a, b, a2)).extracting(r -> r.metadata().resourceVersion())
                .containsExactly(Long.toString(r0 + 1), Long.toString(r0 + 2), Long.toString(r0 + 3));
        assertThat(gone).isEqualTo(b);
        assertThat(ds.currentRevision()).isEqualTo(r0 + 4);
    }

    @Test
    void listAtAnEarlierRevisionRollsLaterWritesBack() {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        ds.create(globalSet("b", "10.0.1.0/24"));
        ds.create(networkSet("ns1", "n", "10.0.9.0/24"));
        long rev = ds.list(GNS).revision();
        ds.update(withNet(a, "10.0.2.0/24"));
        ds.delete(ResourceKey.of(GNS, "b"), null);
        ds.create(globalSet("c", "10.0.3.0/24"));
        ds.delete(ResourceKey.of(NS, "ns1", "n"), null);

        ListResult then = ds.listAt(GNS, null, null, rev);
        assertThat(then.revision()).isEqualTo(rev);
        assertThat(then.items()).extracting(r -> r.metadata().name() + "=" + net(r))
                .containsExactly("a=10.0.0.0/24", "b=10.0.1.0/24");
        assertThat(ds.listAt(NS, "ns1", null, rev).items()).hasSize(1);
        assertThat(ds.listAt(GNS, null, null, ds.currentRevision()).items()).extracting(r -> r.metadata().name())
                .containsExactly("a", "c");

        ds.compact(ds.currentRevision());
        assertThatThrownBy(() -> ds.listAt(GNS, null, null, rev)).isInstanceOf(DatastoreException.Compacted.class);
        assertThatThrownBy(() -> ds.listAt(GNS, null, null, ds.currentRevision() + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("revision");
    }

    @Test
    void createOfAnExistingResourceIsAlreadyExistsAndDoesNotWrite() {
        ds.create(globalSet("a", "10.0.0.0/24"));
        long before = ds.currentRevision();

        assertThatThrownBy(() -> ds.create(globalSet("a", "10.9.0.0/24")))
                .isInstanceOf(DatastoreException.AlreadyExists.class)
                .hasMessageContaining("GlobalNetworkSet(a)");
        assertThat(ds.currentRevision()).isEqualTo(before);
        assertThat(net(ds.get(ResourceKey.of(GNS, "a")).orElseThrow())).isEqualTo("10.0.0.0/24");
    }

    @Test
    void createWithAResourceVersionIsInvalid() {
        GlobalNetworkSet withVersion = globalSet("a", "10.0.0.0/24");
        Resource r = withVersion.withMetadata(withVersion.metadata().withResourceVersion("12"));

        assertThatThrownBy(() -> ds.create(r))
                .isInstanceOfSatisfying(DatastoreException.Invalid.class, e -> assertThat(e.validation().errors())
                        .singleElement().satisfies(f -> assertThat(f.field()).isEqualTo("metadata.resourceVersion")));
    }

    @Test
    void namespaceMustMatchTheKindScope() {
        Resource noNamespace = networkSet(null, "b", "10.0.0.0/24");
        GlobalNetworkSet g = globalSet("a", "10.0.0.0/24");
        Resource clusterWithNamespace = g.withMetadata(g.metadata().withNamespace("ns1"));

        assertThatThrownBy(() -> ds.create(noNamespace))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("metadata.namespace: is required");
        assertThatThrownBy(() -> ds.create(clusterWithNamespace))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("metadata.namespace: must not be set");
        assertThatThrownBy(() -> ds.create(new GlobalNetworkSet(ObjectMeta.named(""), g.spec())))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("metadata.name: is required");
        assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION);
    }

    // ---- update --------------------------------------------------------------------------------

    @Test
    void updatePreservesUidAndCreationTimestampAndBumpsTheVersion() {
        Resource created = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource changed = withNet(created, "10.0.1.0/24");
        Resource forged = changed.withMetadata(changed.metadata().withCreation("forged-uid", "1999-01-01T00:00:00Z"));

        Resource updated = ds.update(forged);

        assertThat(updated.metadata().uid()).isEqualTo(created.metadata().uid());
        assertThat(updated.metadata().creationTimestamp()).isEqualTo(created.metadata().creationTimestamp());
        assertThat(Long.parseLong(updated.metadata().resourceVersion()))
                .isEqualTo(Long.parseLong(created.metadata().resourceVersion()) + 1);
        assertThat(ds.get(created.key())).contains(updated);
    }

    @Test
    void updateWithAStaleVersionIsAConflict() {
        Resource v1 = ds.create(globalSet("a", "10.0.0.0/24"));
        ds.update(withNet(v1, "10.0.1.0/24"));
        long before = ds.currentRevision();

        assertThatThrownBy(() -> ds.update(withNet(v1, "10.0.2.0/24")))
                .isInstanceOf(DatastoreException.Conflict.class)
                .hasMessageContaining("resourceVersion " + v1.metadata().resourceVersion() + " is stale");
        assertThat(ds.currentRevision()).isEqualTo(before);
        assertThat(net(ds.get(v1.key()).orElseThrow())).isEqualTo("10.0.1.0/24");
    }

    @Test
    void updateWithoutAVersionOverwrites() {
        ds.create(globalSet("a", "10.0.0.0/24"));
        ds.update(globalSet("a", "10.0.1.0/24"));

        Resource last = ds.update(globalSet("a", "10.0.2.0/24"));

        assertThat(net(last)).isEqualTo("10.0.2.0/24");
        assertThat(ds.get(last.key())).contains(last);
    }

    @Test
    void updateOfAMissingResourceIsNotFound() {
        assertThatThrownBy(() -> ds.update(globalSet("nope", "10.0.0.0/24")))
                .isInstanceOf(DatastoreException.NotFound.class)
                .hasMessageContaining("GlobalNetworkSet(nope)");
        assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION);
    }

    @Test
    void aResourceVersionThatIsNotARevisionIsInvalid() {
        Resource v1 = ds.create(globalSet("a", "10.0.0.0/24"));

        assertThatThrownBy(() -> ds.update(v1.withMetadata(v1.metadata().withResourceVersion("abc"))))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("metadata.resourceVersion");
        assertThatThrownBy(() -> ds.delete(v1.key(), "-3"))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("metadata.resourceVersion");
    }

    // ---- delete --------------------------------------------------------------------------------

    @Test
    void deleteReturnsThePreviousValueAndHonoursTheVersion() {
        Resource v1 = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource v2 = ds.update(withNet(v1, "10.0.1.0/24"));

        assertThatThrownBy(() -> ds.delete(v1.key(), v1.metadata().resourceVersion()))
                .isInstanceOf(DatastoreException.Conflict.class);
        Resource deleted = ds.delete(v1.key(), v2.metadata().resourceVersion());

        assertThat(deleted).isEqualTo(v2);
        assertThat(ds.get(v1.key())).isEmpty();
        assertThatThrownBy(() -> ds.delete(v1.key(), null)).isInstanceOf(DatastoreException.NotFound.class);
    }

    @Test
    void optimisticConcurrencyLetsExactlyOneOfConcurrentWritersWin() throws Exception {
        ResourceKey key = ds.create(globalSet("counter", "10.0.0.0/24", Map.of("n", "0"))).key();
        int threads = 4;
        int incrementsEach = 100;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> conflicts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                conflicts.add(pool.submit(() -> {
                    int seen = 0;
                    for (int i = 0; i < incrementsEach; ) {
                        Resource cur = ds.get(key).orElseThrow();
                        int n = Integer.parseInt(cur.metadata().labels().get("n"));
                        try {
                            ds.update(cur.withMetadata(cur.metadata().withLabels(Map.of("n", Integer.toString(n + 1)))));
                            i++;
                        } catch (DatastoreException.Conflict e) {
                            seen++;
                        }
                    }
                    return seen;
                }));
            }
            for (Future<Integer> f : conflicts) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Resource last = ds.get(key).orElseThrow();
        assertThat(last.metadata().labels()).containsEntry("n", Integer.toString(threads * incrementsEach));
        assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION + 1 + threads * incrementsEach);
    }

    // ---- list ----------------------------------------------------------------------------------

    @Test
    void listIsSortedByNamespaceThenNameAndFiltersByNamespace() {
        ds.create(networkSet("ns2", "a", "10.0.0.0/24"));
        ds.create(networkSet("ns1", "z", "10.0.1.0/24"));
        ds.create(networkSet("ns1", "b", "10.0.2.0/24"));
        ds.create(globalSet("other-kind", "10.0.3.0/24"));

        ListResult all = ds.list(NS);
        ListResult ns1 = ds.list(NS, "ns1", null);

        assertThat(all.items()).extracting(r -> r.metadata().namespace() + "/" + r.metadata().name())
                .containsExactly("ns1/b", "ns1/z", "ns2/a");
        assertThat(all.revision()).isEqualTo(ds.currentRevision());
        assertThat(ns1.items()).extracting(r -> r.metadata().name()).containsExactly("b", "z");
        assertThat(ds.list(NS, null, "all()").items()).hasSize(3);
        assertThat(ds.list(ResourceKind.TIER).items()).isEmpty();
    }

    @Test
    void aSelectorThatDoesNotParseIsInvalidAndNamesTheField() {
        assertThatThrownBy(() -> ds.list(GNS, null, "role == "))
                .isInstanceOfSatisfying(DatastoreException.Invalid.class, e -> assertThat(e.validation().errors())
                        .singleElement().satisfies(f -> assertThat(f.field()).isEqualTo("labelSelector")));
    }

    // ---- watch ---------------------------------------------------------------------------------

    @Test
    void watchFromZeroStartsNowAndReportsEachKindOfChangeWithThePreviousValue() throws Exception {
        Resource before = ds.create(globalSet("old", "10.0.0.0/24"));
        EventRecorder events = new EventRecorder();
        try (Watch ignored = ds.watch(GNS, null, 0, events)) {
            Resource a = ds.create(globalSet("a", "10.0.1.0/24"));
            Resource a2 = ds.update(withNet(a, "10.0.2.0/24"));
            ds.create(networkSet("ns1", "other-kind", "10.0.3.0/24"));
            Resource gone = ds.delete(before.key(), null);

            assertThat(events.next(WatchEvent.Added.class)).isEqualTo(new WatchEvent.Added(a, rev(a)));
            assertThat(events.next(WatchEvent.Modified.class)).isEqualTo(new WatchEvent.Modified(a2, a, rev(a2)));
            assertThat(events.next(WatchEvent.Deleted.class))
                    .isEqualTo(new WatchEvent.Deleted(before.key(), gone, ds.currentRevision()));
            events.expectSilence();
        }
    }

    @Test
    void watchFromARevisionReplaysEverythingAfterIt() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource b = ds.create(globalSet("b", "10.0.1.0/24"));
        Resource a2 = ds.update(withNet(a, "10.0.2.0/24"));
        EventRecorder events = new EventRecorder();

        try (Watch ignored = ds.watch(GNS, null, rev(a), events)) {
            assertThat(events.take(2)).containsExactly(
                    new WatchEvent.Added(b, rev(b)), new WatchEvent.Modified(a2, a, rev(a2)));
            Resource c = ds.create(globalSet("c", "10.0.3.0/24"));
            assertThat(events.next()).isEqualTo(new WatchEvent.Added(c, rev(c)));
        }
    }

    @Test
    void namespacedWatchSeesOnlyItsNamespace() throws Exception {
        EventRecorder events = new EventRecorder();
        try (Watch ignored = ds.watch(NS, "ns1", 0, events)) {
            ds.create(networkSet("ns2", "x", "10.0.0.0/24"));
            Resource mine = ds.create(networkSet("ns1", "y", "10.0.1.0/24"));

            assertThat(events.next()).isEqualTo(new WatchEvent.Added(mine, rev(mine)));
            events.expectSilence();
        }
    }

    @Test
    void aWatchFromACompactedRevisionEndsWithCompacted() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        Resource b = ds.create(globalSet("b", "10.0.1.0/24"));
        Resource c = ds.create(globalSet("c", "10.0.2.0/24"));
        ds.compact(rev(c));
        EventRecorder tooOld = new EventRecorder();
        EventRecorder justInTime = new EventRecorder();

        try (Watch w1 = ds.watch(GNS, null, rev(a), tooOld); Watch w2 = ds.watch(GNS, null, rev(b), justInTime)) {
            WatchEvent.Compacted compacted = tooOld.next(WatchEvent.Compacted.class);
            assertThat(compacted.compactRevision()).isEqualTo(rev(c));
            assertThat(justInTime.next()).isEqualTo(new WatchEvent.Added(c, rev(c)));

            ds.create(globalSet("d", "10.0.3.0/24"));
            justInTime.next(WatchEvent.Added.class);
            tooOld.expectSilence();
        }
        assertThat(ds.compactRevision()).isEqualTo(rev(c));
        assertThatThrownBy(() -> ds.compact(ds.currentRevision() + 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theHistoryIsBoundedAndTrimmingCompacts() throws Exception {
        try (MemoryDatastore small = new MemoryDatastore(MemoryDatastore.Settings.defaults().withHistoryLimit(3))) {
            List<Resource> written = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                written.add(small.create(globalSet("s" + i, "10.0." + i + ".0/24")));
            }
            EventRecorder lost = new EventRecorder();
            EventRecorder kept = new EventRecorder();
            small.watch(GNS, null, rev(written.get(0)), lost);
            small.watch(GNS, null, rev(written.get(1)), kept);

            assertThat(lost.next(WatchEvent.Compacted.class).compactRevision()).isEqualTo(rev(written.get(2)));
            assertThat(kept.take(3)).extracting(WatchEvent::revision)
                    .containsExactly(rev(written.get(2)), rev(written.get(3)), rev(written.get(4)));
        }
    }

    @Test
    void aWatchIdleWhileOtherKindsAreWrittenIsNotCompactedByTrimming() throws Exception {
        // Writers wake only the watches a change is for; an idle watch must still move its cursor
        // past the others' changes before the bounded history trims them away.
        try (MemoryDatastore small = new MemoryDatastore(MemoryDatastore.Settings.defaults().withHistoryLimit(10))) {
            EventRecorder idle = new EventRecorder();
            small.watch(GNS, null, 0, idle);
            for (int i = 0; i < 200; i++) {
                small.create(networkSet("ns1", "n" + i, "10.0.1.0/24"));
            }
            Resource mine = small.create(globalSet("mine", "10.0.0.0/24"));

            assertThat(idle.next()).isEqualTo(new WatchEvent.Added(mine, rev(mine)));
            idle.expectSilence();
        }
    }

    @Test
    void aLiveWatchThatFallsBehindACompactionEndsWithCompacted() throws Exception {
        try (MemoryDatastore small = new MemoryDatastore(MemoryDatastore.Settings.defaults().withHistoryLimit(10))) {
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            EventRecorder events = new EventRecorder();
            small.watch(GNS, null, 0, e -> {
                entered.countDown();
                awaitQuietly(release);
                events.onEvent(e);
            });
            Resource first = small.create(globalSet("first", "10.0.0.0/24"));
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            // While the listener holds the first event, the history moves past what the watch needs next.
            for (int i = 0; i < 50; i++) {
                small.create(globalSet("later-" + i, "10.0.1.0/24"));
            }
            release.countDown();

            assertThat(events.next()).isEqualTo(new WatchEvent.Added(first, rev(first)));
            assertThat(events.next(WatchEvent.Compacted.class).compactRevision()).isEqualTo(small.compactRevision());
            events.expectSilence();
        }
    }

    @Test
    void aBookmarkFollowsTheEventsItCovers() throws Exception {
        EventRecorder events = new EventRecorder();
        try (Watch ignored = ds.watch(GNS, null, 0, events)) {
            Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
            Resource other = ds.create(networkSet("ns1", "x", "10.0.1.0/24"));
            ds.requestProgress();

            assertThat(events.next()).isEqualTo(new WatchEvent.Added(a, rev(a)));
            assertThat(events.next(WatchEvent.Bookmark.class).revision()).isGreaterThanOrEqualTo(rev(other));
        }
    }

    @Test
    void periodicBookmarksWhenConfigured() throws Exception {
        try (MemoryDatastore ticking = new MemoryDatastore(
                MemoryDatastore.Settings.defaults().withBookmarkInterval(Duration.ofMillis(20)))) {
            EventRecorder events = new EventRecorder();
            ticking.watch(GNS, null, 0, events);
            Resource a = ticking.create(globalSet("a", "10.0.0.0/24"));

            WatchEvent e;
            do {
                e = events.next();
            } while (!(e instanceof WatchEvent.Bookmark b && b.revision() >= rev(a)));
        }
    }

    @Test
    void aSlowListenerDoesNotBlockWritersAndStillGetsEverythingInOrder() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        EventRecorder events = new EventRecorder();
        try (Watch ignored = ds.watch(GNS, null, 0, e -> {
            awaitQuietly(release);
            events.onEvent(e);
        })) {
            int writes = 500;
            for (int i = 0; i < writes; i++) {
                ds.create(globalSet("g" + i, "10.1.0.0/24"));
            }
            // All writes completed while the listener was blocked on its first event.
            assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION + writes);
            release.countDown();

            List<WatchEvent> got = events.take(writes);
            assertThat(got).extracting(WatchEvent::revision).isSorted().doesNotHaveDuplicates();
            assertThat(got.get(writes - 1).revision()).isEqualTo(ds.currentRevision());
            assertThat(events.threads).hasSize(1);
        }
    }

    @Test
    void closeStopsDeliveryEvenFromInsideTheListener() throws Exception {
        EventRecorder events = new EventRecorder();
        Watch[] self = new Watch[1];
        self[0] = ds.watch(GNS, null, 0, e -> {
            events.onEvent(e);
            self[0].close();
        });
        ds.create(globalSet("a", "10.0.0.0/24"));
        ds.create(globalSet("b", "10.0.1.0/24"));

        events.next(WatchEvent.Added.class);
        events.expectSilence();

        EventRecorder other = new EventRecorder();
        Watch w = ds.watch(GNS, null, 0, other);
        w.close();
        w.close();
        ds.create(globalSet("c", "10.0.2.0/24"));
        other.expectSilence();
    }

    @Test
    void aBrokenWatchEndsWithFailedAndCanResumeFromItsRevision() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        EventRecorder events = new EventRecorder();
        ds.watch(GNS, null, 0, events);
        Resource b = ds.create(globalSet("b", "10.0.1.0/24"));
        assertThat(events.next()).isEqualTo(new WatchEvent.Added(b, rev(b)));

        ds.failWatches();
        WatchEvent.Failed failed = events.next(WatchEvent.Failed.class);
        assertThat(failed.error()).isInstanceOf(DatastoreException.Unavailable.class);
        assertThat(failed.error().retryable()).isTrue();
        Resource c = ds.create(globalSet("c", "10.0.2.0/24"));
        events.expectSilence();

        EventRecorder resumed = new EventRecorder();
        try (Watch ignored = ds.watch(GNS, null, failed.revision(), resumed)) {
            assertThat(failed.revision()).isGreaterThanOrEqualTo(rev(b));
            assertThat(resumed.next()).isEqualTo(new WatchEvent.Added(c, rev(c)));
        }
        assertThat(a).isNotNull();
    }

    @Test
    void anUnavailableDatastoreRefusesCallsAndBreaksWatches() throws Exception {
        Resource a = ds.create(globalSet("a", "10.0.0.0/24"));
        EventRecorder open = new EventRecorder();
        ds.watch(GNS, null, 0, open);

        ds.setAvailable(false);

        assertThat(open.next(WatchEvent.Failed.class).error()).isInstanceOf(DatastoreException.Unavailable.class);
        assertThatThrownBy(() -> ds.get(a.key())).isInstanceOf(DatastoreException.Unavailable.class);
        assertThatThrownBy(() -> ds.list(GNS)).isInstanceOf(DatastoreException.Unavailable.class);
        assertThatThrownBy(() -> ds.create(globalSet("b", "10.0.1.0/24")))
                .isInstanceOf(DatastoreException.Unavailable.class);
        EventRecorder refused = new EventRecorder();
        ds.watch(GNS, null, 0, refused);
        assertThat(refused.next(WatchEvent.Failed.class).error().retryable()).isTrue();

        ds.setAvailable(true);
        assertThat(ds.list(GNS).items()).containsExactly(a);
    }

    @Test
    void aClosedDatastoreEndsItsWatchesAndRefusesCalls() throws Exception {
        EventRecorder events = new EventRecorder();
        ds.watch(GNS, null, 0, events);
        ds.close();

        assertThatThrownBy(() -> ds.create(globalSet("a", "10.0.0.0/24"))).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> ds.watch(GNS, null, 0, events)).isInstanceOf(IllegalStateException.class);
        events.expectSilence();
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
}
