package calico.confd.app;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import calico.libcalico.config.LogSeverity;
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

    private final LogSeverity fixed;
    private final LoggerContext context;
    private LogSeverity current;

    /** {@code fixed}: BGP_LOGSEVERITYSCREEN's severity, or {@code null} to follow the BGPConfiguration. */
    ConfdLogLevel(LogSeverity fixed, LoggerContext context) {
        this.fixed = fixed;
        this.context = context;
        set(fixed == null ? LogSeverity.INFO : fixed, fixed == null ? "the default" : "BGP_LOGSEVERITYSCREEN");
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
        LogSeverity s = logSeverityScreen == null ? null : LogSeverity.named(logSeverityScreen);
        set(s == null ? LogSeverity.INFO : s, "BGPConfiguration logSeverityScreen");
    }

    /** {@return the severity in force} */
    synchronized LogSeverity current() {
        return current;
    }

    private synchronized void set(LogSeverity s, String why) {
        if (s == current) {
            return;
        }
        boolean first = current == null;
        current = s;
        context.getLogger("calico").setLevel(s.level());
        context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(s.level().isGreaterOrEqual(Level.INFO) ? s.level() : Level.INFO);
        if (!first || fixed != null) {
            log.info("log level {} (from {})", s.name(), why);
        }
    }
}
