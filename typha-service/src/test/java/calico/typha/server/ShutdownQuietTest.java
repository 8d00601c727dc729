package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.libcalico.datastore.memory.MemoryDatastore;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Closing a typha while its clients cancel is quiet: a wake-up that reaches a connection after
 * its event loop is gone (a cancel, a ping, a seal) is dropped, not thrown into gRPC's or the
 * sealer's thread as a {@link RejectedExecutionException}.
 */
class ShutdownQuietTest {

    @Test
    void aWakeUpAfterTheSenderPoolIsGoneDoesNotThrow() {
        ExecutorService gone = Executors.newSingleThreadExecutor();
        gone.shutdownNow();
        ClientConnection c = new ClientConnection(1, null, null, gone);
        assertThatCode(c::requestDrain).doesNotThrowAnyException();
        assertThatCode(c::requestDrain).as("a second wake-up fails the same quiet way").doesNotThrowAnyException();
    }

    @Test
    void closingWhileClientsCancelLogsNoRejectedExecution() throws Exception {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        List<LogRecord> julRecords = new java.util.concurrent.CopyOnWriteArrayList<>();
        Handler jul = new Handler() {
            @Override
            public void publish(LogRecord r) {
                julRecords.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger.getLogger("").addHandler(jul);
        try (MemoryDatastore ds = new MemoryDatastore()) {
            for (int i = 0; i < 50; i++) {
                ds.create(new GlobalNetworkSet(ObjectMeta.named("gns-" + i),
                        new GlobalNetworkSetSpec(List.of("10.0." + i + ".0/24"))));
            }
            for (int round = 0; round < 5; round++) {
                TyphaServer typha = server(ds, ServerSettings.defaults(0));
                List<RawClient> clients = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    RawClient c = RawClient.connect(typha.port());
                    c.hello("node-" + i, "felix");
                    clients.add(c);
                }
                await("20 connections", () -> typha.connectionCount() == 20);
                Thread closer = new Thread(typha::close, "t5-closer");
                closer.start();
                clients.forEach(RawClient::close); // cancels racing the close
                closer.join(30_000);
                assertThat(closer.isAlive()).isFalse();
            }
        } finally {
            root.detachAppender(logged);
            java.util.logging.Logger.getLogger("").removeHandler(jul);
        }
        assertThat(logged.list.stream().filter(e -> rejected(e.getThrowableProxy())
                || e.getFormattedMessage().contains("RejectedExecutionException")).map(ILoggingEvent::getFormattedMessage))
                .isEmpty();
        assertThat(julRecords.stream().filter(r -> causedByRejection(r.getThrown())).map(LogRecord::getMessage)).isEmpty();
    }

    private static boolean rejected(IThrowableProxy t) {
        for (; t != null; t = t.getCause()) {
            if (t.getClassName().equals(RejectedExecutionException.class.getName())) {
                return true;
            }
        }
        return false;
    }

    private static boolean causedByRejection(Throwable t) {
        for (; t != null; t = t.getCause()) {
            if (t instanceof RejectedExecutionException) {
                return true;
            }
        }
        return false;
    }
}
