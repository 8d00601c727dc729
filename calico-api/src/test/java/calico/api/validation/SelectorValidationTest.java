package calico.api.validation;

import static calico.api.validation.ValidationCases.invalid;
import static calico.api.validation.ValidationCases.valid;
import static calico.api.validation.Yaml.gnp;
import static calico.api.validation.Yaml.ingress;
import static calico.api.validation.Yaml.resource;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Selector fields are parsed with the selector language. These cases need the real selector
 * parser: with the placeholder (which knows only all()), the valid cases fail. Run after the
 * selector helper's branch is merged.
 */
class SelectorValidationTest {

    private static final String R = "spec.ingress[0].";

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("policy selectors", valid(gnp(
                        "{selector: \"has(app) && app == 'web'\", serviceAccountSelector: \"role in {'a', 'b'}\","
                                + " namespaceSelector: \"!has(ignore)\"}"))),
                Arguments.of("rule selectors", valid(ingress("{action: Allow, source: {selector: \"has(a)\","
                        + " notSelector: \"b == 'x'\", namespaceSelector: \"c != 'y'\","
                        + " serviceAccounts: {selector: \"has(sa)\"}}}"))),
                Arguments.of("broken policy selector", invalid(gnp("{selector: \"a ==\"}"), "spec.selector | a ==")),
                Arguments.of("broken rule selectors", invalid(ingress("{action: Allow, source: {selector: \"has(\","
                        + " notSelector: \"a == 'x' &&\"}, destination: {namespaceSelector: \"(a\"}}"),
                        R + "source.selector | has(", R + "source.notSelector | a == 'x' &&",
                        R + "destination.namespaceSelector | (a")),
                Arguments.of("broken service account selector", invalid(ingress(
                        "{action: Allow, destination: {serviceAccounts: {selector: \"a ==\"}}}"),
                        R + "destination.serviceAccounts.selector | a ==")),
                Arguments.of("profile rule selector", invalid(resource("Profile", "{name: p}",
                        "{egress: [{action: Allow, destination: {selector: \"a ==\"}}]}"),
                        "spec.egress[0].destination.selector | a =="))
        );
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void selector(String name, ValidationCases c) {
        c.check(Yaml.errors(c.yaml()));
    }

    /** The model's seed manifests are real-world Calico configuration: all of it must be accepted. */
    @Test
    void seedManifestsAreValid() throws IOException {
        List<String> problems = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("src/test/resources/seeds"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                for (var r : ResourceCodec.get().parseAll(Files.readString(f))) {
                    Yaml.errors(r, ResourceValidator.get()).forEach(e -> problems.add(f.getFileName() + ": " + e));
                }
            }
        }
        assertThat(problems).isEmpty();
    }
}
