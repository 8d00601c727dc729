package calico.apiserver;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * No package cycle in the server's own code: each package of {@code calico.apiserver} may use
 * only those below it (errors, discovery; auth, apply, patch, openapi; rest; watch; http; app).
 */
@AnalyzeClasses(packages = "calico.apiserver", importOptions = ImportOption.DoNotIncludeTests.class)
class PackageCyclesTest {

    @ArchTest
    static final ArchRule packagesAreFreeOfCycles = slices().matching("calico.apiserver.(*)..").should()
            .beFreeOfCycles();
}
