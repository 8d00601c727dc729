package calico.controllers;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.controllers.app.ControllersApplication;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * No package of controllers-service depends on itself through another: {@code app} uses the
 * controllers ({@code config}, {@code node}, {@code ipam}, {@code leader}), which use {@code reconcile};
 * {@code ipam} uses {@code node}'s {@code ClusterNodes}; nothing points back.
 */
class PackageCyclesTest {

    static ArchRule noCyclesUnder(String prefix) {
        return slices().matching(prefix + ".(**)").should().beFreeOfCycles();
    }

    @Test
    void controllersHaveNoPackageCycle() {
        JavaClasses classes = new ClassFileImporter()
                .importUrl(ControllersApplication.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(20);
        noCyclesUnder("calico").check(classes);
    }

    /** The rule can fail: two fixture packages that use each other. */
    @Test
    void aCycleIsFound() {
        JavaClasses fixture = new ClassFileImporter().importPackages("calico.controllers.cyclefixture");
        assertThatThrownBy(() -> noCyclesUnder("calico.controllers.cyclefixture").check(fixture))
                .isInstanceOf(AssertionError.class).hasMessageContaining("Cycle detected");
    }
}
