package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.client;
import static calico.typha.server.TyphaFixture.clientOptions;
import static calico.typha.server.TyphaFixture.closeAll;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.libcalico.datastore.memory.MemoryDatastore;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TYPHA_CONNECTIONDROPINTERVALSECS (the server's rebalance interval): a typha over its target
 * sheds one connection per interval, never faster, until it is at the target. The drop times are
 * those of the "Dropping client" log events (taken on the timer thread as it sheds), so a loaded
 * machine can only make the gaps longer, never shorter.
 */
class ConnectionDropIntervalTest {

    @Test
    void surplusConnectionsAreShedOnePerDropInterval() throws Exception {
        CapturedLog logged = new CapturedLog(ClientConnection.class);
        List<AutoCloseable> resources = new ArrayList<>();
        Duration interval = Duration.ofSeconds(2);
        try (MemoryDatastore ds = new MemoryDatastore()) {
            for (int i = 0; i < 10; i++) {
                ds.create(new GlobalNetworkSet(ObjectMeta.named("gns-" + i),
                        new GlobalNetworkSetSpec(List.of("10.0." + i + ".0/24"))));
            }
            TyphaServer b = server(ds, ServerSettings.defaults(0));
            resources.add(b);
            TyphaServer a = server(ds, ServerSettings.defaults(0).withRebalance(1, interval));
            resources.add(a);
            List<ViewRecorder> views = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                ViewRecorder v = new ViewRecorder();
                views.add(v);
                resources.add(client(clientOptions("t5-node-" + i, a.port(), b.port()), v));
            }
            await("A shed down to its target of 1", () -> a.connectionCount() == 1 && b.connectionCount() == 3,
                    Duration.ofSeconds(60), () -> "A " + a.connectionCount() + ", B " + b.connectionCount());
            await("every client in sync", () -> views.stream().allMatch(ViewRecorder::inSync));
            // A's own decisions at its target: two more rebalancing rounds that shed nothing.
            long rounds = a.rebalanceRounds();
            await("A decided twice more at its target", () -> a.rebalanceRounds() >= rounds + 2,
                    Duration.ofSeconds(60), () -> "rounds " + a.rebalanceRounds());
            List<Long> drops = logged.events().stream()
                    .filter(e -> e.getFormattedMessage().startsWith("Dropping client")
                            && e.getFormattedMessage().contains("), rebalance:"))
                    .map(ILoggingEvent::getTimeStamp).toList();
            assertThat(drops).as("one drop per surplus connection (4 connected, target 1)").hasSize(3);
            for (int i = 1; i < drops.size(); i++) {
                assertThat(drops.get(i) - drops.get(i - 1)).as("gap before drop %d, ms", i)
                        .isGreaterThanOrEqualTo(interval.toMillis() - 50);
            }
        } finally {
            java.util.Collections.reverse(resources);
            closeAll(resources);
            logged.close();
        }
    }
}
