package calico.api;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Resource;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of calico-api's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): {@code model}
 * needs only {@code net} and the Kubernetes spec pieces it embeds ({@code k8s.policy}); the codec,
 * schema, CRDs, validation and the Kubernetes converters sit above it, never below.
 */
class PackageCyclesTest {

    @Test
    void calicoApiHasNoPackageCycle() {
        // This module's classes only: where Resource was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(Resource.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(150);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
