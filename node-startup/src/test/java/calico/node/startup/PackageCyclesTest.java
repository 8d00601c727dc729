package calico.node.startup;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.node.startup.app.NodeStartupApplication;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * No package of node-startup's production code depends, directly or through others, on a package
 * that depends on it: {@code app} uses {@code steps} and {@code autodetect}, {@code steps} uses
 * {@code autodetect}, never the other way.
 */
class PackageCyclesTest {

    static ArchRule noCyclesUnder(String prefix) {
        return slices().matching(prefix + ".(**)").should().beFreeOfCycles();
    }

    @Test
    void nodeStartupHasNoPackageCycle() {
        // This module's classes only: where NodeStartupApplication was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(NodeStartupApplication.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(15);
        noCyclesUnder("calico").check(classes);
    }

    /** The rule can fail: two fixture packages that use each other. */
    @Test
    void aCycleIsFound() {
        JavaClasses fixture = new ClassFileImporter().importPackages("calico.node.startup.cyclefixture");
        assertThatThrownBy(() -> noCyclesUnder("calico.node.startup.cyclefixture").check(fixture))
                .isInstanceOf(AssertionError.class).hasMessageContaining("Cycle detected");
    }
}
