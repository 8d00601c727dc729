package calico.controlplane;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One process of the control plane: its command line, its log file, the URL that answers 200
 * when it is healthy, and the process once started. A part can also be known only by pid (read back from a state file by another
 * launcher); it is then recognised by its executable, so a pid reused by another program is
 * never signalled.
 */
final class Part {

    /** Each start's first line in the log: its command. */
    private static final String START_HEADER = "==== ";

    private final String name;
    private final Path binary;
    private final List<String> args;
    private final Path log;
    private final URI health;
    private ProcessHandle process;

    Part(String name, Path binary, List<String> args, Path log, URI health) {
        this.name = name;
        this.binary = binary;
        this.args = List.copyOf(args);
        this.log = log;
        this.health = health;
    }

    String name() {
        return name;
    }

    Path log() {
        return log;
    }

    /** {@return the URL that answers 200 once the part is healthy} ({@code /health}, {@code /readyz}, {@code /healthz}). */
    URI health() {
        return health;
    }

    /** Adopts a process started by an earlier launcher, if {@code pid} still runs this part's binary. */
    synchronized void adopt(long pid) {
        process = ProcessHandle.of(pid).filter(this::runsOurBinary).orElse(null);
    }

    synchronized Optional<Long> pid() {
        return alive() ? Optional.of(process.pid()) : Optional.empty();
    }

    synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    /**
     * Starts the process, its output appended to the log; {@code detach} gives it a session of its
     * own, so it outlives this JVM, else it is {@link Tethered} to this JVM and dies with it.
     */
    synchronized void start(boolean detach) {
        if (alive()) {
            return;
        }
        List<String> cmd = new ArrayList<>();
        if (detach) {
            // setsid execs in place (a child of the JVM is no group leader), so the pid is the part's own.
            cmd.add("setsid");
        }
        cmd.add(binary.toString());
        cmd.addAll(args);
        try {
            Files.createDirectories(log.getParent());
            Files.writeString(log, START_HEADER + String.join(" ", cmd) + "\n", StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            process = (detach ? pb.start() : Tethered.start(pb)).toHandle();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + " (" + binary + ")", e);
        }
    }

    /** Stops the process: SIGTERM, then SIGKILL after {@code grace}; returns once it is gone. */
    synchronized void stop(Duration grace) {
        if (process == null) {
            return;
        }
        if (process.isAlive()) {
            process.destroy();
            if (!waitForExit(grace)) {
                kill();
            }
        }
        process = null;
    }

    /** Kills the process with SIGKILL (an abrupt failure) and returns once it is gone. */
    synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        if (!waitForExit(Duration.ofSeconds(10))) {
            throw new IllegalStateException(name + " (pid " + process.pid() + ") did not exit after SIGKILL");
        }
        process = null;
    }

    private boolean waitForExit(Duration d) {
        try {
            process.onExit().get(d.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return !process.isAlive();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private boolean runsOurBinary(ProcessHandle h) {
        return h.info().command().map(c -> Path.of(c).getFileName().equals(binary.getFileName())).orElse(false);
    }

    /** {@return whether the log since the last start says a port was in use} (Go's listen error). */
    boolean lastStartSaysPortTaken() {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            for (int i = all.size() - 1; i >= 0 && !all.get(i).startsWith(START_HEADER); i--) {
                if (all.get(i).contains("address already in use")) {
                    return true;
                }
            }
            return false;
        } catch (IOException | UncheckedIOException e) {
            return false;
        }
    }

    /** {@return the last lines of the log}, for error messages. */
    String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
