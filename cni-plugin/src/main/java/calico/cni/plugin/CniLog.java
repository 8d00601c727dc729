package calico.cni.plugin;

import calico.cni.config.LogLevel;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;

/**
 * The log of one plugin call, at that call's {@code log_level}: every call of the daemon carries its
 * own level and destination, so one pod's {@code debug} never turns on another's.
 *
 * <p>Lines go to {@code log_file_path} when the configuration names one (appended, the directory
 * created; Calico's own default path {@code /var/log/calico/cni/cni.log} is not assumed), else to
 * the process's standard error (the runtime's log for a JVM-per-call run; the daemon's log in daemon
 * mode, never the thin client's stdout, which carries only the CNI answer). A line is
 * {@code <instant> [<LEVEL>][<pid>] <command> <container ID>: <message>}. Failing to write a log
 * line never fails the call.
 */
public final class CniLog {

    private static final long PID = ProcessHandle.current().pid();

    private final LogLevel level;
    private final Path file;
    private final PrintStream stderr;
    private final String context;
    private final Clock clock;

    CniLog(LogLevel level, Path file, PrintStream stderr, String context, Clock clock) {
        this.level = level;
        this.file = file;
        this.stderr = stderr;
        this.context = context;
        this.clock = clock;
    }

    /** {@return the log of one call}: its configuration's level and destination, lines tagged with the call. */
    public static CniLog forCall(calico.cni.config.NetConf conf, calico.cni.spec.CniRequest req, PrintStream stderr) {
        String cid = req.env().getOrDefault("CNI_CONTAINERID", "");
        String context = req.command() + " " + (cid.length() > 12 ? cid.substring(0, 12) : cid);
        return new CniLog(LogLevel.parse(conf.logLevel()), conf.logFilePath() == null ? null : Path.of(conf.logFilePath()),
                stderr, context, Clock.systemUTC());
    }

    /** A log that writes nothing (before the configuration, and so the level, is known). */
    static CniLog off() {
        return new CniLog(LogLevel.NONE, null, null, "", Clock.systemUTC());
    }

    public LogLevel level() {
        return level;
    }

    public boolean enabled(LogLevel l) {
        return level != LogLevel.NONE && l != LogLevel.NONE && l.ordinal() >= level.ordinal();
    }

    public void debug(String message) {
        write(LogLevel.DEBUG, message);
    }

    public void info(String message) {
        write(LogLevel.INFO, message);
    }

    public void warning(String message) {
        write(LogLevel.WARNING, message);
    }

    public void error(String message) {
        write(LogLevel.ERROR, message);
    }

    private void write(LogLevel l, String message) {
        if (!enabled(l)) {
            return;
        }
        String line = Instant.now(clock) + " [" + l + "][" + PID + "] " + context + ": " + message + "\n";
        if (file == null) {
            stderr.print(line);
            stderr.flush();
            return;
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            // One append per line: concurrent calls' lines interleave whole (O_APPEND).
            Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            stderr.print(line);
            stderr.flush();
        }
    }
}
