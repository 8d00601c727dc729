package calico.typha.server;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * One logger's events from now until closed: what typha decides where no client can see it
 * (a shed connection, a snapshot held back), with the time it was decided.
 */
final class CapturedLog implements AutoCloseable {

    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    CapturedLog(Class<?> source) {
        logger = (Logger) LoggerFactory.getLogger(source);
        appender.start();
        logger.addAppender(appender);
    }

    /** {@return the events so far}, copied under the appender's lock (they arrive on typha's threads). */
    List<ILoggingEvent> events() {
        synchronized (appender) {
            return List.copyOf(appender.list);
        }
    }

    /** {@return whether some event's message contains {@code text}} */
    boolean contains(String text) {
        return events().stream().anyMatch(e -> e.getFormattedMessage().contains(text));
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
    }
}
