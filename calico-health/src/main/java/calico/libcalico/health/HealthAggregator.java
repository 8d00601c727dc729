package calico.libcalico.health;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Aggregates the health of a component's independent parts (its reporters) into one liveness
 * and one readiness, the way Calico components do.
 *
 * <ul>
 *   <li>Each reporter declares at registration whether it reports liveness, readiness or both;
 *       it only ever affects the kinds it declared.</li>
 *   <li>Live overall = every liveness reporter's latest report says live; ready overall = every
 *       readiness reporter's latest report says ready. No reporters: live and ready.</li>
 *   <li>A reporter that has not reported yet fails the kinds it declared (unlike Calico, which
 *       starts reporters as live: here a component proves it is alive).</li>
 *   <li>A reporter with a non-zero timeout fails the kinds it declared once its latest report is
 *       older than the timeout (strictly), until it reports again.</li>
 * </ul>
 *
 * <p>Time comes from the injected {@link Clock} only, so tests can move it. Thread-safe; one
 * instance per component (a Spring bean in services, see {@code CalicoHealthAutoConfiguration}).
 */
public final class HealthAggregator {

    private static final Logger LOG = LoggerFactory.getLogger(HealthAggregator.class);

    private final Clock clock;
    // Sorted by name so that summaries and JSON are stable.
    private final ConcurrentSkipListMap<String, HealthReporter> reporters = new ConcurrentSkipListMap<>();
    // Told about every reporter, including those registered before the listener (metrics use it).
    private final List<Consumer<ReporterStatus>> registrationListeners = new CopyOnWriteArrayList<>();
    // The last overall (live, ready) pair, so that only changes are logged.
    private final AtomicReference<List<Boolean>> lastOverall = new AtomicReference<>();
    // Timeouts by reporter name that replace the registered ones (Calico's healthTimeoutOverrides).
    private volatile Map<String, Duration> timeoutOverrides = Map.of();

    public HealthAggregator(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** An aggregator on the system UTC clock. */
    public HealthAggregator() {
        this(Clock.systemUTC());
    }

    /**
     * Registers a named reporter.
     *
     * @param name         unique within this aggregator, shown in JSON, logs and metrics
     * @param reportsLive  whether this reporter's reports count towards liveness
     * @param reportsReady whether this reporter's reports count towards readiness
     * @param timeout      how fresh the latest report must be; {@code null} or zero for "never expires"
     * @return the handle to report through
     * @throws IllegalArgumentException for a blank or duplicate name, a negative timeout, or a
     *                                  reporter that reports neither kind of health
     */
    public HealthReporter registerReporter(String name, boolean reportsLive, boolean reportsReady, Duration timeout) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("name: must not be blank");
        }
        if (!reportsLive && !reportsReady) {
            throw new IllegalArgumentException(
                    "reporter " + name + ": must report liveness, readiness or both (reportsLive and reportsReady are false)");
        }
        Duration effectiveTimeout = timeout == null ? Duration.ZERO : timeout;
        if (effectiveTimeout.isNegative()) {
            throw new IllegalArgumentException("reporter " + name + ": timeout must not be negative, got " + timeout);
        }
        HealthReporter reporter = new HealthReporter(name, reportsLive, reportsReady, effectiveTimeout, clock);
        synchronized (registrationListeners) {
            if (reporters.putIfAbsent(name, reporter) != null) {
                throw new IllegalArgumentException("reporter " + name + ": already registered");
            }
            reporter.overrideTimeout(timeoutOverrides.get(name));
            ReporterStatus registered = reporter.status(clock.instant());
            registrationListeners.forEach(listener -> listener.accept(registered));
        }
        LOG.debug("Registered {}", reporter);
        return reporter;
    }

    /**
     * Replaces the timeout of each reporter named in {@code overrides} (Calico's {@code
     * healthTimeoutOverrides}; zero: never expires), now and for a reporter registered later; a
     * reporter no longer named gets its registered timeout back.
     *
     * @return the names no reporter is registered under yet (callers warn: a misspelt name does nothing)
     * @throws IllegalArgumentException naming the reporter whose timeout is negative
     */
    public java.util.Set<String> overrideTimeouts(Map<String, Duration> overrides) {
        overrides.forEach((name, timeout) -> {
            if (timeout == null || timeout.isNegative()) {
                throw new IllegalArgumentException("timeout override for " + name + ": must not be negative, got " + timeout);
            }
        });
        java.util.Set<String> unknown = new java.util.TreeSet<>();
        synchronized (registrationListeners) {
            timeoutOverrides = Map.copyOf(overrides);
            reporters.forEach((name, r) -> r.overrideTimeout(timeoutOverrides.get(name)));
            overrides.keySet().stream().filter(n -> !reporters.containsKey(n)).forEach(unknown::add);
        }
        return unknown;
    }

    /** {@return the current overall health and every reporter's status} */
    public HealthSummary summary() {
        Instant now = clock.instant();
        List<ReporterStatus> statuses = new ArrayList<>(reporters.size());
        boolean live = true;
        boolean ready = true;
        for (HealthReporter reporter : reporters.values()) {
            ReporterStatus status = reporter.status(now);
            live &= status.liveness().healthy();
            ready &= status.readiness().healthy();
            statuses.add(status);
        }
        HealthSummary summary = new HealthSummary(live, ready, statuses);
        logIfChanged(summary);
        return summary;
    }

    /** {@return one reporter's current status, or empty if no reporter has that name} */
    public Optional<ReporterStatus> status(String name) {
        HealthReporter reporter = reporters.get(name);
        return reporter == null ? Optional.empty() : Optional.of(reporter.status(clock.instant()));
    }

    /**
     * Calls {@code listener} once for every reporter: at once (in name order) for those already
     * registered, then at each later registration, with the reporter's status at that moment.
     */
    public void addRegistrationListener(Consumer<ReporterStatus> listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (registrationListeners) {
            Instant now = clock.instant();
            reporters.values().forEach(reporter -> listener.accept(reporter.status(now)));
            registrationListeners.add(listener);
        }
    }

    private void logIfChanged(HealthSummary summary) {
        List<Boolean> overall = List.of(summary.live(), summary.ready());
        List<Boolean> previous = lastOverall.getAndSet(overall);
        if (overall.equals(previous)) {
            return;
        }
        StringBuilder text = new StringBuilder();
        for (ReporterStatus status : summary.reporters()) {
            text.append(System.lineSeparator()).append("  ").append(status.name())
                    .append(": liveness=").append(status.liveness().text())
                    .append(", readiness=").append(status.readiness().text());
            if (!status.detail().isEmpty()) {
                text.append(", detail=").append(status.detail());
            }
        }
        LOG.info("Overall health changed: live={} ready={}{}", summary.live(), summary.ready(), text);
    }
}
