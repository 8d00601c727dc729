package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.client;
import static calico.typha.server.TyphaFixture.clientOptions;
import static calico.typha.server.TyphaFixture.closeAll;
import static calico.typha.server.TyphaFixture.datastoreVersions;
import static calico.typha.server.TyphaFixture.server;
import static calico.typha.server.TyphaFixture.versions;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.libcalico.typha.TyphaClient;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Real typhas on random ports, many in-process {@link TyphaClient}s, over a real datastore:
 * etcd ({@link TyphaServerTest}) and the kubernetes datastore on a real kube-apiserver
 * ({@link TyphaServerOnRealKubernetesTest}). Cases share the datastore; each names its
 * resources with a prefix of its own.
 */
abstract class TyphaServerContract {

    private final List<AutoCloseable> resources = new ArrayList<>();
    private Datastore ds;
    private String prefix;

    /** {@return a datastore over the store the cases share}; closed after each case. */
    protected abstract Datastore newDatastore();

    @BeforeEach
    void setUp(TestInfo info) {
        ds = newDatastore();
        prefix = info.getTestMethod().orElseThrow().getName().toLowerCase().replaceAll("[^a-z0-9]", "") + "-";
    }

    @AfterEach
    void tearDown() {
        Collections.reverse(resources);
        closeAll(resources);
        ds.close();
    }

    private <T extends AutoCloseable> T track(T t) {
        resources.add(t);
        return t;
    }

