package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

/**
 * One table row: a resource in YAML and the errors it must produce, each written as
 * {@code "<exact field path> | <fragment of the reason>"}, in the order reported.
 */
record ValidationCases(String yaml, List<String> expected) {

    static ValidationCases valid(String yaml) {
        return new ValidationCases(yaml, List.of());
    }

    static ValidationCases invalid(String yaml, String... expected) {
        return new ValidationCases(yaml, List.of(expected));
    }

    void check(List<FieldError> actual) {
        assertThat(actual).as("errors of\n%s", yaml).hasSize(expected.size());
        for (int i = 0; i < expected.size(); i++) {
            String[] pathAndReason = expected.get(i).split(" \\| ", 2);
            assertThat(actual.get(i).field()).as("path of error %d: %s", i, actual.get(i)).isEqualTo(pathAndReason[0]);
            assertThat(actual.get(i).reason()).as("reason of error %d", i).contains(pathAndReason[1]);
        }
    }
}
