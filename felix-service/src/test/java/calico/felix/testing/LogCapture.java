package calico.felix.calc;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Captures one class's log lines with a real logback appender, to count "logged once" warnings. */
final class InfraLogCapture implements AutoCloseable {

    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    InfraLogCapture(Class<?> type) {
        logger = (Logger) LoggerFactory.getLogger(type);
        appender.start();
        logger.addAppender(appender);
    }

    /** {@return the formatted messages logged so far that contain {@code text}}. */
    List<String> containing(String text) {
        return appender.list.stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(text)).toList();
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
    }
}
