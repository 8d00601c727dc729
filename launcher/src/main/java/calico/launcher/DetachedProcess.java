package calico.launcher;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A long-running process that outlives the launcher: started in a session of its own
 * ({@code setsid}), optionally inside a network namespace ({@code ip netns exec}; both exec in
 * place, so the pid is the program's own), output appended to {@code <runDir>/logs/<name>.log},
 * and recorded in {@code <runDir>/<name>.pid} as {@code "<pid> <command line>"}, the format
 * {@code ./calico} uses for every process it starts. A later launcher finds it again from that
 * file, and only while {@code /proc/<pid>/cmdline} is still that command (a reused pid is never
 * signalled).
 */
final class DetachedProcess {

    private final String name;
    private final String netns;
    private final Supplier<List<String>> commandSource;
    private List<String> command;
    private final Map<String, String> environment;
    private final Path runDir;

    /**
     * @param netns the namespace to run in, or null for the launcher's own
     * @param environment added to the launcher's environment (the datastore's variables pass through)
     */
    DetachedProcess(String name, String netns, List<String> command, Map<String, String> environment, Path runDir) {
        this(name, netns, () -> command, environment, runDir);
    }

    /**
     * @param command made when first asked for (to start it): making it may take work, e.g. a JVM's
     *                class archive ({@link AppCds}), which finding or stopping a running one never needs
     */
    DetachedProcess(String name, String netns, Supplier<List<String>> command, Map<String, String> environment, Path runDir) {
        this.name = name;
        this.netns = netns;
        this.commandSource = command;
        this.environment = Map.copyOf(environment);
        this.runDir = runDir;
    }

    String name() {
        return name;
    }

    /** {@return the program and its arguments} (without {@code setsid} and {@code ip netns exec}). */
    synchronized List<String> command() {
        if (command == null) {
            command = List.copyOf(commandSource.get());
        }
        return command;
    }

    /** {@return what it adds to the launcher's environment} */
    Map<String, String> environment() {
        return environment;
    }

    Path log() {
        return runDir.resolve("logs").resolve(name + ".log");
    }

    Path pidFile() {
        return runDir.resolve(name + ".pid");
    }

    /** {@return the pid of the running process}, if its pid file names one that still runs this command. */
    Optional<Long> pid() {
        return recorded().flatMap(r -> ProcessHandle.of(r.pid()).filter(ProcessHandle::isAlive)
                .filter(h -> runs(r.pid(), r.command())).map(ProcessHandle::pid));
    }

    /** What the pid file says: {@code "<pid> <command line>"}. */
    private record PidRecord(long pid, String command) {
    }

    private Optional<PidRecord> recorded() {
        String line;
        try {
            line = Files.readString(pidFile(), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return Optional.empty();
        }
        int space = line.indexOf(' ');
        if (space < 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(new PidRecord(Long.parseLong(line.substring(0, space)), line.substring(space + 1)));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** Starts the process unless it runs; true when it started it. */
    boolean start() {
        if (pid().isPresent()) {
            return false;
        }
        List<String> cmd = new ArrayList<>(List.of("setsid"));
        if (netns != null) {
            cmd.addAll(List.of("ip", "netns", "exec", netns));
        }
        List<String> command = command();
        cmd.addAll(command);
        try {
            Files.createDirectories(log().getParent());
            Files.writeString(log(), "==== " + String.join(" ", cmd) + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
            pb.environment().putAll(environment);
            Process p = pb.start();
            Files.writeString(pidFile(), p.pid() + " " + String.join(" ", command) + "\n", StandardCharsets.UTF_8);
            awaitExec(p, command);
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name, e);
        }
    }

    /**
     * Returns once the child runs the program itself (setsid and ip netns exec have exec'd) or has
     * exited, so that {@link #pid()} recognises it at once: a milliseconds-long wait, bounded.
     */
    private static void awaitExec(Process p, List<String> command) {
        String expected = String.join(" ", command);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (p.isAlive() && !cmdline(p.pid()).startsWith(expected) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Whether the process it started has exited (its pid is gone or a zombie). Until {@code setsid}
     * and {@code ip netns exec} have exec'd the program, the pid runs those: not exited.
     */
    boolean exited() {
        return recorded().map(r -> ProcessHandle.of(r.pid()).map(h -> !h.isAlive() || zombie(r.pid())).orElse(true))
                .orElse(true);
    }

    /**
     * Stops it: SIGTERM to it and its descendants, SIGKILL after {@code grace}; removes the pid
     * file. {@return true when something was running}
     */
    boolean stop(Duration grace) {
        Optional<ProcessHandle> h = pid().flatMap(ProcessHandle::of);
        try {
            Files.deleteIfExists(pidFile());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + pidFile(), e);
        }
        if (h.isEmpty()) {
            return false;
        }
        ProcessHandle p = h.get();
        List<ProcessHandle> all = new ArrayList<>(p.descendants().toList());
        all.add(0, p);
        all.forEach(ProcessHandle::destroy);
        for (ProcessHandle each : all) {
            if (!waitFor(each, grace)) {
                each.destroyForcibly();
                waitFor(each, Duration.ofSeconds(10));
            }
        }
        return true;
    }

    private static boolean waitFor(ProcessHandle h, Duration d) {
        try {
            h.onExit().get(d.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            // This machine's init may reap orphans late: a zombie has stopped.
            return zombie(h.pid());
        } catch (ExecutionException e) {
            return !h.isAlive();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private boolean runs(long pid, String expected) {
        if (zombie(pid)) {
            return false;
        }
        return cmdline(pid).startsWith(expected);
    }

    static boolean zombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String afterName = stat.substring(stat.lastIndexOf(')') + 2);
            return afterName.startsWith("Z");
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    private static String cmdline(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ').strip();
        } catch (IOException e) {
            return "";
        }
    }

    /** {@return the last lines of its log}, for error messages. */
    String logTail(int lines) {
        try {
            List<String> all = Files.readAllLines(log(), StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
