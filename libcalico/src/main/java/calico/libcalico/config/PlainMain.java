package calico.libcalico.config;

import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The life of a plain main (confd, felix): its variables from the environment and {@code --NAME=value} arguments
 * ({@link Variables#environmentAndArguments}), the service started from them, stopped by SIGTERM (a shutdown hook
 * that closes it) while the main thread waits. A bad argument is exit status 2, a bad setting (or a port that cannot
 * be bound) one line on stderr naming it and exit status 1.
 */
public final class PlainMain {

    private PlainMain() {
    }

    /**
     * Runs the service until the JVM stops.
     *
     * @param name    the program's name, before each error line ({@code felix: ...})
     * @param start   starts the service from its variables; throws {@link IllegalArgumentException} (or
     *                {@link java.io.UncheckedIOException}) naming a setting it cannot use
     * @param started called once the service has started (its ports bound)
     */
    public static <S extends AutoCloseable> void run(String name, String[] args, Function<Map<String, String>, S> start,
                                                     Consumer<S> started) throws InterruptedException {
        Map<String, String> variables;
        try {
            variables = Variables.environmentAndArguments(args);
        } catch (IllegalArgumentException e) {
            System.err.println(name + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        S service;
        try {
            service = start.apply(variables);
        } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
            System.err.println(name + ": " + e.getMessage());
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                service.close();
            } catch (Exception e) {
                System.err.println(name + ": stopping: " + e);
            } finally {
                stopped.countDown();
            }
        }, name + "-stop"));
        started.accept(service);
        stopped.await();
    }
}
