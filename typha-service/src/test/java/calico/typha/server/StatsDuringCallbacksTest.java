package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The client's callbacks run under its lock; {@code connectionStats()} must not need that lock. felix's health
 * report holds a lock of its own while it asks for the stats, and its status callback takes that lock: with the
 * stats behind the client's lock, felix hung for good after its first typha message under load (FootprintBench,
 * 2026-12-06 23:56: connected, then no pong and no read timeout). Here a status callback waits for another
 * thread that asks for the stats, as felix's health loop does.
 */
class StatsDuringCallbacksTest {

    @Test
    void anotherThreadGetsTheConnectionStatsWhileACallbackRuns() throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        ds.create(TyphaServerTest.set("present", 1, 1));
        int port = TyphaServerTest.freePort();
        ExecutorService other = Executors.newSingleThreadExecutor();
        AtomicReference<TyphaClient> client = new AtomicReference<>();
        List<String> answers = new CopyOnWriteArrayList<>();
        SyncerCallbacks callbacks = new SyncerCallbacks() {
            @Override
            public void onStatusUpdated(SyncerStatus status) {
                TyphaClient c = client.get();
                if (c == null) {
                    return;
                }
                Future<TyphaClient.ConnectionStats> stats = other.submit(c::connectionStats);
                try {
                    answers.add(status + ": " + (stats.get(20, TimeUnit.SECONDS).connected() ? "connected" : "not connected"));
                } catch (TimeoutException e) {
                    answers.add(status + ": no answer while the callback ran");
                } catch (Exception e) {
                    answers.add(status + ": " + e);
                }
            }

            @Override
            public void onUpdates(List<Update> updates) {
            }
        };
        try (TyphaServer typha = server(ds, ServerSettings.defaults(port));
             TyphaClient c = new TyphaClient(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port), "node-s",
                     SyncerType.FELIX), callbacks)) {
            client.set(c);
            c.start();
            await("in sync", () -> c.status() == SyncerStatus.IN_SYNC);
            assertThat(answers).as("each status callback got the stats from another thread")
                    .contains("IN_SYNC: connected").noneMatch(a -> a.contains("no answer"));
        } finally {
            other.shutdownNow();
        }
    }
}
