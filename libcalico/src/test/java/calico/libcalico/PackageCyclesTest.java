package calico.libcalico;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.Datastore;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of libcalico's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): the datastore
 * contract ({@code datastore}) names no backend; each backend depends on it, and only
 * {@code datastore.config}, which opens the configured one, names them all.
 */
class PackageCyclesTest {

    @Test
    void libcalicoHasNoPackageCycle() {
        // This module's classes only: where Datastore was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(Datastore.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(100);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
