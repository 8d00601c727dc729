package calico.libcalico.datastore.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import calico.api.codec.ResourceCodec;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.NetworkSet;
import calico.api.model.NetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.validation.ResourceValidator;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What only the etcd backend has: its key layout, outages, corrupt values, paging, write checks. */
class EtcdDatastoreTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private Client raw;
    private EtcdDatastore store;

    @BeforeEach
    void setUp() throws Exception {
        ETCD.ensureRunning();
        raw = Client.builder().endpoints(ETCD.endpoint()).build();
        raw.getKVClient().delete(bytes("/"), DeleteOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS);
        store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()).withRequestTimeout(REQUEST_TIMEOUT)
                .withProgressInterval(Duration.ofMillis(200)));
    }

    @AfterEach
    void tearDown() {
        store.close();
        raw.close();
    }

    @Test
    void storesResourcesUnderCalicoKeysAsJsonWithoutResourceVersion() throws Exception {
        Resource created = store.create(new NetworkSet(ObjectMeta.namespaced("prod", "db"),
                new NetworkSetSpec(List.of("10.0.0.0/24"))));

        KeyValue kv = rawGet("/calico/resources/v3/projectcalico.org/networksets/prod/db");

        assertThat(kv).isNotNull();
        assertThat(Long.toString(kv.getModRevision())).isEqualTo(created.metadata().resourceVersion());
        JsonNode json = ResourceCodec.get().jsonMapper().readTree(kv.getValue().getBytes());
        assertThat(json.path("apiVersion").asText()).isEqualTo("projectcalico.org/v3");
        assertThat(json.path("kind").asText()).isEqualTo("NetworkSet");
        assertThat(json.path("metadata").path("uid").asText()).isEqualTo(created.metadata().uid());
        assertThat(json.path("metadata").has("resourceVersion")).isFalse();
        assertThat(json.path("spec").path("nets").get(0).asText()).isEqualTo("10.0.0.0/24");

        store.create(globalSet("g"));
        assertThat(rawGet("/calico/resources/v3/projectcalico.org/globalnetworksets/g")).isNotNull();
    }

    @Test
    void compactorsAgreeThroughOneKeyAndKeepOnePeriodOfHistory() {
        store.create(globalSet("before"));
        long old = store.currentRevision();
        store.create(globalSet("after"));
        EtcdDatastore.Compaction a = store.compact(EtcdDatastore.Compaction.first());
        EtcdDatastore.Compaction b = store.compact(EtcdDatastore.Compaction.first());
        assertThat(b.keyVersion()).as("b learns the key's version from a (or from an earlier compactor)")
                .isEqualTo(a.keyVersion());
        assertThat(store.listAt(ResourceKind.GLOBAL_NETWORK_SET, null, null, old).items()).as("first steps compact nothing")
                .hasSize(1);

        long seenByA = a.revision();
        a = store.compact(a);
        assertThatThrownBy(() -> store.listAt(ResourceKind.GLOBAL_NETWORK_SET, null, null, old))
                .as("a's second step compacts at the revision its first step saw").isInstanceOf(DatastoreException.Compacted.class);
        assertThat(store.listAt(ResourceKind.GLOBAL_NETWORK_SET, null, null, seenByA).items()).hasSize(2);

        b = store.compact(b);
        assertThat(store.listAt(ResourceKind.GLOBAL_NETWORK_SET, null, null, seenByA).items())
                .as("b lost the key to a: it only learns, one compaction per period").hasSize(2);
        assertThat(b.keyVersion()).isEqualTo(a.keyVersion());
    }

    @Test
    void stampsCreationTimestampFromTheClockInRfc3339() {
        Clock fixed = Clock.fixed(Instant.parse("2024-05-06T07:08:09.123Z"), ZoneOffset.UTC);
        try (EtcdDatastore ds = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()), ResourceValidator.get(), fixed)) {
            assertThat(ds.create(globalSet("t")).metadata().creationTimestamp()).isEqualTo("2024-05-06T07:08:09Z");
        }
    }

    @Test
    void rejectsWritesThatCannotBeStoredWithTheFieldAndReason() {
        Resource withVersion = globalSet("a").withMetadata(ObjectMeta.named("a").withResourceVersion("5"));
        assertInvalid(() -> store.create(withVersion), "metadata.resourceVersion", "must not be set on create");
        assertInvalid(() -> store.create(globalSet("a/b")), "metadata.name", "lower case alphanumeric");
        assertInvalid(() -> store.create(globalSet("")), "metadata.name", "required");
        assertInvalid(() -> store.create(new NetworkSet(ObjectMeta.named("n"), new NetworkSetSpec(List.of()))),
                "metadata.namespace", "required");
        assertInvalid(() -> store.create(new GlobalNetworkSet(ObjectMeta.namespaced("ns", "g"),
                new GlobalNetworkSetSpec(List.of()))), "metadata.namespace", "must not be set");

        store.create(globalSet("a"));
        assertInvalid(() -> store.update(globalSet("a").withMetadata(ObjectMeta.named("a").withResourceVersion("abc"))),
                "metadata.resourceVersion", "must be a positive decimal revision");
        assertInvalid(() -> store.delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "a"), "-1"),
                "metadata.resourceVersion", "must be a positive decimal revision");
        assertInvalid(() -> store.list(ResourceKind.GLOBAL_NETWORK_SET, null, "role == "), "labelSelector", "");
    }

    @Test
    void aCorruptValueIsReportedByGetSkippedByListAndEndsAWatch() throws Exception {
        Resource good = store.create(globalSet("good"));
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), rec)) {
            raw.getKVClient().put(bytes("/calico/resources/v3/projectcalico.org/globalnetworksets/bad"),
                    bytes("{not json")).get(10, TimeUnit.SECONDS);

            assertThatThrownBy(() -> store.get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "bad")))
                    .isInstanceOf(DatastoreException.Invalid.class)
                    .hasMessageContaining("globalnetworksets/bad");
            assertThat(store.list(ResourceKind.GLOBAL_NETWORK_SET).items()).containsExactly(good);

            WatchEvent e = rec.next(x -> !(x instanceof WatchEvent.Bookmark), WAIT);
            assertThat(e).isInstanceOf(WatchEvent.Failed.class);
            assertThat(((WatchEvent.Failed) e).error()).isInstanceOf(DatastoreException.Invalid.class);
            store.create(globalSet("after"));
            assertThat(rec.poll(Duration.ofMillis(500))).isNull();
        }
    }

    @Test
    void updateRepairsACorruptValue() throws Exception {
        raw.getKVClient().put(bytes("/calico/resources/v3/projectcalico.org/globalnetworksets/bad"),
                bytes("{not json")).get(10, TimeUnit.SECONDS);

        Resource fixed = store.update(globalSet("bad"));

        assertThat(fixed.metadata().uid()).isNotBlank();
        assertThat(store.get(fixed.key())).contains(fixed);
    }

    @Test
    void listPagesThroughMoreThanOneRangeResponse() {
        int n = 2 * EtcdDatastore.LIST_PAGE_SIZE + 7;
        for (int i = 0; i < n; i++) {
            store.create(new NetworkSet(ObjectMeta.namespaced("ns" + (i % 3), String.format("s%05d", i)),
                    new NetworkSetSpec(List.of())));
        }
        long before = store.currentRevision();

        ListResult all = store.list(ResourceKind.NETWORK_SET);

        assertThat(all.items().size()).isEqualTo(n);
        assertThat(all.items()).extracting(r -> r.metadata().namespace() + "/" + r.metadata().name()).isSorted();
        assertThat(all.revision()).isEqualTo(before);
        long inNs1 = IntStream.range(0, n).filter(i -> i % 3 == 1).count();
        assertThat((long) store.list(ResourceKind.NETWORK_SET, "ns1", null).items().size()).isEqualTo(inNs1);
    }

    @Test
    void everyCallFailsWithUnavailableWithinTheDeadlineWhileEtcdIsDown() {
        Resource a = store.create(globalSet("a"));
        ResourceKey key = a.key();
        ETCD.stop();

        Duration bound = REQUEST_TIMEOUT.multipliedBy(2);
        assertUnavailableWithin(bound, () -> store.get(key));
        assertUnavailableWithin(bound, () -> store.list(ResourceKind.GLOBAL_NETWORK_SET));
        assertUnavailableWithin(bound, () -> store.create(globalSet("b")));
        assertUnavailableWithin(bound, () -> store.update(a));
        assertUnavailableWithin(bound, () -> store.delete(key, null));
        assertUnavailableWithin(bound, store::currentRevision);

        ETCD.start();
        // The client reconnects by itself (gRPC backoff); no new datastore is needed.
        assertThat(Await.value("reconnected", WAIT, () -> {
            try {
                return Optional.of(store.get(key));
            } catch (DatastoreException.Unavailable e) {
                return Optional.empty();
            }
        })).contains(a);
    }

    @Test
    void aWatchEndsWithFailedWhenEtcdGoesAwayAndJetcdDoesNotResumeIt() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), rec)) {
            Resource a = store.create(globalSet("a"));
            assertThat(rec.changes(1, WAIT)).containsExactly(new WatchEvent.Added(a, Long.parseLong(a.metadata().resourceVersion())));

            ETCD.stop();

            WatchEvent e = rec.next(x -> !(x instanceof WatchEvent.Bookmark), WAIT);
            assertThat(e).isInstanceOf(WatchEvent.Failed.class);
            WatchEvent.Failed failed = (WatchEvent.Failed) e;
            assertThat(failed.error()).isInstanceOf(DatastoreException.Unavailable.class);
            assertThat(failed.error().retryable()).isTrue();
            assertThat(failed.revision()).as("where to resume").isGreaterThanOrEqualTo(Long.parseLong(a.metadata().resourceVersion()));

            ETCD.start();
            awaitWritable();
            store.create(globalSet("after-restart"));
            // Waiting for something jetcd does not do: no event says so, so the claim is a window
            // twice jetcd's stream re-creation backoff (500 ms) in which nothing arrives.
            sleep(1000);
            assertThat(rec.drain()).isEmpty();
        }
    }

    @Test
    void aFrozenEtcdGivesUnavailableAtTheDeadlineAndEndsWatchesThroughKeepalive() {
        Resource a = store.create(globalSet("a"));
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), rec)) {
            rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT); // the stream is up
            ETCD.freeze();
            try {
                assertUnavailableWithin(REQUEST_TIMEOUT.multipliedBy(2), () -> store.get(a.key()));
                assertUnavailableWithin(REQUEST_TIMEOUT.multipliedBy(2), () -> store.update(a));

                // gRPC keepalive (10 s ping, 5 s timeout) notices the silent peer.
                WatchEvent e = rec.next(x -> !(x instanceof WatchEvent.Bookmark), Duration.ofSeconds(40));
                assertThat(e).isInstanceOf(WatchEvent.Failed.class);
            } finally {
                ETCD.thaw();
            }
        }
    }

    /**
     * etcd's keepalive policy (its defaults, as calico's etcd runs: {@code --grpc-keepalive-min-time=5s}, no pings
     * without a stream) against the client's: a client that pinged an idle connection was sent away with GOAWAY
     * {@code too_many_pings} (FootprintBench's own writer, idle while the services started). Pings while a watch is
     * open stay: they are what ends a watch on a frozen etcd (above).
     */
    @Test
    void theClientPingsOnlyWhatEtcdPermits() {
        var settings = EtcdDatastore.clientBuilder(EtcdConfig.of(java.net.URI.create("http://127.0.0.1:2379")));
        assertThat(settings.keepaliveWithoutCalls()).as("pings on a connection without calls").isFalse();
        assertThat(settings.keepaliveTime()).as("etcd's minimum ping interval").isGreaterThanOrEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void listAtAnEarlierRevisionReadsEveryPageAtItUntilCompacted() {
        for (int i = 0; i < EtcdDatastore.LIST_PAGE_SIZE + 3; i++) {
            store.create(globalSet(String.format("s%04d", i)));
        }
        long rev = store.list(ResourceKind.GLOBAL_NETWORK_SET).revision();
        store.delete(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, "s0001"), null);
        store.create(globalSet("zz-after"));

        ListResult then = store.listAt(ResourceKind.GLOBAL_NETWORK_SET, null, null, rev);
        assertThat(then.revision()).isEqualTo(rev);
        assertThat(then.items()).hasSize(EtcdDatastore.LIST_PAGE_SIZE + 3);
        assertThat(then.items()).extracting(r -> r.metadata().name()).contains("s0001").doesNotContain("zz-after");
        assertThat(store.list(ResourceKind.GLOBAL_NETWORK_SET).items()).hasSize(EtcdDatastore.LIST_PAGE_SIZE + 3);

        ETCD.compact();
        assertThatThrownBy(() -> store.listAt(ResourceKind.GLOBAL_NETWORK_SET, null, null, rev))
                .isInstanceOf(DatastoreException.Compacted.class);
    }

    @Test
    void keysThatCannotNameOneEtcdKeyAreRejected() {
        assertInvalid(() -> store.get(ResourceKey.of(ResourceKind.NETWORK_SET, null, "x")), "metadata.namespace", "");
        assertInvalid(() -> store.delete(ResourceKey.of(ResourceKind.NETWORK_SET, "a", "b/c"), null), "metadata.name", "");
    }

    @Test
    void aListenerMayCloseItsOwnWatchAndKeepUsingTheStore() throws Exception {
        java.util.concurrent.CompletableFuture<Object> after = new java.util.concurrent.CompletableFuture<>();
        Watch[] self = new Watch[1];
        self[0] = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, store.currentRevision(), event -> {
            if (event instanceof WatchEvent.Added) {
                self[0].close();
                try {
                    after.complete(store.list(ResourceKind.GLOBAL_NETWORK_SET).items().size());
                } catch (RuntimeException e) {
                    after.complete(e);
                }
            }
        });
        store.create(globalSet("a"));

        assertThat(after.get(20, TimeUnit.SECONDS)).isEqualTo(1);
    }

    /**
     * Watches read ahead of jetcd's one-message requests ({@link WatchPrefetch}): with 8 writers
     * across namespaces, a watch on the writers' client and one on a second client (as felix's)
     * still see every create once, in revision order, one callback at a time, then a bookmark.
     */
    @Test
    void watchesOnTwoClientsSeeEveryConcurrentWriteOnceInRevisionOrder() throws Exception {
        int n = 400;
        try (EtcdDatastore other = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint())
                .withProgressInterval(Duration.ofMillis(200)))) {
            WatchRecorder mine = new WatchRecorder();
            WatchRecorder theirs = new WatchRecorder();
            long from = store.currentRevision();
            try (Watch a = store.watch(ResourceKind.NETWORK_SET, null, from, mine);
                 Watch b = other.watch(ResourceKind.NETWORK_SET, null, from, theirs)) {
                ExecutorService writers = Executors.newFixedThreadPool(8);
                AtomicInteger next = new AtomicInteger();
                List<Future<?>> done = IntStream.range(0, 8).<Future<?>>mapToObj(
                        w -> writers.submit(() -> {
                            for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                                store.create(new NetworkSet(ObjectMeta.namespaced("ns" + i % 20, "s" + i),
                                        new NetworkSetSpec(List.of("10.1.0.0/16"))));
                            }
                        })).toList();
                for (Future<?> f : done) {
                    f.get(60, TimeUnit.SECONDS);
                }
                writers.shutdown();
                long last = store.currentRevision();

                for (WatchRecorder rec : List.of(mine, theirs)) {
                    List<WatchEvent> events = rec.changes(n, WAIT);
                    assertThat(events).allMatch(e -> e instanceof WatchEvent.Added);
                    assertThat(events.stream().mapToLong(WatchEvent::revision).toArray())
                            .isSorted().doesNotHaveDuplicates().endsWith(last);
                    assertThat(events.stream().map(e -> ((WatchEvent.Added) e).resource().metadata().name()))
                            .containsExactlyInAnyOrderElementsOf(IntStream.range(0, n).mapToObj(i -> "s" + i).toList());
                    assertThat(rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT).revision()).isGreaterThanOrEqualTo(last);
                    assertThat(rec.overlaps()).isZero();
                }
            }
        }
    }

    @Test
    void aWatchStartedWhileEtcdIsDownFailsPromptly() {
        ETCD.stop();
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.TIER, null, 0, rec)) {
            WatchEvent e = rec.next(x -> true, WAIT);

            assertThat(e).isInstanceOf(WatchEvent.Failed.class);
            assertThat(((WatchEvent.Failed) e).error()).isInstanceOf(DatastoreException.Unavailable.class);
        }
    }

    @Test
    void closingTheDatastoreClosesItsWatches() {
        WatchRecorder rec = new WatchRecorder();
        store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, 0, rec);
        store.close();

        WatchRecorder witness = new WatchRecorder();
        try (EtcdDatastore other = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
             Watch w = other.watch(ResourceKind.GLOBAL_NETWORK_SET, null, other.currentRevision(), witness)) {
            other.create(globalSet("x"));
            // etcd has sent the write to the watches open on it: a live one of the closed store's would have it now.
            witness.changes(1, WAIT);
        }

        assertThat(rec.drain()).allMatch(e -> e instanceof WatchEvent.Bookmark);
    }

    // ------------------------------------------------------------------ helpers

    private void awaitWritable() {
        Await.until("etcd answering", WAIT, () -> {
            try {
                store.currentRevision();
                return true;
            } catch (DatastoreException.Unavailable e) {
                return false;
            }
        });
    }

    private static void assertUnavailableWithin(Duration bound, ThrowingCallable call) {
        assertTimeoutPreemptively(bound, () -> assertThatThrownBy(call)
                .isInstanceOf(DatastoreException.Unavailable.class)
                .satisfies(t -> assertThat(((DatastoreException) t).retryable()).isTrue()));
    }

    private static void assertInvalid(ThrowingCallable call, String field, String reason) {
        assertThatThrownBy(call)
                .isInstanceOf(DatastoreException.Invalid.class)
                .satisfies(t -> assertThat(((DatastoreException.Invalid) t).validation().errors())
                        .anySatisfy(err -> {
                            assertThat(err.field()).isEqualTo(field);
                            assertThat(err.reason()).contains(reason);
                        }));
    }

    private KeyValue rawGet(String key) throws Exception {
        List<KeyValue> kvs = raw.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS).getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    private static GlobalNetworkSet globalSet(String name) {
        return new GlobalNetworkSet(ObjectMeta.named(name).withLabels(Map.of("k", "v")), new GlobalNetworkSetSpec(List.of()));
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
