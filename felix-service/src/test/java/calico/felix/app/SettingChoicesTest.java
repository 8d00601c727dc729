package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The choices felix's settings make at start-up (once Spring conditions, now plain code in {@link FelixApplication}):
 * the kernel dataplane or the model, typha discovery from Kubernetes or not, Calico's debug port or not.
 */
class SettingChoicesTest {

    private static FelixConfiguration with(String name, String value) {
        return FelixConfiguration.fromVariables(Map.of("HOSTNAME", "", "FELIX_FELIXHOSTNAME", "n", name, value));
    }

    private static FelixConfiguration none() {
        return FelixConfiguration.fromVariables(Map.of("HOSTNAME", "", "FELIX_FELIXHOSTNAME", "n"));
    }

    @Test
    void theKernelDataplaneByDefaultAndForItsNamesInAnyCase() {
        assertThat(none().felix().kernelDataplane()).isTrue();
        for (String v : new String[] {"kernel", " Kernel ", "IPTABLES", ""}) {
            assertThat(with("FELIX_DATAPLANEDRIVERNAME", v).felix().kernelDataplane()).as(v).isTrue();
        }
        assertThat(with("FELIX_DATAPLANEDRIVERNAME", "model").felix().kernelDataplane()).isFalse();
        for (String v : new String[] {"kernelx", "nftables"}) {
            assertThatThrownBy(() -> with("FELIX_DATAPLANEDRIVERNAME", v)).as(v)
                    .hasMessageContaining("FELIX_DATAPLANEDRIVERNAME");
        }
    }

    @Test
    void typhaDiscoveryOnlyForANonBlankServiceName() {
        assertThat(none().typha().discovered()).isFalse();
        assertThat(with("FELIX_TYPHAK8SSERVICENAME", "  ").typha().discovered()).isFalse();
        assertThat(with("FELIX_TYPHAK8SSERVICENAME", "calico-typha").typha().discovered()).isTrue();
        assertThat(FelixConfiguration.fromVariables(Map.of("HOSTNAME", "n", "FELIX_TYPHAK8SSERVICENAME", "calico-typha",
                "FELIX_TYPHAADDR", "10.0.0.1:5473")).typha().discovered()).as("an address wins, as in Calico").isFalse();
    }

    @Test
    void theDebugPortForAnyValueButZero() {
        assertThat(none().debug().enabled()).isFalse();
        for (String v : new String[] {"0", "", " 00 "}) {
            assertThat(with("FELIX_DEBUGPORT", v).debug().enabled()).as(v).isFalse();
        }
        for (String v : new String[] {"6060", "10"}) {
            assertThat(with("FELIX_DEBUGPORT", v).debug().enabled()).as(v).isTrue();
        }
        // A bad value is refused, naming FELIX_DEBUGPORT.
        for (String v : new String[] {"-1", "x", "70000"}) {
            assertThatThrownBy(() -> with("FELIX_DEBUGPORT", v)).as(v).hasMessageContaining("FELIX_DEBUGPORT");
        }
    }
}
