package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.client;
import static calico.typha.server.TyphaFixture.clientOptions;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import org.junit.jupiter.api.Test;

/**
 * A client that reconnects to a typha which is not yet in sync gets a partial (here empty)
 * snapshot: it must not conclude that what is missing was deleted until that typha says IN_SYNC.
 */
class PartialSnapshotTest {

    @Test
    void noDeletionsFromASnapshotTakenBeforeTyphaWasInSync() throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        for (int i = 0; i < 5; i++) {
            ds.create(TyphaServerTest.set("kept-" + i, 1, i));
        }
        int portB = TyphaServerTest.freePort();
        TyphaServer a = server(ds, ServerSettings.defaults(0));
        ViewRecorder v = new ViewRecorder();
        TyphaServer b = null;
        try (CapturedLog logged = new CapturedLog(ClientConnection.class);
             TyphaClient c = client(clientOptions("node-p", a.port(), portB), v)) {
            await("in sync through the first typha", v::inSync);
            assertThat(v.view()).hasSize(5);
            v.clearUpdates();

            ds.setAvailable(false);
            a.close();
            b = server(ds, ServerSettings.defaults(portB));
            TyphaServer second = b;
            await("reconnected to a typha that is still waiting for the datastore",
                    () -> second.connectionCount() == 1);
            // B's own word that it holds the client's snapshot back (it has less than the client saw).
            await("the second typha holding node-p's snapshot back",
                    () -> logged.contains("(node-p) has seen more than this typha"));
            assertThat(second.status(SyncerType.FELIX)).isEqualTo(SyncerStatus.WAIT_FOR_DATASTORE);
            assertThat(v.updates()).as("nothing deleted on a partial snapshot").isEmpty();

            ds.setAvailable(true);
            await("the second typha in sync", () -> second.status(SyncerType.FELIX) == SyncerStatus.IN_SYNC);
            await("the second typha sending node-p's snapshot",
                    () -> logged.contains("(node-p): this typha caught up; sending the snapshot"));
            // A marker written now reaches the client after the snapshot: whatever the snapshot
            // changed has been reported by the time the marker is.
            ds.create(TyphaServerTest.set("marker", 1, 99));
            await("the marker at the client", () -> v.view().size() == 6);
            assertThat(v.updates()).as("nothing changed, nothing reported (but the marker)").hasSize(1)
                    .allSatisfy(u -> assertThat(u.key().name()).isEqualTo("marker"));
            assertThat(v.view()).hasSize(6);
            assertThat(v.violations()).isEmpty();
            assertThat(c.connections()).isGreaterThanOrEqualTo(2);
        } finally {
            a.close();
            if (b != null) {
                b.close();
            }
            ds.close();
        }
    }
}
