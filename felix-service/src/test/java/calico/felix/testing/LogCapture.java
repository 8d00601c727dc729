package calico.felix.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Captures one class's log lines with a real logback appender: to count "logged once" warnings,
 * or to wait for an event a component only logs. Lines may come from any thread.
 */
public final class LogCapture implements AutoCloseable {

    private final Logger logger;
    private final Level levelBefore;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    /** Captures what {@code type} logs at the level in force. */
    public LogCapture(Class<?> type) {
        this(type, null);
    }

    /**
     * Captures what {@code type} logs at {@code level} and above, whatever the level in force
     * (felix's {@code logSeverityScreen} may be higher); the level is restored on close.
     */
    public LogCapture(Class<?> type, Level level) {
        logger = (Logger) LoggerFactory.getLogger(type);
        levelBefore = logger.getLevel();
        appender.start();
        logger.addAppender(appender);
        if (level != null) {
            logger.setLevel(level);
        }
    }

    /** {@return the formatted messages logged so far that contain {@code text}}. */
    public List<String> containing(String text) {
        synchronized (appender) { // AppenderBase appends under this lock
            return appender.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(text)).toList();
        }
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        logger.setLevel(levelBefore);
    }
}
