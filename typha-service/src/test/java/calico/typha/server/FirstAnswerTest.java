package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.client;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A felix starting against a typha that is already in sync waits for nothing but work: its stream opens
 * on the dial's outcome (not on the client's fallback timer, 2 s, meant for a channel that shows no
 * outcome), and typha answers the hello with the snapshot at once (no snapshot held back). Each
 * client is a fresh one (its own channel), as a starting felix is, with the options felix uses (kvs-gzip).
 * FootprintBench's felix showed the same (bench/RESULTS.md, 2026-12-06 23:11): the ~2 s from the client's
 * start to typha's first answer are class loading and the dial, typha answering 26 ms after the hello.
 */
class FirstAnswerTest {

    @Test
    void aClientOfAnInSyncTyphaOpensItsStreamOnTheDialsOutcomeAndIsAnsweredWithoutAWait() throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        ds.create(TyphaServerTest.set("present", 1, 1));
        int port = TyphaServerTest.freePort();
        Logger clientLog = (Logger) LoggerFactory.getLogger(TyphaClient.class);
        Level was = clientLog.getLevel();
        clientLog.setLevel(Level.DEBUG);
        try (TyphaServer typha = server(ds, ServerSettings.defaults(port));
             CapturedLog client = new CapturedLog(TyphaClient.class);
             CapturedLog server = new CapturedLog(ClientConnection.class)) {
            // The process's first channel loads gRPC's and Netty's classes: under the suite's load that alone may outlast
            // the fallback (harmless then: the stream waits for the dial). The clients asserted on are the later ones.
            ViewRecorder first = new ViewRecorder();
            try (TyphaClient warm = client(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port), "node-0",
                    SyncerType.FELIX).withCompression(true), first)) {
                await("typha in sync and the classes loaded", first::inSync);
            }
            for (int i = 1; i <= 3; i++) {
                ViewRecorder v = new ViewRecorder();
                int before = client.events().size();
                try (TyphaClient c = client(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port), "node-" + i,
                        SyncerType.FELIX).withCompression(true), v)) {
                    await("client " + i + " in sync", v::inSync);
                    assertThat(c.connections()).as("client %d: its first attempt connected", i).isEqualTo(1);
                }
                List<String> opened = client.events().subList(before, client.events().size()).stream()
                        .map(ILoggingEvent::getFormattedMessage).filter(m -> m.startsWith("Opening stream")).toList();
                assertThat(opened).as("client %d: why its one stream was opened", i).singleElement()
                        .satisfies(m -> assertThat(m).containsAnyOf("the dial's outcome: ", "the channel was ready")
                                .doesNotContain("fallback"));
            }
            assertThat(server.events()).extracting(ILoggingEvent::getFormattedMessage)
                    .as("no snapshot held back for a client that has seen nothing").noneMatch(m -> m.contains("snapshot waits"));
        } finally {
            clientLog.setLevel(was);
        }
    }
}
