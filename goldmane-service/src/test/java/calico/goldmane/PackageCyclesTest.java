package calico.goldmane;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import calico.goldmane.server.GoldmaneServer;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of goldmane-service's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): {@code store}
 * at the bottom, then {@code engine}, then the readers and writers of its buckets ({@code query},
 * {@code persist}, {@code sink}, {@code server}), with {@code app} wiring them on top.
 */
class PackageCyclesTest {

    @Test
    void goldmaneHasNoPackageCycle() {
        // This module's classes only: where GoldmaneServer was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(GoldmaneServer.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(50);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
