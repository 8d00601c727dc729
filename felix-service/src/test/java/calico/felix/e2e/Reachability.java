package calico.felix.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Waits for a set of expected probe outcomes after a datastore write and records how long the
 * dataplane took. Every probe polls on its own (in parallel) until it shows its expected outcome
 * or the deadline passes; then one more round of all probes must agree (so an outcome seen in
 * passing, before felix finished, does not count). A probe expected to fail waits
 * {@link #NEGATIVE} for an answer (local veths answer in well under a millisecond); while
 * waiting for a probe to start passing, failed attempts use a shorter timeout and are retried.
 */
final class Reachability implements AutoCloseable {

    /** How long a blocked probe waits before calling it blocked. */
    static final Duration NEGATIVE = Duration.ofMillis(300);
    /** How long a probe expected to pass may take in the final round. */
    private static final Duration POSITIVE = Duration.ofSeconds(1);
    private static final Duration RETRY = Duration.ofMillis(50);

    /** A step's outcome: how long after the write every probe showed its expected outcome. */
    record Observed(String scenario, String step, long millis, int probes) {
    }

    private final ExecutorService pool = Executors.newFixedThreadPool(16, r -> {
        Thread t = new Thread(r, "e2e-probe");
        t.setDaemon(true);
        return t;
    });
    private final List<Observed> observed = new ArrayList<>();
    private final Duration deadline;

    Reachability(Duration deadline) {
        this.deadline = deadline;
    }

    /** {@return the expected outcomes {@code probeThenOutcome} lists}: a probe, then whether it passes, and so on. */
    static Map<Probe, Boolean> expectations(Object... probeThenOutcome) {
        Map<Probe, Boolean> out = new LinkedHashMap<>();
        for (int i = 0; i < probeThenOutcome.length; i += 2) {
            out.put((Probe) probeThenOutcome[i], (Boolean) probeThenOutcome[i + 1]);
        }
        return out;
    }

    /**
     * Polls until every probe shows its expected outcome (measured from {@code writtenAtNanos}),
     * waits for {@code settled} (felix has applied the write: an expectation that already held
     * before the write is otherwise met before felix even saw it), then confirms with one more
     * round; throws an {@link AssertionError} listing each probe that
     * disagrees, with {@code diagnostics} appended.
     */
    Observed await(String scenario, String step, long writtenAtNanos, Map<Probe, Boolean> expected,
            Runnable settled, Supplier<String> diagnostics) {
        long until = writtenAtNanos + deadline.toNanos();
        Map<Probe, Future<Long>> polls = new LinkedHashMap<>();
        expected.forEach((probe, pass) -> polls.put(probe, pool.submit(() -> settle(probe, pass, until))));
        long latest = 0;
        List<String> late = new ArrayList<>();
        for (Map.Entry<Probe, Future<Long>> e : polls.entrySet()) {
            long at = get(e.getValue());
            if (at < 0) {
                late.add(e.getKey() + " still " + (expected.get(e.getKey()) ? "blocked" : "allowed"));
            } else {
                latest = Math.max(latest, at);
            }
        }
        if (!late.isEmpty()) {
            throw new AssertionError(scenario + " / " + step + ": after " + deadline.toMillis() + " ms: " + late
                    + "\n" + diagnostics.get());
        }
        settled.run();
        Map<Probe, Future<Boolean>> confirm = new LinkedHashMap<>();
        expected.forEach((probe, pass) -> confirm.put(probe, pool.submit(() -> probe.passes(pass ? POSITIVE : NEGATIVE))));
        List<String> flipped = confirm.entrySet().stream()
                .filter(e -> get(e.getValue()) != expected.get(e.getKey()))
                .map(e -> e.getKey() + " " + (expected.get(e.getKey()) ? "blocked" : "allowed") + " again")
                .collect(Collectors.toList());
        if (!flipped.isEmpty()) {
            throw new AssertionError(scenario + " / " + step + ": unstable: " + flipped + "\n" + diagnostics.get());
        }
        Observed o = new Observed(scenario, step, (latest - writtenAtNanos) / 1_000_000, expected.size());
        synchronized (observed) {
            observed.add(o);
        }
        return o;
    }

    /** {@return when (nanoTime) the probe that first showed the expected outcome started}, or -1. */
    private static long settle(Probe probe, boolean pass, long until) {
        while (System.nanoTime() < until) {
            long start = System.nanoTime();
            boolean passed = probe.passes(pass ? RETRY : NEGATIVE);
            if (passed == pass) {
                return start;
            }
        }
        return -1;
    }

    List<Observed> observed() {
        synchronized (observed) {
            return List.copyOf(observed);
        }
    }

    /** A table of every step's delay, then the median and maximum over the steps that changed something. */
    String report(String title) {
        StringBuilder sb = new StringBuilder("=== " + title + ": change -> kernel delays ===\n");
        List<Observed> all = observed();
        for (Observed o : all) {
            sb.append(String.format("%-26s %-72s %5d ms (%d probes)%n", o.scenario(), o.step(), o.millis(), o.probes()));
        }
        long[] ms = all.stream().mapToLong(Observed::millis).sorted().toArray();
        if (ms.length > 0) {
            sb.append(String.format("steps=%d median=%d ms p90=%d ms max=%d ms%n", ms.length, ms[ms.length / 2],
                    ms[Math.min(ms.length - 1, (int) Math.ceil(ms.length * 0.9) - 1)], ms[ms.length - 1]));
        }
        return sb.toString();
    }

    private static <T> T get(Future<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
