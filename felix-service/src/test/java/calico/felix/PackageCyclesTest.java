package calico.felix;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * No package of felix's production code depends, directly or through others, on a package that
 * depends on it (each package, subpackages apart, is one slice): e.g. the dataplane drivers never
 * reach back into the application, nor the rule renderer into flow logs.
 */
class PackageCyclesTest {

    /** Every package under {@code prefix} its own slice, free of cycles. */
    static ArchRule noCyclesUnder(String prefix) {
        return slices().matching(prefix + ".(**)").should().beFreeOfCycles();
    }

    @Test
    void felixHasNoPackageCycle() {
        JavaClasses felix = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("calico.felix");
        assertThat(felix).as("production classes found").hasSizeGreaterThan(100);
        noCyclesUnder("calico.felix").check(felix);
    }

    /** The rule can fail: two fixture packages that use each other. */
    @Test
    void aCycleIsFound() {
        JavaClasses fixture = new ClassFileImporter().importPackages("calico.felix.cyclefixture");
        assertThatThrownBy(() -> noCyclesUnder("calico.felix.cyclefixture").check(fixture))
                .isInstanceOf(AssertionError.class).hasMessageContaining("Cycle detected");
    }
}
