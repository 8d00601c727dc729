package calico.controlplane;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of control-plane's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): one package today,
 * so the test guards the packages to come.
 */
class PackageCyclesTest {

    @Test
    void controlPlaneHasNoPackageCycle() {
        // This module's classes only: where ControlPlane was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(ControlPlane.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(10);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
