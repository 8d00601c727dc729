package calico.whisker;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * No package of whisker-backend depends, directly or through others, on a package that depends on
 * it: {@code app} wires the others and nothing reaches back into it (the goldmane client and the
 * authenticators take their own settings, not the application's properties record).
 */
class PackageCyclesTest {

    @Test
    void whiskerBackendHasNoPackageCycle() {
        JavaClasses whisker = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("calico.whisker");
        assertThat(whisker).as("production classes found").hasSizeGreaterThan(30);
        slices().matching("calico.whisker.(**)").should().beFreeOfCycles().check(whisker);
    }
}
