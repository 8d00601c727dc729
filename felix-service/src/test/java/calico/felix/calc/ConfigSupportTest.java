package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.felixConfig;
import static calico.felix.calc.InfraFixtures.set;
import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.testing.LogCapture;
import calico.libcalico.syncer.SyncerStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Every FelixConfiguration field has a stated support, the design table says the same, and what felix ignores is said. */
class ConfigSupportTest {

    private static final Path TABLE = Path.of("design", "felix-configuration-fields.md");
    private static final Pattern ROW = Pattern.compile("^\\| `([A-Za-z0-9]+)` \\| ([a-z ]+) \\|");

    @Test
    void theDesignTableGivesEveryFieldTheStateTheCodeGivesIt() throws IOException {
        Map<String, String> documented = new TreeMap<>();
        for (String line : Files.readAllLines(TABLE)) {
            Matcher m = ROW.matcher(line);
            if (m.find()) {
                documented.put(m.group(1), m.group(2).strip());
            }
        }
        Map<String, String> code = new TreeMap<>();
        ConfigSupport.all().forEach((f, s) -> code.put(f, label(s)));
        StringBuilder expected = new StringBuilder();
        code.forEach((f, s) -> expected.append("| `").append(f).append("` | ").append(s).append(" | `")
                .append(ConfigSupport.defaultOf(f)).append("` |\n"));
        assertThat(documented).as("%s must list every field with its state; rows as the code has them:%n%s", TABLE,
                expected).isEqualTo(code);
    }

    @Test
    void everyHonouredFieldIsReadIntoFelixSettings() {
        Set<String> read = new HashSet<>();
        Map<String, String> values = new HashMap<>() {
            @Override
            public String get(Object key) {
                read.add((String) key);
                return super.get(key);
            }
        };
        ConfigFields.EMITTED.forEach(f -> values.put(f, ConfigSupport.defaultOf(f)));
        FelixSettings.from(values);
        ConfigSupport.all().forEach((field, state) -> {
            if (state == ConfigSupport.State.HONOURED && !FelixDefaults.SUPERSEDED.containsKey(field)) {
                assertThat(read).as("%s is said to be honoured but FelixSettings never reads it", field).contains(field);
            }
        });
    }

    @Test
    void aSettingFelixDoesNotActOnIsWarnedAboutOnceAndListed() {
        Dispatcher dispatcher = new Dispatcher();
        InfraRecorder out = new InfraRecorder();
        try (LogCapture logs = new LogCapture(ConfigResolver.class)) {
            new ConfigResolver("node-a", Map.of(), out).registerWith(dispatcher);
            dispatcher.onStatus(SyncerStatus.IN_SYNC);
            for (int mtu : List.of(1400, 1300)) { // a second, unrelated change: no second warning
                dispatcher.onUpdates(List.of(set(felixConfig("default",
                        Map.of("bpfLogLevel", "Debug", "ipipMTU", mtu, "healthPort", 9999)))));
            }
            var settings = ((DataplaneUpdate.ConfigUpdate) out.state.get("config")).settings();
            assertThat(settings.unsupportedSettings()).containsExactly(Map.entry("bpfLogLevel", "Debug"));
            assertThat(logs.containing("bpfLogLevel = Debug is not supported by this felix and is ignored")).hasSize(1);
            assertThat(logs.containing("healthPort = 9999 is not supported")).singleElement().asString()
                    .contains("felix reads it from its environment at start-up");
            assertThat(logs.containing("ipipMTU")).isEmpty();
        }
    }

    private static String label(ConfigSupport.State s) {
        return switch (s) {
            case HONOURED -> "honoured";
            case ENVIRONMENT -> "environment only";
            case NOT_SUPPORTED -> "not supported";
        };
    }
}
