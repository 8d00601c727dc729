package calico.felix.calc;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class OnceLogTest {

    @Test
    void aRepeatedWarningIsLoggedOnceAndADifferentOneAgain() {
        Logger logger = (Logger) LoggerFactory.getLogger("calico.felix.calc.OnceLogTest.probe");
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        OnceLog once = new OnceLog(logger);

        once.warn("{} rule {} dropped: {}", "GlobalNetworkPolicy(p) ingress", 0, "bad net");
        once.warn("{} rule {} dropped: {}", "GlobalNetworkPolicy(p) ingress", 0, "bad net");
        once.warn("{} rule {} dropped: {}", "GlobalNetworkPolicy(p) ingress", 1, "bad net");

        assertThat(appender.list).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
                "GlobalNetworkPolicy(p) ingress rule 0 dropped: bad net",
                "GlobalNetworkPolicy(p) ingress rule 1 dropped: bad net");
    }
}
