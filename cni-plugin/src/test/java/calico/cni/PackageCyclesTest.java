package calico.cni;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of cni-plugin's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): {@code spec} (the CNI
 * contract) at the bottom, then {@code config}, {@code plugin}, {@code daemon}, and {@code Main} on top.
 */
class PackageCyclesTest {

    @Test
    void cniPluginHasNoPackageCycle() {
        // This module's classes only: where Main was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(Main.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(15);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
