package calico.confd.app;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * confd's log level, chosen as Calico's confd chooses it: BGP_LOGSEVERITYSCREEN when set, else the
 * BGPConfiguration's {@code logSeverityScreen} ({@code node.<name>} over {@code default}), else Info; the
 * BGPConfiguration is followed while confd runs. The level is given to the {@code calico} loggers; the
 * libraries' loggers follow it only towards quieter (Warning, Error), never down to Debug.
 */
final class ConfdLogLevel {

    private static final Logger log = LoggerFactory.getLogger(ConfdLogLevel.class);

    /** Calico's severities, with the names its confd also takes from the variable (logrus's). */
    enum Severity {
        TRACE(Level.TRACE), DEBUG(Level.DEBUG), INFO(Level.INFO), WARNING(Level.WARN), ERROR(Level.ERROR),
        FATAL(Level.ERROR);

        private final Level level;

        Severity(Level level) {
            this.level = level;
        }

        /** {@return the severity named {@code name}} in any case, {@code warn} and {@code panic} too; {@code null} if none */
        static Severity named(String name) {
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
         * {@return the variable's severity}, {@code null} when it is not set
         *
         * @throws IllegalArgumentException naming {@code setting} when {@code raw} is no severity
         */
        static Severity fromVariable(String setting, String raw) {
            if (raw == null) {
                return null;
            }
            Severity s = named(raw);
            if (s == null) {
                throw new IllegalArgumentException(setting + ": \"" + raw
                        + "\" is not one of Trace, Debug, Info, Warning, Error, Fatal");
            }
            return s;
        }
    }

    private final Severity fixed;
    private final LoggerContext context;
    private Severity current;

    /** {@code fixed}: BGP_LOGSEVERITYSCREEN's severity, or {@code null} to follow the BGPConfiguration. */
    ConfdLogLevel(Severity fixed, LoggerContext context) {
        this.fixed = fixed;
        this.context = context;
        set(fixed == null ? Severity.INFO : fixed, fixed == null ? "the default" : "BGP_LOGSEVERITYSCREEN");
    }

    /** The logging system this process runs (logback). */
    static LoggerContext processContext() {
        return (LoggerContext) LoggerFactory.getILoggerFactory();
    }

    /**
     * The effective BGPConfiguration's {@code logSeverityScreen} after a render pass ({@code null}: not set, Info);
     * ignored while BGP_LOGSEVERITYSCREEN is set.
     */
    synchronized void followConfiguration(String logSeverityScreen) {
        if (fixed != null) {
            return;
        }
        Severity s = logSeverityScreen == null ? null : Severity.named(logSeverityScreen);
        set(s == null ? Severity.INFO : s, "BGPConfiguration logSeverityScreen");
    }

    /** {@return the severity in force} */
    synchronized Severity current() {
        return current;
    }

    private synchronized void set(Severity s, String why) {
        if (s == current) {
            return;
        }
        boolean first = current == null;
        current = s;
        context.getLogger("calico").setLevel(s.level);
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(s.level.isGreaterOrEqual(Level.INFO) ? s.level : Level.INFO);
        if (!first || fixed != null) {
            log.info("log level {} (from {})", s.name(), why);
        }
    }
}
