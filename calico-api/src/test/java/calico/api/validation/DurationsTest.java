package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Go duration syntax, as Calico's duration fields use it. */
class DurationsTest {

    @ParameterizedTest(name = "{0} = {1} ns")
    @CsvSource({
            "0, 0",
            "90s, 90000000000",
            "1m30s, 90000000000",
            "500ms, 500000000",
            "1.5h, 5400000000000",
            ".5s, 500000000",
            "1h2m3s4ms5us6ns, 3723004005006",
            "2\u00b5s, 2000",
            "-1s, -1000000000",
            "+3m, 180000000000"})
    void parses(String text, long nanos) {
        assertThat(Durations.parseNanos(text)).contains(nanos);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "90", "1d", "s", "1.2.3s", "1 s", "1s ", "-", ".s", "1h-5m", "9999999999h", "1S"})
    void rejects(String text) {
        assertThat(Durations.parseNanos(text)).isEmpty();
    }

    @ParameterizedTest(name = "{0} ns prints {1}")
    @CsvSource({
            "0, 0s",
            "900000000000, 15m0s",
            "300000000000, 5m0s",
            "3600000000000, 1h0m0s",
            "5430500000000, 1h30m30.5s",
            "1500000000, 1.5s",
            "500000000, 500ms",
            "2000, 2us",
            "7, 7ns",
            "-90000000000, -1m30s"})
    void formatsAsGoDoesAndParsesBack(long nanos, String text) {
        assertThat(Durations.format(java.time.Duration.ofNanos(nanos))).isEqualTo(text);
        assertThat(Durations.parse(text)).contains(java.time.Duration.ofNanos(nanos));
    }
}
