package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.FelixConfigurationEnums;
import calico.api.model.FelixConfigurationSpec;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The one table of FelixConfiguration's closed fields: every entry names a string field of the
 * spec, and the validator checks each field against exactly that entry (its values, its case rule).
 */
class FelixConfigurationEnumsTest {

    /** The spec's fields by JSON name, with their Java types. */
    static final Map<String, Class<?>> SPEC_FIELDS = Arrays.stream(
                    FelixConfigurationSpec.class.getRecordComponents())
            .collect(java.util.stream.Collectors.toMap(RecordComponent::getName, RecordComponent::getType));

    @Test
    void everyEntryIsAStringFieldOfTheSpec() {
        assertThat(FelixConfigurationEnums.FIELDS).isNotEmpty();
        FelixConfigurationEnums.FIELDS.keySet().forEach(f -> assertThat(SPEC_FIELDS.get(f)).as(f).isEqualTo(String.class));
    }

    @Test
    void theValidatorChecksEveryEntryAgainstTheTable() {
        FelixConfigurationEnums.FIELDS.forEach((field, allowed) -> {
            assertThat(errors(field, "NotAValue")).as(field).singleElement()
                    .satisfies(e -> assertThat(e.field()).isEqualTo("spec." + field))
                    .satisfies(e -> assertThat(e.reason()).contains(String.join(", ",
                            allowed.values().stream().sorted().toList())));
            for (String v : allowed.values()) {
                assertThat(errors(field, v)).as(field + "=" + v).isEmpty();
                String other = v.equals(v.toLowerCase(Locale.ROOT)) ? v.toUpperCase(Locale.ROOT)
                        : v.toLowerCase(Locale.ROOT);
                assertThat(errors(field, other)).as(field + "=" + other + " (anyCase " + allowed.anyCase() + ")")
                        .hasSize(allowed.anyCase() ? 0 : 1);
            }
        });
    }

    @Test
    void canonicalIgnoresCaseAndBlanks() {
        FelixConfigurationEnums.Allowed a = FelixConfigurationEnums.of("chainInsertMode").orElseThrow();
        assertThat(a.canonical(" aPPend ")).contains("Append");
        assertThat(a.canonical("Prepend")).isEmpty();
        assertThat(FelixConfigurationEnums.of("healthHost")).isEmpty();
    }

    /** {@return the validator's errors for a {@code default} FelixConfiguration setting only {@code field}} */
    static List<FieldError> errors(String field, String value) {
        return Yaml.errors(Yaml.resource("FelixConfiguration", "{name: default}", "{" + field + ": \"" + value + "\"}"));
    }
}
