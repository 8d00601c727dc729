package calico.felix.app;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.FelixStatusReport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calico felix's status reports ({@code reportingInterval}, Calico's default 30 s; 0 turns them off): every interval
 * felix writes when it reported and how long it has run into the datastore ({@link Datastore#reportFelixStatus}:
 * etcd keeps them, the live copy expiring after {@code reportingTTL}; the kubernetes datastore drops them, as
 * Calico's). The schedule follows each effective configuration; the reports go through a datastore client of
 * their own (felix may read through typha), opened on first use, on a thread of their own. A failed write is
 * logged once per distinct error and tried again at the next interval.
 */
public final class FelixStatusReporter implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(FelixStatusReporter.class);

    private final String node;
    private final Supplier<Datastore> open;
    private final Clock clock;
    private final Instant started;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "felix-status-report");
        t.setDaemon(true);
        return t;
    });
    private ScheduledFuture<?> task;
    private Duration interval = Duration.ZERO;
    private Duration ttl = Duration.ZERO;
    /** Touched on the timer thread only. */
    private Datastore datastore;
    private boolean firstSent;
    private String lastError;
    private volatile long reports;

    /** @param open a client of the datastore the reports go to; null when the datastore keeps none (never scheduled) */
    FelixStatusReporter(String node, Supplier<Datastore> open, Clock clock) {
        this.node = node;
        this.open = open;
        this.clock = clock;
        this.started = clock.instant();
    }

    /** Follows the last ConfigUpdate of {@code batch}, if it has one (on the syncer's thread). */
    void onBatch(List<DataplaneUpdate> batch) {
        calico.felix.calc.FelixSettings s = ProgrammedState.lastConfig(batch);
        if (s != null) {
            follow(s);
        }
    }

    /** Reports every {@code reportingInterval} of {@code s} from now on (none when it is zero). */
    synchronized void follow(FelixSettings s) {
        if (s.reportingInterval().equals(interval) && s.reportingTtl().equals(ttl)) {
            return;
        }
        interval = s.reportingInterval();
        ttl = s.reportingTtl();
        if (task != null) {
            task.cancel(false);
            task = null;
        }
        if (open != null && !interval.isZero() && !interval.isNegative() && !timer.isShutdown()) {
            task = timer.scheduleWithFixedDelay(this::report, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** {@return how many reports the datastore took} (for tests and the admin API) */
    public long reports() {
        return reports;
    }

    private void report() {
        Duration keepFor;
        synchronized (this) {
            keepFor = ttl;
        }
        try {
            if (datastore == null) {
                datastore = open.get();
            }
            Instant now = clock.instant();
            double uptime = Duration.between(started, now).toMillis() / 1000.0;
            if (datastore.reportFelixStatus(node, new FelixStatusReport(now.toString(), uptime, !firstSent), keepFor)) {
                firstSent = true;
                reports++;
            }
            lastError = null;
        } catch (RuntimeException e) {
            String error = e.getMessage();
            if (!java.util.Objects.equals(error, lastError)) {
                log.warn("reportingInterval: cannot write felix's status report: {} (tried again every {})", error,
                        interval);
            }
            lastError = error;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Datastore d = datastore;
        if (d != null) {
            d.close();
        }
    }
}
