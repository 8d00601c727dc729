package calico.typha.server;

import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.testing.Await;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Issue 29's reconnect figure: a client with the default options loses its typha for each outage given
 * (seconds), typha comes back on the same port, and the time from typha listening again to the client
 * being connected is printed, with the attempts the client made.
 * {@code bench/run.sh typha-service calico.typha.server.ReconnectBench 5 30 60}.
 */
public final class ReconnectBench {

    private ReconnectBench() {
    }

    public static void main(String[] args) throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        ds.create(TyphaServerTest.set("bench", 1, 1));
        int port = TyphaServerTest.freePort();
        TyphaServer typha = start(ds, port);
        ViewRecorder view = new ViewRecorder();
        try (TyphaClient c = new TyphaClient(TyphaClientOptions.plaintext(List.of("127.0.0.1:" + port), "bench",
                SyncerType.FELIX), view)) {
            c.start();
            Await.until("the client in sync", Duration.ofMinutes(1), () -> c.connectionStats().connected() && view.inSync());
            System.out.println("outage_s  back_after_ms  attempts_during_outage");
            for (String a : args.length == 0 ? new String[] {"5", "30", "60"} : args) {
                long outage = Long.parseLong(a) * 1000;
                typha.close();
                long attempts = c.connectionStats().attempts();
                Thread.sleep(outage); // the outage being measured
                typha = start(ds, port);
                long listening = System.nanoTime();
                Await.until("the client back", Duration.ofMinutes(1), () -> c.connectionStats().connected());
                long backMs = (System.nanoTime() - listening) / 1_000_000;
                System.out.printf("%8d  %13d  %21d%n", outage / 1000, backMs, c.connectionStats().attempts() - attempts);
            }
        } finally {
            typha.close();
        }
    }

    private static TyphaServer start(MemoryDatastore ds, int port) {
        TyphaServer s = new TyphaServer(ds, ServerSettings.defaults(port), null, new SimpleMeterRegistry(),
                new HealthAggregator(Clock.systemUTC()), "bench", null);
        s.start();
        return s;
    }
}
