package calico.confd.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.config.LogSeverity;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * confd's log level as Calico's confd picks it: BGP_LOGSEVERITYSCREEN first, then the BGPConfiguration's
 * logSeverityScreen, then Info. Each case has its own logback context, so the test JVM's logging is untouched.
 */
class ConfdLogLevelTest {

    private final LoggerContext context = new LoggerContext();

    private Level calico() {
        return context.getLogger("calico").getLevel();
    }

    private Level root() {
        return context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).getLevel();
    }

    @Test
    void theBgpConfigurationDecidesWhileTheVariableIsUnset() {
        ConfdLogLevel level = new ConfdLogLevel(null, context);
        assertThat(calico()).isEqualTo(Level.INFO);

        level.followConfiguration("Debug");
        assertThat(calico()).isEqualTo(Level.DEBUG);
        assertThat(root()).as("libraries stay at Info").isEqualTo(Level.INFO);

        level.followConfiguration("Warning");
        assertThat(calico()).isEqualTo(Level.WARN);
        assertThat(root()).as("libraries quieter too").isEqualTo(Level.WARN);

        level.followConfiguration(null);
        assertThat(calico()).as("the setting removed: Info again").isEqualTo(Level.INFO);
        assertThat(level.current()).isEqualTo(LogSeverity.INFO);
    }

    @Test
    void theVariableWinsOverTheBgpConfiguration() {
        ConfdLogLevel level = new ConfdLogLevel(LogSeverity.DEBUG, context);
        assertThat(calico()).isEqualTo(Level.DEBUG);
        level.followConfiguration("Error");
        assertThat(calico()).isEqualTo(Level.DEBUG);
        assertThat(level.current()).isEqualTo(LogSeverity.DEBUG);
    }

    @Test
    void theVariableTakesCalicosAndLogrusNamesInAnyCase() {
        assertThat(read("debug").logSeverity()).isEqualTo(LogSeverity.DEBUG);
        assertThat(read("Warning").logSeverity()).isEqualTo(LogSeverity.WARNING);
        assertThat(read("WARN").logSeverity()).isEqualTo(LogSeverity.WARNING);
        assertThat(read("panic").logSeverity()).isEqualTo(LogSeverity.FATAL);
        assertThat(read(null).logSeverity()).isNull();
        assertThatThrownBy(() -> read("loud")).hasMessageContaining("BGP_LOGSEVERITYSCREEN").hasMessageContaining("\"loud\"")
                .hasMessageContaining("Trace, Debug, Info, Warning, Error, Fatal");
        assertThat(ConfdConfiguration.variablesRead()).contains("BGP_LOGSEVERITYSCREEN");
    }

    private static ConfdProperties read(String severity) {
        Map<String, String> env = new java.util.HashMap<>(Map.of("NODENAME", "node-1"));
        if (severity != null) {
            env.put("BGP_LOGSEVERITYSCREEN", severity);
        }
        return ConfdConfiguration.fromVariables(env).confd();
    }
}
