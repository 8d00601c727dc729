package calico.libcalico.health;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handle one health source uses to report, obtained from
 * {@link HealthAggregator#registerReporter}. Thread-safe: any thread may report at any time.
 *
 * <p>A reporter with a timeout must report again before the timeout passes, even when nothing
 * changed; that is how a stalled loop shows up as unhealthy.
 */
public final class HealthReporter {

    private static final Logger LOG = LoggerFactory.getLogger(HealthReporter.class);

    /** One report; {@code at} is when it was made, by the aggregator's clock. */
    private record Report(boolean live, boolean ready, String detail, Instant at) {
    }

    private final String name;
    private final boolean reportsLive;
    private final boolean reportsReady;
    private final Duration registeredTimeout;
    /** The registered timeout, or an override ({@link HealthAggregator#overrideTimeouts}). */
    private volatile Duration timeout;
    private final Clock clock;
    // null until the first report: a silent reporter fails the probes it declared.
    private final AtomicReference<Report> latest = new AtomicReference<>();

    HealthReporter(String name, boolean reportsLive, boolean reportsReady, Duration timeout, Clock clock) {
        this.name = name;
        this.reportsLive = reportsLive;
        this.reportsReady = reportsReady;
        this.registeredTimeout = timeout;
        this.timeout = timeout;
        this.clock = clock;
    }

    /** Uses {@code override} as this reporter's timeout, or the registered one again when null. */
    void overrideTimeout(Duration override) {
        Duration next = override == null ? registeredTimeout : override;
        if (!next.equals(timeout)) {
            LOG.info("Health reporter {}: timeout {} (registered with {})", name, next, registeredTimeout);
        }
        timeout = next;
    }

    /** {@return the name this reporter was registered under} */
    public String name() {
        return name;
    }

    /**
     * Records the current health of this source. Values for a kind of health the reporter did
     * not declare are kept for the record but never affect the overall result.
     *
     * @param live   whether the source is live
     * @param ready  whether the source is ready
     * @param detail a short explanation shown in the health JSON; {@code null} for none
     */
    public void report(boolean live, boolean ready, String detail) {
        Report next = new Report(live, ready, detail == null ? "" : detail, clock.instant());
        Report previous = latest.getAndSet(next);
        // Log changes only, and only of what counts: a refresh loop reports the same thing often.
        String now = describe(next);
        String before = describe(previous);
        if (!now.equals(before)) {
            LOG.info("Health of {} changed: {} (was {})", name, now, before);
        }
    }

    /** Same as {@code report(live, ready, null)}. */
    public void report(boolean live, boolean ready) {
        report(live, ready, null);
    }

    /** Computes this reporter's status at {@code now}. */
    ReporterStatus status(Instant now) {
        Report report = latest.get();
        Duration timeout = this.timeout;
        boolean timedOut = report != null && !timeout.isZero() && Duration.between(report.at(), now).compareTo(timeout) > 0;
        return new ReporterStatus(
                name,
                timeout,
                verdict(reportsLive, report, timedOut, report != null && report.live()),
                verdict(reportsReady, report, timedOut, report != null && report.ready()),
                report == null ? "" : report.detail(),
                report == null ? null : report.at());
    }

    private static Verdict verdict(boolean declared, Report report, boolean timedOut, boolean value) {
        if (!declared) {
            return Verdict.NOT_APPLICABLE;
        }
        if (report == null) {
            return Verdict.NEVER_REPORTED;
        }
        if (timedOut) {
            return Verdict.TIMED_OUT;
        }
        return value ? Verdict.REPORTED_HEALTHY : Verdict.REPORTED_UNHEALTHY;
    }

    private String describe(Report report) {
        if (report == null) {
            return "nothing";
        }
        StringBuilder text = new StringBuilder();
        if (reportsLive) {
            text.append(report.live() ? "live" : "non-live");
        }
        if (reportsReady) {
            text.append(text.length() > 0 ? "," : "").append(report.ready() ? "ready" : "non-ready");
        }
        if (!report.detail().isEmpty()) {
            text.append(" detail=").append(report.detail());
        }
        return text.toString();
    }

    @Override
    public String toString() {
        return "HealthReporter[" + name + ", live=" + reportsLive + ", ready=" + reportsReady + ", timeout=" + timeout + "]";
    }
}
