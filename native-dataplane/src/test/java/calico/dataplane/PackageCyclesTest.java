package calico.dataplane;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.netfilter.NflogReader;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

/**
 * No package of native-dataplane's production code depends, directly or through others, on a package
 * that depends on it (each package, subpackages apart, is one slice): {@code netlink},
 * {@code nft}, {@code iptables} and {@code bpf} stand alone, and {@code netfilter} (NFLOG, conntrack) uses netlink.
 */
class PackageCyclesTest {

    @Test
    void nativeDataplaneHasNoPackageCycle() {
        // This module's classes only: where NflogReader was loaded from (no tests, no other module).
        JavaClasses classes = new ClassFileImporter()
                .importUrl(NflogReader.class.getProtectionDomain().getCodeSource().getLocation());
        assertThat(classes).as("production classes found").hasSizeGreaterThan(50);
        slices().matching("calico.(**)").should().beFreeOfCycles().check(classes);
    }
}
