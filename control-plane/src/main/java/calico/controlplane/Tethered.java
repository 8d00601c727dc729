package calico.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Starts child processes that die with this JVM. A shutdown hook stops children when the JVM
 * exits, but not when it is killed (SIGKILL: a test run stopped by hand or by a timeout): its
 * servers then run on, holding ports, memory and tmpfs. Started through {@code setpriv
 * --pdeathsig KILL}, a child gets SIGKILL from the kernel when its parent goes; {@code setpriv}
 * execs the command in place, so the pid is the command's own.
 *
 * <p>The kernel's parent is the thread that started the child, not the process, and the signal
 * comes when that thread ends. So every start runs on one thread kept for the JVM's life, not on
 * the caller's (a test's timeout thread, a pool's worker) which may end while the child should run.
 */
public final class Tethered {

    private static final String SETPRIV = "setpriv";

    private Tethered() {
    }

    /** One thread for the JVM's life: a pool's core thread never times out, and submit keeps failures in the future. */
    private static final class Starter {
        static final ExecutorService THREAD = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "tethered-process-starter");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * {@return the started process of {@code builder}, tethered to this JVM}; the builder's command
     * is prefixed with {@code setpriv --pdeathsig KILL --} for the start and restored after it.
     */
    public static Process start(ProcessBuilder builder) {
        List<String> command = List.copyOf(builder.command());
        List<String> tethered = new ArrayList<>(List.of(SETPRIV, "--pdeathsig", "KILL", "--"));
        tethered.addAll(command);
        try {
            return Starter.THREAD.submit(() -> {
                builder.command(tethered);
                try {
                    return builder.start();
                } finally {
                    builder.command(command);
                }
            }).get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw new UncheckedIOException("cannot start " + command.get(0) + " (through " + SETPRIV + ")", io);
            }
            throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting " + command.get(0), e);
        }
    }
}
