package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.client;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Resource;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A client with the default options keeps dialling typha during a long outage, so it is back as soon
 * as typha is. The outage is a port that accepts and drops every connection, which lets the test count
 * dials: gRPC's own channel backoff (1 s growing by 1.6 up to 2 min) would dial about 5 times in the
 * first 15 s, and every attempt of the client's in between would fail at once with the old error.
 * The connection listener hears each change as it happens: connected, lost, connected again.
 */
class ReconnectAfterOutageTest {

    @Test
    void theClientDialsOnItsOwnScheduleThroughAnOutageAndIsBackWhenTyphaIs() throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        ds.create(TyphaServerTest.set("before", 1, 1));
        int port = TyphaServerTest.freePort();
        TyphaServer a = server(ds, ServerSettings.defaults(port));
        ViewRecorder v = new ViewRecorder();
        TyphaServer b = null;
        List<TyphaClient.ConnectionStats> heard = new CopyOnWriteArrayList<>();
        try (TyphaClient c = new TyphaClient(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port), "node-o",
                SyncerType.FELIX), v, heard::add)) {
            c.start();
            await("in sync", v::inSync);
            assertThat(heard).as("told once, when typha's first message arrived").hasSize(1);
            assertThat(heard.get(0).connected()).isTrue();
            assertThat(heard.get(0).address()).isEqualTo("127.0.0.1:" + port);
            TyphaClient.ConnectionStats up = c.connectionStats();
            assertThat(up.connected()).isTrue();
            assertThat(up.address()).isEqualTo("127.0.0.1:" + port);
            assertThat(up.disconnectedFor()).isZero();

            a.close();
            await("the client saw typha go", () -> !c.connectionStats().connected());
            await("the listener told", () -> heard.size() == 2);
            assertThat(heard.get(1).connected()).isFalse();
            AtomicInteger dials = new AtomicInteger();
            try (ServerSocket dropper = new ServerSocket()) {
                dropper.setReuseAddress(true);
                dropper.bind(new InetSocketAddress("127.0.0.1", port));
                Thread accepter = new Thread(() -> dropEvery(dropper, dials), "drop-typha-dials");
                accepter.setDaemon(true);
                accepter.start();
                await("8 dials while typha is away", () -> dials.get() >= 8, Duration.ofSeconds(15),
                        () -> "dials: " + dials.get());
                TyphaClient.ConnectionStats away = c.connectionStats();
                assertThat(away.connected()).isFalse();
                assertThat(away.address()).as("between streams").isNull();
                // gRPC may dial on its own too, so dials and attempts need not match one for one.
                assertThat(away.attempts()).as("attempts counted through the outage").isGreaterThan(up.attempts() + 2);
                assertThat(away.disconnectedFor()).isPositive();
            }

            Resource meanwhile = ds.create(TyphaServerTest.set("meanwhile", 1, 2));
            b = server(ds, ServerSettings.defaults(port));
            await("back and converged", () -> v.view().containsKey(meanwhile.key()) && c.connectionStats().connected());
            assertThat(c.connectionStats().disconnectedFor()).isZero();
            await("the listener told of the new stream", () -> heard.size() == 3);
            assertThat(heard.get(2).connected()).as("failed dials are no change: only the new stream is").isTrue();
            assertThat(v.violations()).isEmpty();
        } finally {
            if (b != null) {
                b.close();
            }
        }
    }

    /**
     * The first attempt after typha is back connects: it is not failed by the error of the dial before (the
     * channel still in TRANSIENT_FAILURE), which cost a whole backoff step. Three outages, each long enough
     * for the backoff to reach its cap; the channel's own redials make the old error's timing vary, so one
     * outage alone would not always show it.
     */
    @Test
    void theFirstAttemptAfterTyphaIsBackConnects() throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        ds.create(TyphaServerTest.set("before", 1, 1));
        int port = TyphaServerTest.freePort();
        TyphaServer up = server(ds, ServerSettings.defaults(port));
        ViewRecorder v = new ViewRecorder();
        try (TyphaClient c = client(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port), "node-f",
                SyncerType.FELIX), v)) {
            await("in sync", v::inSync);
            for (int round = 1; round <= 3; round++) {
                up.close();
                await("the client saw typha go", () -> !c.connectionStats().connected());
                long lost = c.connections();
                // 100, 200, 400, 800 ms, then the 1 s cap, each attempt refused.
                await("the backoff at its cap", () -> c.connections() >= lost + 6, Duration.ofSeconds(30),
                        () -> "attempts: " + (c.connections() - lost));
                up = server(ds, ServerSettings.defaults(port));
                long atReturn = c.connections();
                await("back on typha", () -> c.connectionStats().connected());
                assertThat(c.connections() - atReturn).as("round %d: attempts after typha listened again", round)
                        .isLessThanOrEqualTo(1);
            }
            assertThat(v.violations()).isEmpty();
        } finally {
            up.close();
        }
    }

    private static void dropEvery(ServerSocket s, AtomicInteger dials) {
        while (!s.isClosed()) {
            try (Socket accepted = s.accept()) {
                dials.incrementAndGet();
            } catch (IOException closed) {
                return;
            }
        }
    }
}
