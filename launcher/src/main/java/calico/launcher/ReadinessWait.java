package calico.launcher;

import java.time.Duration;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Waits for a started process to say it is ready, and returns the moment it does, or the moment it
 * exits. What it may spend is counted first in the process's own CPU time, not the wall clock: on a
 * machine at load 25 a JVM gets a fraction of a core, so its start takes many times longer by the
 * clock but about the same CPU; a process that computes without ever becoming ready runs out of
 * {@link Budget#cpu()}. A wall-clock cap still ends a wait on a process that sleeps forever (a
 * dependency that never answers).
 */
final class ReadinessWait {

    /** How often readiness is asked: an HTTP GET on loopback, far cheaper than the start it waits for. */
    static final Duration POLL = Duration.ofMillis(100);

    /**
     * @param cpu  the process's CPU time (user + system, all its threads) it may use before it must be ready
     * @param wall the clock's cap, whatever the load
     */
    record Budget(Duration cpu, Duration wall) {
        /** A JVM's start-up takes 3-15 s of its CPU; 90 s is a hung one. The clock's 10 minutes cover load 25 and beyond. */
        static final Budget DEFAULT = new Budget(Duration.ofSeconds(90), Duration.ofMinutes(10));

        Budget {
            positive("cpu", cpu);
            positive("wall", wall);
        }

        private static void positive(String name, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("await-ready --" + name + ": must be a positive number of seconds, got " + d);
            }
        }
    }

    /** How a wait ended. */
    sealed interface Outcome {
        /** {@return one line for the user} */
        String describe();
    }

    record Ready(Duration after, Duration cpuUsed) implements Outcome {
        @Override
        public String describe() {
            return "ready after " + after.toMillis() + " ms (" + cpuUsed.toMillis() + " ms of its CPU)";
        }
    }

    record Exited(Duration after) implements Outcome {
        @Override
        public String describe() {
            return "exited before it was ready (after " + after.toMillis() + " ms)";
        }
    }

    record OutOfBudget(Duration after, Duration cpuUsed, Budget budget) implements Outcome {
        @Override
        public String describe() {
            return "not ready after " + after.toSeconds() + " s and " + cpuUsed.toSeconds() + " s of its CPU (budget: "
                    + budget.cpu().toSeconds() + " s of CPU, at most " + budget.wall().toSeconds() + " s)";
        }
    }

    /** What the wait reads of the process: whether it runs, and its CPU time so far. */
    interface Watched {
        boolean alive();

        Duration cpu();

        /** A process by pid, read through {@link ProcessHandle} (/proc on Linux); a zombie counts as gone. */
        static Watched pid(long pid) {
            Optional<ProcessHandle> h = ProcessHandle.of(pid);
            return new Watched() {
                private Duration last = Duration.ZERO;

                @Override
                public boolean alive() {
                    return h.isPresent() && h.get().isAlive() && !DetachedProcess.zombie(pid);
                }

                @Override
                public Duration cpu() {
                    h.flatMap(p -> p.info().totalCpuDuration()).ifPresent(d -> last = d);
                    return last;
                }
            };
        }
    }

    private ReadinessWait() {
    }

    /** Asks {@code ready} every {@link #POLL} until it says yes, the process is gone, or the budget is spent. */
    static Outcome await(Watched process, BooleanSupplier ready, Budget budget) {
        Tracker t = new Tracker(process, ready, budget);
        while (true) {
            Optional<Outcome> o = t.poll();
            if (o.isPresent()) {
                return o.get();
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /**
     * One process's wait, asked once per poll by a caller that waits for several at once (a node's
     * felix, CNI daemon, confd and BIRD); the budget counts from the tracker's creation.
     */
    static final class Tracker {
        private final Watched process;
        private final BooleanSupplier ready;
        private final Budget budget;
        private final long start = System.nanoTime();

        Tracker(Watched process, BooleanSupplier ready, Budget budget) {
            this.process = process;
            this.ready = ready;
            this.budget = budget;
        }

        /** {@return how the wait ended, or empty while it goes on} */
        Optional<Outcome> poll() {
            Duration cpu = process.cpu();
            Duration after = Duration.ofNanos(System.nanoTime() - start);
            if (ready.getAsBoolean()) {
                return Optional.of(new Ready(after, cpu));
            }
            if (!process.alive()) {
                return Optional.of(new Exited(after));
            }
            if (cpu.compareTo(budget.cpu()) > 0 || after.compareTo(budget.wall()) > 0) {
                return Optional.of(new OutOfBudget(after, cpu, budget));
            }
            return Optional.empty();
        }
    }
}
