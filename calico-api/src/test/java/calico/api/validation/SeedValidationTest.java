package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real-world manifests (the model's seeds) that use no selector beyond all() must validate
 * clean; the others are in {@link SelectorValidationTest}.
 */
class SeedValidationTest {

    @ParameterizedTest
    @ValueSource(strings = {"felixconfiguration-default.yaml", "bgpconfiguration-node-mesh.yaml"})
    void seedIsValid(String file) throws IOException {
        for (var r : ResourceCodec.get().parseAll(Files.readString(Path.of("src/test/resources/seeds", file)))) {
            assertThat(Yaml.errors(r, ResourceValidator.get())).as(file).isEmpty();
        }
    }

    @Test
    void richExampleFelixConfigurationFailsOnlyWhereCalicoWould() throws IOException {
        var fc = ResourceCodec.get().parse(Files.readString(Path.of("src/test/resources/model/rich/FelixConfiguration.yaml")));
        // The example sets every field, including two Calico rejects: logSeveritySys None (not a
        // log level) and both routeTableRange and routeTableRanges.
        assertThat(Yaml.errors(fc, ResourceValidator.get())).extracting(FieldError::field)
                .containsExactly("spec.logSeveritySys", "spec.routeTableRange");
    }
}
