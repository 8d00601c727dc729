package calico.libcalico.health;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The end of a plain main's AppCDS training run: with {@code -Dcalico.exit=onReady} a main stops once
 * it is ready, as a Spring Boot service's training run stops at context refresh
 * ({@code -Dspring.context.exit=onRefresh}), so that {@code -XX:ArchiveClassesAtExit} archives the
 * classes its start-up loaded. A training run is given both properties (the launcher's
 * {@code AppCds}, {@code scripts/images.sh appcds}); each kind of main honours its own.
 *
 * <p>Adopting it is one line at the main's ready moment, after its shutdown hook is registered:
 * {@code TrainingRun.endOnceReady("felix", () -> health.summary().ready());}. Without the property it
 * returns at once and costs nothing.
 */
public final class TrainingRun {

    /** The system property, and its value, that end a training run at the ready moment. */
    public static final String PROPERTY = "calico.exit";
    public static final String ON_READY = "onReady";

    private static final Duration POLL = Duration.ofMillis(50);

    private TrainingRun() {
    }

    /** {@return whether this JVM is a training run} ({@code -Dcalico.exit=onReady}) */
    private static boolean requested() {
        return ON_READY.equals(System.getProperty(PROPERTY));
    }

    /**
     * In a training run, waits on the calling thread until {@code ready} holds, then exits the JVM with
     * status 0 (shutdown hooks run: the service stops as on SIGTERM, and the JVM dumps its archive);
     * otherwise returns at once.
     *
     * @param component named in the line that says why the JVM ends
     * @param ready     the main's ready moment (polled every 50 ms)
     */
    public static void endOnceReady(String component, BooleanSupplier ready) throws InterruptedException {
        if (!requested()) {
            return;
        }
        while (!ready.getAsBoolean()) {
            Thread.sleep(POLL.toMillis());
        }
        System.err.println(component + " ready: ending the training run (-D" + PROPERTY + "=" + ON_READY + ")");
        System.exit(0);
    }
}
