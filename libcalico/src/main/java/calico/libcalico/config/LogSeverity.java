package calico.libcalico.config;

import ch.qos.logback.classic.Level;
import java.util.Locale;

/**
 * Calico's log severities ({@code logSeverityScreen}, FELIX_LOGSEVERITYSCREEN, BGP_LOGSEVERITYSCREEN) and the
 * logback level each sets. Read in any case, with the names Calico's Go components also take from their variables
 * (logrus's {@code warn} and {@code panic}). Reading a severity needs no logback (libcalico's is optional: a module
 * that only reads settings, as the charts test reads confd's, has none); {@link #level} does.
 */
public enum LogSeverity {
    TRACE(Level.TRACE_INT), DEBUG(Level.DEBUG_INT), INFO(Level.INFO_INT), WARNING(Level.WARN_INT), ERROR(Level.ERROR_INT),
    /** logback has nothing above ERROR. */
    FATAL(Level.ERROR_INT);

    /** logback's level, as its number: a compile-time constant, so loading this enum loads no logback class. */
    private final int level;

    LogSeverity(int level) {
        this.level = level;
    }

    /** {@return the logback level this severity sets} */
    public Level level() {
        return Level.toLevel(level);
    }

    /** {@return the severity named {@code name}}, in any case, {@code warn} and {@code panic} too; {@code null} if none */
    public static LogSeverity named(String name) {
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "trace" -> TRACE;
            case "debug" -> DEBUG;
            case "info" -> INFO;
            case "warning", "warn" -> WARNING;
            case "error" -> ERROR;
            case "fatal", "panic" -> FATAL;
            default -> null;
        };
    }

    /**
     * {@return the severity a variable names}, {@code null} when it is not set
     *
     * @throws IllegalArgumentException naming {@code setting} when {@code raw} is no severity
     */
    public static LogSeverity fromVariable(String setting, String raw) {
        if (raw == null) {
            return null;
        }
        LogSeverity s = named(raw);
        if (s == null) {
            throw new IllegalArgumentException(setting + ": \"" + raw + "\" is not one of Trace, Debug, Info, Warning, Error, Fatal");
        }
        return s;
    }
}
