package calico.libcalico.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.NetworkSet;
import calico.api.model.NetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.validation.FieldError;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link Datastore} backend must have. A backend's test extends this and
 * supplies {@link #newDatastore()} over an empty store and {@link #compactHistory(Datastore)}.
 *
 * <p>Only the {@code all()} selector is used here; selector semantics are tested where the
 * selector language lives.
 */
public abstract class DatastoreContractTest {

    /** Generous upper bound for anything asynchronous; tests finish as soon as the condition holds. */
    protected static final Duration WAIT = Duration.ofSeconds(20);

    protected Datastore store;

    /** {@return a new datastore over an empty store}, whose watches send bookmarks at least every few seconds. */
    protected abstract Datastore newDatastore();

    /** Discards the history of {@code store} before its current revision; {@return the compaction revision}. */
    protected abstract long compactHistory(Datastore store);

    /**
     * Whether a watch knows the previous value of a resource last written before the watch's
     * start revision (etcd: prevKV; memory: its history). A Kubernetes watch does not: such a
     * {@code Modified} carries {@code previous == null} ("when the backend knows it"); a
     * {@code Deleted} always knows it, since a Kubernetes DELETED event carries the object.
     */
    protected boolean watchKnowsValuesWrittenBeforeItStarted() {
        return true;
    }

    /** {@code previous} as the backend must report it when the value was written before the watch started. */
    private Resource previousWrittenBeforeTheWatch(Resource expected) {
        return watchKnowsValuesWrittenBeforeItStarted() ? expected : null;
    }

    @BeforeEach
    void openStore() {
        store = newDatastore();
    }

    @AfterEach
    void closeStore() {
        if (store != null) {
            store.close();
        }
    }

    // ------------------------------------------------------------------ CRUD

    @Test
    void createsReadsUpdatesAndDeletesAClusterScopedResource() {
        Resource created = store.create(globalSet("blocked", List.of("10.0.0.0/8"), Map.of("role", "deny")));

        assertThat(created.metadata().resourceVersion()).isNotBlank();
        assertThat(created.metadata().uid()).isNotBlank();
        assertThat(created.metadata().creationTimestamp()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z");
        assertThat(created.metadata().labels()).containsEntry("role", "deny");
        assertThat(store.get(created.key())).contains(created);

        GlobalNetworkSet changed = new GlobalNetworkSet(created.metadata(), new GlobalNetworkSetSpec(List.of("192.168.0.0/16")));
        Resource updated = store.update(changed);

        assertThat(revision(updated)).isGreaterThan(revision(created));
        assertThat(updated.metadata().uid()).isEqualTo(created.metadata().uid());
        assertThat(updated.metadata().creationTimestamp()).isEqualTo(created.metadata().creationTimestamp());
        assertThat(((GlobalNetworkSet) updated).spec().nets()).containsExactly("192.168.0.0/16");
        assertThat(store.get(created.key())).contains(updated);

        Resource deleted = store.delete(created.key(), null);

        assertThat(deleted).isEqualTo(updated);
        assertThat(store.get(created.key())).isEmpty();
    }

    @Test
    void createsReadsUpdatesAndDeletesANamespacedResource() {
        Resource created = store.create(networkSet("prod", "db", List.of("10.1.0.0/24")));

        assertThat(created.metadata().namespace()).isEqualTo("prod");
        assertThat(store.get(ResourceKey.of(ResourceKind.NETWORK_SET, "prod", "db"))).contains(created);
        assertThat(store.get(ResourceKey.of(ResourceKind.NETWORK_SET, "dev", "db"))).isEmpty();

        Resource updated = store.update(new NetworkSet(created.metadata(), new NetworkSetSpec(List.of("10.2.0.0/24"))));
        assertThat(store.get(created.key())).contains(updated);

        assertThat(store.delete(created.key(), updated.metadata().resourceVersion())).isEqualTo(updated);
        assertThat(store.get(created.key())).isEmpty();
    }

    @Test
    void storesOtherSimpleKinds() {
        Resource tier = store.create(new Tier(ObjectMeta.named("security"), new TierSpec(100.0, null)));
        Resource policy = store.create(new GlobalNetworkPolicy(ObjectMeta.named("security.deny-all"),
                new GlobalNetworkPolicySpec("security", 10.0, null, null, "all()", null, null, null, null, null, null,
                        null)));

        assertThat(store.get(tier.key())).contains(tier);
        assertThat(store.get(policy.key())).contains(policy);
        assertThat(store.list(ResourceKind.GLOBAL_NETWORK_POLICY).items()).containsExactly(policy);
    }

    @Test
    void createOfAnExistingResourceFailsWithAlreadyExists() {
        Resource first = store.create(globalSet("a", List.of("10.0.0.1/32"), Map.of()));

        assertThatThrownBy(() -> store.create(globalSet("a", List.of("10.0.0.2/32"), Map.of())))
                .isInstanceOf(DatastoreException.AlreadyExists.class)
                .hasMessageContaining("a");
        assertThat(store.get(first.key())).contains(first);
    }

    @Test
    void createWithAResourceVersionIsInvalid() {
        // As Calico: "Metadata.ResourceVersion: field must not be set for a Create request".
        Resource withVersion = globalSet("a", List.of(), Map.of()).withMetadata(ObjectMeta.named("a").withResourceVersion("12345"));

        assertThatThrownBy(() -> store.create(withVersion)).isInstanceOf(DatastoreException.Invalid.class);
        assertThat(store.get(withVersion.key())).isEmpty();
    }

    @Test
    void staleResourceVersionFailsWithConflict() {
        Resource v1 = store.create(globalSet("a", List.of("10.0.0.1/32"), Map.of()));
        Resource v2 = store.update(relabelled(v1, "2"));

        assertThatThrownBy(() -> store.update(v1))
                .isInstanceOf(DatastoreException.Conflict.class)
                .hasMessageContaining(v1.metadata().resourceVersion());
        assertThatThrownBy(() -> store.delete(v1.key(), v1.metadata().resourceVersion()))
                .isInstanceOf(DatastoreException.Conflict.class);
        assertThat(store.get(v1.key())).contains(v2);
    }

    @Test
    void updateWithoutResourceVersionOverwrites() {
        Resource v1 = store.create(globalSet("a", List.of("10.0.0.1/32"), Map.of()));
        store.update(relabelled(v1, "2"));

        Resource blind = store.update(globalSet("a", List.of("10.9.9.9/32"), Map.of()));

        assertThat(((GlobalNetworkSet) blind).spec().nets()).containsExactly("10.9.9.9/32");
        assertThat(blind.metadata().uid()).isEqualTo(v1.metadata().uid());
        assertThat(store.get(v1.key())).contains(blind);
    }

    @Test
    void updateKeepsTheStoredUidAndCreationTimestamp() {
        Resource v1 = store.create(globalSet("a", List.of("10.0.0.1/32"), Map.of()));
        ObjectMeta forged = v1.metadata().withCreation("not-the-uid", "1999-01-01T00:00:00Z");

        Resource v2 = store.update(v1.withMetadata(forged));

        assertThat(v2.metadata().uid()).isEqualTo(v1.metadata().uid());
        assertThat(v2.metadata().creationTimestamp()).isEqualTo(v1.metadata().creationTimestamp());
    }

    @Test
    void updateOrDeleteOfAMissingResourceFailsWithNotFound() {
        assertThatThrownBy(() -> store.update(globalSet("ghost", List.of(), Map.of())))
                .isInstanceOf(DatastoreException.NotFound.class);
        assertThatThrownBy(() -> store.delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "ghost"), null))
                .isInstanceOf(DatastoreException.NotFound.class);

        Resource gone = store.create(globalSet("gone", List.of(), Map.of()));
        store.delete(gone.key(), null);

        assertThatThrownBy(() -> store.update(gone)).isInstanceOf(DatastoreException.NotFound.class);
        assertThatThrownBy(() -> store.delete(gone.key(), gone.metadata().resourceVersion()))
                .isInstanceOf(DatastoreException.NotFound.class);
    }

    // ------------------------------------------------------------------ admission

    @Test
    void anInvalidResourceIsRejectedWholeWithEveryFieldNamedAndNothingStored() {
        var bad = new IPPool(ObjectMeta.named("bad"), new IPPoolSpec(
                "10.0.0.0/16", null, null, null, null, null, 40, "a ==", null, null, null));
        long before = store.currentRevision();

        assertThatThrownBy(() -> store.create(bad))
                .isInstanceOfSatisfying(DatastoreException.Invalid.class, e -> assertThat(e.validation().errors())
                        .extracting(FieldError::field)
                        .contains("spec.blockSize", "spec.nodeSelector"));
        assertThat(store.get(bad.key())).isEmpty();
        assertThat(store.currentRevision()).isEqualTo(before);
    }

    @Test
    void ipPoolsMayNotOverlapAndKeepTheirCidr() {
        Resource pool = store.create(pool("pool-a", "10.10.0.0/16"));

        assertThatThrownBy(() -> store.create(pool("pool-b", "10.10.64.0/18")))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("spec.cidr")
                .hasMessageContaining("overlaps with IPPool(pool-a)");
        assertThat(store.create(pool("pool-c", "10.11.0.0/16")).metadata().name()).isEqualTo("pool-c");

        var moved = new IPPool(pool.metadata(), pool("pool-a", "10.12.0.0/16").spec());
        assertThatThrownBy(() -> store.update(moved))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("spec.cidr: cannot be changed");
        var disabled = new IPPool(pool.metadata(), new IPPoolSpec(
                "10.10.0.0/16", null, null, null, true, null, null, null, null, null, null));
        assertThat(((IPPool) store.update(disabled)).spec().disabled()).isTrue();
    }

    private static IPPool pool(String name, String cidr) {
        return new IPPool(ObjectMeta.named(name), new IPPoolSpec(
                cidr, null, null, null, null, null, null, null, null, null, null));
    }

    // ------------------------------------------------------------------ list

    @Test
    void listsByNamespaceAndAcrossNamespacesSorted() {
        // "a-b" sorts after "a" as a namespace, but before it as a key prefix ("a-b/" < "a/").
        List<Resource> written = new ArrayList<>();
        List<String[]> names = new ArrayList<>(List.of(new String[] {"a", "z"}, new String[] {"a", "b"},
                new String[] {"a-b", "c"}, new String[] {"b", "a"}, new String[] {"a", "a-b"}));
        Collections.shuffle(names, new Random(7));
        for (String[] n : names) {
            written.add(store.create(networkSet(n[0], n[1], List.of())));
        }
        store.create(globalSet("not-a-network-set", List.of(), Map.of()));

        ListResult all = store.list(ResourceKind.NETWORK_SET);
        assertThat(all.items()).extracting(r -> r.metadata().namespace() + "/" + r.metadata().name())
                .containsExactly("a/a-b", "a/b", "a/z", "a-b/c", "b/a");
        assertThat(all.items()).containsExactlyInAnyOrderElementsOf(written);
        assertThat(all.revision()).isGreaterThanOrEqualTo(written.stream().mapToLong(DatastoreContractTest::revision).max().orElseThrow());

        assertThat(store.list(ResourceKind.NETWORK_SET, "a", null).items()).extracting(r -> r.metadata().name())
                .containsExactly("a-b", "b", "z");
        assertThat(store.list(ResourceKind.NETWORK_SET, "a-b", "all()").items()).extracting(r -> r.metadata().name())
                .containsExactly("c");
        assertThat(store.list(ResourceKind.NETWORK_SET, "nope", null).items()).isEmpty();
    }

    @Test
    void listsClusterScopedResourcesSortedByName() {
        for (String n : List.of("m", "c", "x", "a")) {
            store.create(globalSet(n, List.of(), Map.of()));
        }
        ListResult r = store.list(ResourceKind.GLOBAL_NETWORK_SET, null, "all()");

        assertThat(r.items()).extracting(x -> x.metadata().name()).containsExactly("a", "c", "m", "x");
        // The current revision at the time of the list: later writes elsewhere (a real cluster's
        // leases) may move the current revision on before it is read back.
        assertThat(r.revision()).isGreaterThanOrEqualTo(r.items().stream().mapToLong(DatastoreContractTest::revision).max()
                .orElseThrow()).isLessThanOrEqualTo(store.currentRevision());
        assertThat(store.list(ResourceKind.TIER).items()).isEmpty();
    }

    // ------------------------------------------------------------------ watch

    @Test
    void watchDeliversEveryChangeInRevisionOrderWithPreviousValues() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), rec)) {
            int n = 30;
            List<Resource> created = new ArrayList<>();
            List<Resource> updated = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                created.add(store.create(globalSet("s" + i, List.of("10.0.0." + i + "/32"), Map.of())));
            }
            for (int i = 0; i < n; i++) {
                updated.add(store.update(new GlobalNetworkSet(created.get(i).metadata(),
                        new GlobalNetworkSetSpec(List.of("10.1.0." + i + "/32")))));
            }
            for (int i = 0; i < n; i++) {
                store.delete(updated.get(i).key(), updated.get(i).metadata().resourceVersion());
            }

            List<WatchEvent> events = rec.changes(3 * n, WAIT);

            assertThat(events).extracting(WatchEvent::revision).isSorted().doesNotHaveDuplicates();
            for (int i = 0; i < n; i++) {
                assertThat(events.get(i)).isEqualTo(new WatchEvent.Added(created.get(i), revision(created.get(i))));
                assertThat(events.get(n + i)).isEqualTo(
                        new WatchEvent.Modified(updated.get(i), created.get(i), revision(updated.get(i))));
                WatchEvent.Deleted d = (WatchEvent.Deleted) events.get(2 * n + i);
                assertThat(d.key()).isEqualTo(created.get(i).key());
                assertThat(d.previous()).isEqualTo(updated.get(i));
            }
            assertThat(rec.overlaps()).isZero();
        }
    }

    @Test
    void watchOfOneNamespaceSeesOnlyThatNamespace() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.NETWORK_SET, "a", store.currentRevision(), rec)) {
            store.create(networkSet("a-b", "x", List.of()));
            store.create(networkSet("b", "x", List.of()));
            Resource mine = store.create(networkSet("a", "x", List.of()));

            WatchEvent first = rec.changes(1, WAIT).get(0);

            assertThat(first).isEqualTo(new WatchEvent.Added(mine, revision(mine)));
        }
    }

    @Test
    void watchFromAnOldRevisionReplaysHistory() {
        long start = store.currentRevision();
        Resource a = store.create(globalSet("a", List.of(), Map.of()));
        Resource a2 = store.update(relabelled(a, "2"));
        Resource b = store.create(globalSet("b", List.of(), Map.of()));
        store.delete(a.key(), null);

        WatchRecorder all = new WatchRecorder();
        WatchRecorder later = new WatchRecorder();
        try (Watch w1 = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, start, all);
             Watch w2 = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, revision(a2), later)) {
            List<WatchEvent> replay = all.changes(4, WAIT);
            assertThat(replay.get(0)).isEqualTo(new WatchEvent.Added(a, revision(a)));
            assertThat(replay.get(1)).isEqualTo(new WatchEvent.Modified(a2, a, revision(a2)));
            assertThat(replay.get(2)).isEqualTo(new WatchEvent.Added(b, revision(b)));
            assertThat(replay.get(3)).isInstanceOf(WatchEvent.Deleted.class);

            List<WatchEvent> tail = later.changes(2, WAIT);
            assertThat(tail.get(0)).isEqualTo(new WatchEvent.Added(b, revision(b)));
            // A deletion's last value is known to every backend, even if written before the watch
            // started: a Kubernetes DELETED event carries it (with the deletion's resourceVersion).
            Resource deleted = ((WatchEvent.Deleted) tail.get(1)).previous();
            assertThat(deleted).isNotNull();
            assertThat(deleted.withMetadata(deleted.metadata().withResourceVersion(a2.metadata().resourceVersion())))
                    .isEqualTo(a2);
        }
    }

    @Test
    void aWatchFromAListsRevisionContinuesExactlyWhereTheListEnded() {
        store.create(globalSet("a", List.of(), Map.of()));
        Resource b = store.create(globalSet("b", List.of(), Map.of()));
        ListResult listed = store.list(ResourceKind.GLOBAL_NETWORK_SET);
        Resource c = store.create(globalSet("c", List.of(), Map.of()));
        Resource b2 = store.update(relabelled(b, "2"));

        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, listed.revision(), rec)) {
            assertThat(rec.changes(2, WAIT)).containsExactly(
                    new WatchEvent.Added(c, revision(c)),
                    new WatchEvent.Modified(b2, previousWrittenBeforeTheWatch(b), revision(b2)));
        }
    }

    @Test
    void watchFromNowDoesNotReplay() {
        store.create(globalSet("old", List.of(), Map.of()));
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, 0, rec)) {
            // The watch may start a little after watch() returns; a bookmark proves it is live.
            rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT);
            Resource fresh = store.create(globalSet("new", List.of(), Map.of()));

            assertThat(rec.changes(1, WAIT)).containsExactly(new WatchEvent.Added(fresh, revision(fresh)));
        }
    }

    @Test
    void watchFromACompactedRevisionEndsWithCompacted() {
        long start = store.currentRevision();
        Resource a = store.create(globalSet("a", List.of(), Map.of()));
        store.update(relabelled(a, "2"));
        Resource a3 = relabelled(a, "3");
        store.update(a3.withMetadata(a3.metadata().withResourceVersion(null)));
        long compactedAt = compactHistory(store);

        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, start, rec)) {
            WatchEvent e = rec.next(x -> !(x instanceof WatchEvent.Bookmark), WAIT);

            assertThat(e).isInstanceOf(WatchEvent.Compacted.class);
            assertThat(((WatchEvent.Compacted) e).compactRevision()).isGreaterThan(start).isLessThanOrEqualTo(compactedAt);
            store.create(globalSet("after", List.of(), Map.of()));
            assertThat(rec.poll(Duration.ofMillis(500))).isNull();
        }
    }

    @Test
    void bookmarksArriveAndCoverDeliveredChanges() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.TIER, null, store.currentRevision(), rec)) {
            Resource t = store.create(new Tier(ObjectMeta.named("t"), new TierSpec(1.0, null)));
            assertThat(rec.changes(1, WAIT)).containsExactly(new WatchEvent.Added(t, revision(t)));

            WatchEvent.Bookmark b = (WatchEvent.Bookmark) rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT);

            assertThat(b.revision()).isGreaterThanOrEqualTo(revision(t));
        }
    }

    @Test
    void closeStopsDelivery() throws InterruptedException {
        WatchRecorder rec = new WatchRecorder();
        Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), rec);
        store.create(globalSet("one", List.of(), Map.of()));
        rec.changes(1, WAIT);

        w.close();
        int before = rec.received();
        WatchRecorder witness = new WatchRecorder();
        try (Watch other = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), witness)) {
            for (int i = 0; i < 5; i++) {
                store.create(globalSet("more" + i, List.of(), Map.of()));
            }
            // A watch still open has all five: the closed one would have had them by now too.
            witness.changes(5, WAIT);
        }

        assertThat(rec.received()).isEqualTo(before);
        w.close(); // idempotent
    }

    // ------------------------------------------------------------------ concurrency

    @Test
    void racingReadModifyWriteLoopsLoseNoIncrement() throws Exception {
        int threads = 4;
        int increments = 25;
        Resource initial = store.create(globalSet("counter", List.of(), Map.of("count", "0")));
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> conflicts = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                conflicts.add(pool.submit(() -> {
                    int retries = 0;
                    for (int i = 0; i < increments; i++) {
                        while (true) {
                            Resource cur = store.get(initial.key()).orElseThrow();
                            int n = Integer.parseInt(cur.metadata().labels().get("count"));
                            try {
                                store.update(cur.withMetadata(cur.metadata().withLabels(Map.of("count", Integer.toString(n + 1)))));
                                break;
                            } catch (DatastoreException.Conflict e) {
                                retries++;
                            }
                        }
                    }
                    return retries;
                }));
            }
            for (Future<Integer> f : conflicts) {
                f.get(2, TimeUnit.MINUTES);
            }
            Resource last = store.get(initial.key()).orElseThrow();

            assertThat(last.metadata().labels()).containsEntry("count", Integer.toString(threads * increments));
            assertThat(revision(last) - revision(initial)).as("one write per increment, none lost or doubled")
                    .isGreaterThanOrEqualTo(threads * increments);
        } finally {
            pool.shutdownNow();
        }
    }

    // ------------------------------------------------------------------ fixtures

    protected static GlobalNetworkSet globalSet(String name, List<String> nets, Map<String, String> labels) {
        return new GlobalNetworkSet(ObjectMeta.named(name).withLabels(labels), new GlobalNetworkSetSpec(nets));
    }

    protected static NetworkSet networkSet(String namespace, String name, List<String> nets) {
        return new NetworkSet(ObjectMeta.namespaced(namespace, name), new NetworkSetSpec(nets));
    }

    /**
     * {@return {@code r} with the label {@code rev=<value>}}: an update that changes something. An
     * update that changes nothing is not a write on the Kubernetes API server (the resourceVersion
     * stays, no watch event), so cases that need a new revision change a label.
     */
    protected static Resource relabelled(Resource r, String value) {
        return r.withMetadata(r.metadata().withLabels(Map.of("rev", value)));
    }

    protected static long revision(Resource r) {
        return Long.parseLong(r.metadata().resourceVersion());
    }
}