    static GlobalNetworkSet set(String name, int nets, int variant) {
        List<String> cidrs = IntStream.range(0, nets).mapToObj(i -> "10." + (variant % 250) + "." + i + ".0/24").toList();
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(cidrs));
    }

    private Resource update(Resource r, int variant) {
        GlobalNetworkSet g = (GlobalNetworkSet) r;
        return ds.update(new GlobalNetworkSet(g.metadata(), set(g.metadata().name(), 1, variant).spec()));
    }

    @Test
    void snapshotEqualsTheDatastoreForEveryClient() {
        for (int i = 0; i < 200; i++) {
            ds.create(set(prefix + i, 2, i));
        }
        TyphaServer typha = track(server(ds, ServerSettings.defaults(0)));
        List<ViewRecorder> views = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            ViewRecorder v = new ViewRecorder();
            views.add(v);
            track(client(clientOptions("node-" + i, typha.port()), v));
        }
        await("all 30 clients in sync", () -> views.stream().allMatch(ViewRecorder::inSync));
        Map<ResourceKey, String> expected = datastoreVersions(ds);
        for (ViewRecorder v : views) {
            assertThat(versions(v.view())).isEqualTo(expected);
            assertThat(v.violations()).isEmpty();
            assertThat(v.statuses()).containsExactly(SyncerStatus.WAIT_FOR_DATASTORE, SyncerStatus.RESYNC_IN_PROGRESS,
                    SyncerStatus.IN_SYNC);
        }
        // Values, not only versions, are the stored resources.
        ResourceKey one = ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, prefix + 7);
        assertThat(views.get(0).view().get(one)).isEqualTo(ds.get(one).orElseThrow());
        assertThat(typha.connectionCount()).isEqualTo(30);
    }

    @Test
    void everyUpdateReachesEveryClientOnceAndInOrder() {
        TyphaServer typha = track(server(ds, ServerSettings.defaults(0)));
        List<ViewRecorder> views = new ArrayList<>();
        List<TyphaClient> clients = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ViewRecorder v = new ViewRecorder();
            views.add(v);
            clients.add(track(client(clientOptions("node-" + i, typha.port()).withCompression(i % 2 == 0), v)));
        }
        await("all clients in sync", () -> views.stream().allMatch(ViewRecorder::inSync));

        Map<ResourceKey, List<String>> expected = new HashMap<>();
        Map<ResourceKey, Resource> current = new HashMap<>();
        for (int step = 0; step < 300; step++) {
            ResourceKey key = ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, prefix + (step % 25));
            Resource now = current.get(key);
            String entry;
            if (now == null) {
                now = ds.create(set(key.name(), 1, step));
                entry = "NEW " + now.metadata().resourceVersion();
            } else if (step % 7 == 0) {
                ds.delete(key, null);
                now = null;
                entry = "DELETED";
            } else {
                now = update(now, step);
                entry = "UPDATED " + now.metadata().resourceVersion();
            }
            if (now == null) {
                current.remove(key);
            } else {
                current.put(key, now);
            }
            expected.computeIfAbsent(key, k -> new ArrayList<>()).add(entry);
        }
        Map<ResourceKey, String> want = datastoreVersions(ds);
        await("every client converged", () -> views.stream().allMatch(v -> versions(v.view()).equals(want)));
        for (ViewRecorder v : views) {
            Map<ResourceKey, List<String>> seen = new HashMap<>();
            for (Update u : v.updates()) {
                if (u.key().name().startsWith(prefix)) {
                    seen.computeIfAbsent(u.key(), k -> new ArrayList<>()).add(u.type() == UpdateType.DELETED
                            ? "DELETED" : u.type() + " " + u.revision());
                }
            }
            assertThat(seen).isEqualTo(expected);
            assertThat(v.violations()).isEmpty();
        }
        assertThat(clients).allSatisfy(c -> assertThat(c.connections()).isEqualTo(1));
    }

    @Test
    void typhaRestartResyncsClientsWithOnlyTheDifferences() throws Exception {
        Resource unchanged = ds.create(set(prefix + "unchanged", 1, 1));
        Resource updated = ds.create(set(prefix + "updated", 1, 2));
        Resource deleted = ds.create(set(prefix + "deleted", 1, 3));
        int portB = freePort();
        TyphaServer a = server(ds, ServerSettings.defaults(0));
        List<ViewRecorder> views = new ArrayList<>();
        List<TyphaClient> clients = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            ViewRecorder v = new ViewRecorder();
            views.add(v);
            clients.add(track(client(clientOptions("node-" + i, a.port(), portB), v)));
        }
        await("all clients in sync", () -> views.stream().allMatch(ViewRecorder::inSync));
        views.forEach(ViewRecorder::clearUpdates);

        a.close();
        Resource updatedNow = update(updated, 99);
        ds.delete(deleted.key(), null);
        Resource created = ds.create(set(prefix + "created", 1, 4));
        TyphaServer b = track(server(ds, ServerSettings.defaults(portB)));

        await("every client reconnected to the new typha", () -> b.connectionCount() == 10);
        Map<ResourceKey, String> want = datastoreVersions(ds);
        await("every client converged", () -> views.stream().allMatch(v -> versions(v.view()).equals(want)));
        for (ViewRecorder v : views) {
            assertThat(v.updates()).extracting(u -> u.type() + " " + u.key().name()).containsExactlyInAnyOrder(
                    "UPDATED " + updated.key().name(), "DELETED " + deleted.key().name(),
                    "NEW " + created.key().name());
            assertThat(v.view().get(updated.key())).isEqualTo(updatedNow);
            assertThat(v.view()).containsKey(unchanged.key());
            assertThat(v.violations()).isEmpty();
        }
        assertThat(clients).allSatisfy(c -> assertThat(c.connections()).isGreaterThanOrEqualTo(2));
    }

    /** A client whose replicas all went away reads them again (felix: the service's endpoints) and finds the new one. */
    @Test
    void aClientReadsItsReplicasAgainWhenAllHaveFailed() throws Exception {
        ds.create(set(prefix + "a", 1, 1));
        TyphaServer a = server(ds, ServerSettings.defaults(0));
        AtomicReference<List<String>> endpoints = new AtomicReference<>(List.of("127.0.0.1:" + a.port()));
        ViewRecorder v = new ViewRecorder();
        TyphaClient c = track(client(clientOptions("node-r", a.port()).withRediscovery(endpoints::get), v));
        await("in sync through the first typha", v::inSync);

        TyphaServer b = track(server(ds, ServerSettings.defaults(0)));
        endpoints.set(List.of("127.0.0.1:" + b.port()));
        a.close();
        Resource later = ds.create(set(prefix + "b", 1, 2));

        await("the client found the new typha", () -> b.connectionCount() == 1);
        await("and converged", () -> v.view().containsKey(later.key()));
        assertThat(versions(v.view())).isEqualTo(datastoreVersions(ds));
        assertThat(c.connections()).isGreaterThanOrEqualTo(2);
        assertThat(v.violations()).isEmpty();
    }

    @Test
    void rebalancedClientsReconnectElsewhereWithoutReplays() {
        ServerSettings rebalancing = ServerSettings.defaults(0).withRebalance(2, Duration.ofMillis(200));
        TyphaServer b = track(server(ds, ServerSettings.defaults(0)));
        TyphaServer a = track(server(ds, rebalancing));
        for (int i = 0; i < 20; i++) {
            ds.create(set(prefix + i, 1, i));
        }
        List<ViewRecorder> views = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ViewRecorder v = new ViewRecorder();
            views.add(v);
            track(client(clientOptions("node-" + i, a.port(), b.port()), v));
        }
        await("all clients in sync", () -> views.stream().allMatch(ViewRecorder::inSync));
        await("typha A shed its surplus to B", () -> a.connectionCount() == 2 && b.connectionCount() == 3);
        Map<ResourceKey, String> want = datastoreVersions(ds);
        await("every client converged", () -> views.stream().allMatch(v -> versions(v.view()).equals(want)));
        for (ViewRecorder v : views) {
            // Moving replicas did not resend anything: one NEW per key in all.
            assertThat(v.updates()).extracting(Update::key).doesNotHaveDuplicates();
        }
        views.forEach(ViewRecorder::clearUpdates);
        for (int i = 0; i < 10; i++) {
            ds.create(set(prefix + "late-" + i, 1, i));
        }
        Map<ResourceKey, String> later = datastoreVersions(ds);
        await("every client got the later creates", () -> views.stream()
                .allMatch(v -> versions(v.view()).equals(later)));
        for (ViewRecorder v : views) {
            assertThat(v.updates()).hasSize(10).allMatch(u -> u.type() == UpdateType.NEW);
            assertThat(v.violations()).isEmpty();
        }
    }

    /**
     * A client moves to a replica whose watch has not yet delivered what the client saw: its
     * snapshot waits until that replica catches up, so the client never sees a newer value go
     * back, a deleted key come back, or a key it has disappear (without the wait it saw all three).
     */
    @Test
    void aClientMovingToAReplicaThatIsBehindWaitsForItToCatchUp() {
        LaggingDatastore lagging = new LaggingDatastore(ds);
        Resource changed = ds.create(set(prefix + "changed", 1, 1));
        Resource removed = ds.create(set(prefix + "removed", 1, 2));
        ds.create(set(prefix + "kept", 1, 3));
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        TyphaServer a = server(ds, ServerSettings.defaults(0));
        TyphaServer b = track(server(lagging, ServerSettings.defaults(0), meters));
        awaitHasEverything(b);
        lagging.pause();
        update(changed, 20);
        ds.delete(removed.key(), null);
        ds.create(set(prefix + "added", 1, 4));

        ViewRecorder v = new ViewRecorder();
        TyphaClient c = track(client(clientOptions("node-m", a.port(), b.port()), v));
        Map<ResourceKey, String> want = datastoreVersions(ds);
        await("converged through A", () -> v.inSync() && versions(v.view()).equals(want));
        v.clearUpdates();
        CapturedLog connections = track(new CapturedLog(ClientConnection.class));
        a.close();
        await("the client moved to B", () -> b.connectionCount() == 1 && c.connections() == 2);
        // B logs that it holds the client's snapshot back when it decides to, before it could send
        // any of it: the client has heard nothing, and hears nothing more until B's watch resumes.
        await("B holds the client's snapshot until it catches up",
                () -> connections.contains("(node-m) has seen more than this typha"));
        assertThat(v.updates()).isEmpty();

        lagging.resume();
        Resource after = ds.create(set(prefix + "after", 1, 5));
        await("the client has the next create through B", () -> v.view().containsKey(after.key()));
        assertThat(v.updates()).extracting(u -> u.type() + " " + u.key().name())
                .containsExactly("NEW " + after.key().name());
        assertThat(versions(v.view())).isEqualTo(datastoreVersions(ds));
        assertThat(v.violations()).isEmpty();
        assertThat(catchUpWaits(meters, "caught-up")).isEqualTo(1);
        assertThat(catchUpWaits(meters, "timed-out")).isZero();
    }

    /** A replica that stays behind serves the client after the bounded wait, and the client converges when it catches up. */
    @Test
    void aReplicaThatStaysBehindServesTheClientAfterTheWait() {
        LaggingDatastore lagging = new LaggingDatastore(ds);
        ds.create(set(prefix + "kept", 1, 1));
        TyphaServer a = server(ds, ServerSettings.defaults(0));
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        TyphaServer b = track(server(lagging, ServerSettings.defaults(0).withCatchUpWait(Duration.ofMillis(300)),
                meters));
        awaitHasEverything(b);
        lagging.pause();
        Resource added = ds.create(set(prefix + "added", 1, 2));

        ViewRecorder v = new ViewRecorder();
        TyphaClient c = track(client(clientOptions("node-w", a.port(), b.port()), v));
        await("the client has the create through A", () -> v.inSync() && v.view().containsKey(added.key()));
        v.clearUpdates();
        a.close();
        await("B served the client from where it is", () -> c.connections() == 2 && !v.view().containsKey(added.key()));
        assertThat(v.updates()).extracting(u -> u.type() + " " + u.key().name())
                .containsExactly("DELETED " + added.key().name());

        lagging.resume();
        Map<ResourceKey, String> want = datastoreVersions(ds);
        await("converged once B caught up", () -> versions(v.view()).equals(want));
        assertThat(v.violations()).isEmpty();
        assertThat(catchUpWaits(meters, "timed-out")).isEqualTo(1);
    }

    private static double catchUpWaits(SimpleMeterRegistry meters, String outcome) {
        return meters.counter("typha_snapshot_catchup_waits", "outcome", outcome).count();
    }

    /**
     * Typha reuses a snapshot for up to snapshotMaxAge; a client that comes back (here: shed by
     * rebalancing, to the only typha it knows) with newer revisions than that snapshot gets a
     * fresh one instead of deletions and re-adds.
     */
    @Test
    void aClientComingBackIsNotTakenBackByAReusedSnapshot() {
        TyphaServer t = track(server(ds, ServerSettings.defaults(0).withSnapshotMaxAge(Duration.ofMinutes(1))
                .withRebalance(1, Duration.ofMillis(200))));
        ViewRecorder first = new ViewRecorder();
        track(client(clientOptions("node-first", t.port()), first)); // its snapshot is the one reused
        await("the first client in sync", first::inSync);
        for (int i = 0; i < 5; i++) {
            ds.create(set(prefix + i, 1, i));
        }
        Map<ResourceKey, String> want = datastoreVersions(ds);
        await("the first client has the creates", () -> versions(first.view()).equals(want));

        ViewRecorder v = new ViewRecorder();
        TyphaClient c = track(client(clientOptions("node-back", t.port()), v)); // the youngest: shed again and again
        await("the client came back three times", () -> c.connections() >= 4);
        await("and is in sync", () -> v.inSync() && versions(v.view()).equals(want));
        assertThat(v.updates()).extracting(Update::key).doesNotHaveDuplicates();
        assertThat(v.violations()).isEmpty();
    }

    /** Waits until typha {@code t} has everything the datastore has now (a probe client, gone after). */
    private void awaitHasEverything(TyphaServer t) {
        Map<ResourceKey, String> now = datastoreVersions(ds);
        ViewRecorder probe = new ViewRecorder();
        try (TyphaClient c = client(clientOptions("probe", t.port()), probe)) {
            await("typha on " + t.port() + " has everything", () -> probe.inSync() && versions(probe.view()).equals(now));
        }
        await("the probe gone", () -> t.connectionCount() == 0);
    }

    @Test
    void aSlowClientIsDroppedWhileTheOthersKeepUp() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        TyphaServer typha = track(server(ds, ServerSettings.defaults(0).withMaxDeltaLogUpdates(300), meters));
        RawClient slow = track(RawClient.stalled(typha.port()));
        slow.hello("slow-node", "felix");
        List<ViewRecorder> views = new ArrayList<>();
        List<TyphaClient> clients = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ViewRecorder v = new ViewRecorder();
            views.add(v);
            clients.add(track(client(clientOptions("node-" + i, typha.port()), v)));
        }
        await("the clients in sync", () -> views.stream().allMatch(ViewRecorder::inSync));
        for (int i = 0; i < 1200; i++) {
            ds.create(set(prefix + i, 40, i));
        }
        await("the slow client dropped", () -> meters.counter("typha_clients_dropped", "reason", "fell-behind").count() >= 1);
        Map<ResourceKey, String> want = datastoreVersions(ds);
        await("the others converged", () -> views.stream().allMatch(v -> versions(v.view()).equals(want)));
        assertThat(meters.counter("typha_clients_dropped", "reason", "fell-behind").count()).isEqualTo(1);
        assertThat(clients).allSatisfy(c -> assertThat(c.connections()).isEqualTo(1));
        views.forEach(v -> assertThat(v.violations()).isEmpty());
        slow.readAll();
        Status status = slow.awaitClose();
        assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getDescription()).contains("client fell too far behind");
        assertThat(typha.connectionCount()).isEqualTo(5);
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
