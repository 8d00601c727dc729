package calico.controllers.app;

import calico.api.validation.Durations;
import calico.controllers.reconcile.LoopStatus;
import calico.controllers.reconcile.LoopWatch;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.HealthReporter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Each reconcile loop's own health: a reporter {@code KubeControllers/<loop>} per loop name, so one loop
 * doing well never hides another doing badly. Every second: a loop whose run has not moved on for longer
 * than {@code stuckAfter} (a run that reports progress, as the loadbalancer's per Service, may be long) is
 * neither live nor ready (stuck); one whose last run failed is live but not ready
 * (failing, with the error); one that has not yet finished a run is not ready; a loop that is not running
 * (switched off, or this replica stands by) is healthy. With {@code healthChecks: Disabled}
 * ({@code HEALTH_ENABLED=false}) every loop reports healthy.
 */
final class LoopHealth implements AutoCloseable {

    static final String PREFIX = "KubeControllers/";

    private final HealthAggregator aggregator;
    private final LoopWatch watch;
    private final Duration stuckAfter;
    private final Clock clock;
    private final Map<String, HealthReporter> reporters = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "loop-health");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean enabled;

    LoopHealth(HealthAggregator aggregator, LoopWatch watch, Duration stuckAfter, boolean enabled, Clock clock) {
        this.aggregator = aggregator;
        this.watch = watch;
        this.stuckAfter = stuckAfter;
        this.enabled = enabled;
        this.clock = clock;
    }

    void start() {
        timer.scheduleWithFixedDelay(this::check, 0, 1, TimeUnit.SECONDS);
    }

    /** {@code healthChecks} of the running configuration. */
    void enabled(boolean on) {
        enabled = on;
        check();
    }

    /** Reports every loop's health now. */
    synchronized void check() {
        Map<String, LoopStatus> now = new HashMap<>();
        watch.statuses().forEach(s -> now.merge(s.name(), s, (a, b) -> a.runningSince() != null ? a : b));
        now.keySet().forEach(name -> reporters.computeIfAbsent(name,
                n -> aggregator.registerReporter(PREFIX + n, true, true, null)));
        Instant at = clock.instant();
        reporters.forEach((name, reporter) -> {
            LoopStatus s = now.get(name);
            if (!enabled) {
                reporter.report(true, true, "health checks disabled");
            } else if (s == null) {
                reporter.report(true, true, "not running");
            } else if (s.runningSince() != null && Duration.between(s.progressAt(), at).compareTo(stuckAfter) > 0) {
                // A text that stays the same while the state does: the reporter logs every change.
                reporter.report(false, false, "stuck: the run started at " + s.runningSince()
                        + " has not moved on since " + s.progressAt() + " (more than " + Durations.format(stuckAfter) + ")");
            } else if (s.failing()) {
                reporter.report(true, false, "failing: " + s.lastError());
            } else if (s.lastSuccess() == null) {
                reporter.report(true, false, "first run under way");
            } else {
                reporter.report(true, true, "in sync");
            }
        });
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
