package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.FelixConfigurationSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The one list of FelixConfiguration's duration fields ({@link FelixConfigurationSpec#DURATION_FIELDS}):
 * every entry names a string field of the spec, and the validator checks each one as a Go duration.
 */
class FelixConfigurationDurationsTest {

    @Test
    void everyEntryIsAStringFieldOfTheSpec() {
        assertThat(FelixConfigurationSpec.DURATION_FIELDS).hasSize(22);
        FelixConfigurationSpec.DURATION_FIELDS.forEach(f -> assertThat(FelixConfigurationEnumsTest.SPEC_FIELDS.get(f))
                .as(f).isEqualTo(String.class));
    }

    @Test
    void theValidatorChecksEveryEntryAsAGoDuration() {
        for (String field : FelixConfigurationSpec.DURATION_FIELDS) {
            assertThat(errors(field, "1m30s")).as(field).isEmpty();
            assertThat(errors(field, "90")).as(field + ": no unit").singleElement()
                    .satisfies(e -> assertThat(e.field()).isEqualTo("spec." + field));
            assertThat(errors(field, "-1s")).as(field + ": negative").hasSize(1);
        }
        assertThat(errors("healthHost", "90")).as("not a duration field").isEmpty();
    }

    private static List<FieldError> errors(String field, String value) {
        return FelixConfigurationEnumsTest.errors(field, value);
    }
}
