package calico.confd;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.app.ConfdService;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of confd-service's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): {@code model} and
 * {@code bird} at the bottom, {@code render}, {@code services}, {@code daemon} and {@code status} above
 * them, {@code app} wiring them on top.
 */
class PackageCyclesTest {

    @Test
    void confdHasNoPackageCycle() {
        // This module's classes only: where ConfdService was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(ConfdService.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(40);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
