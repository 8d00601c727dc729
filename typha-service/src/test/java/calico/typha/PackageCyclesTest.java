package calico.typha;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import calico.typha.server.TyphaServer;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of typha-service's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): {@code app} wires
 * {@code server}, which never reaches back into it.
 */
class PackageCyclesTest {

    @Test
    void typhaHasNoPackageCycle() {
        // This module's classes only: where TyphaServer was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(TyphaServer.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(25);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
