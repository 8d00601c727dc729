package calico.confd.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.typha.SyncerType;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * confd's typha settings: Calico's variable names and precedence (CALICO_ over FELIX_ over
 * CONFD_, {@code none} is unset), the bgp syncer, and bad settings named.
 */
class ConfdTyphaPropertiesTest {

    private static ConfdTyphaProperties props(String addr, String service, String ca, String cert, String key,
                                              String cn) {
        return new ConfdTyphaProperties(addr, service, null, Duration.ofSeconds(30), ca, cert, key, cn, null);
    }

    @Test
    void badSettingsNameTheVariable() {
        assertThatThrownBy(() -> props("typha", null, null, null, null, null)).hasMessageContaining("TYPHAADDR")
                .hasMessageContaining("\"typha\" is not host:port");
        assertThatThrownBy(() -> props("t:5473", null, "/ca", null, null, null)).hasMessageContaining("TYPHACAFILE")
                .hasMessageContaining("all three");
        assertThatThrownBy(() -> props("t:5473", null, "/ca", "/c", "/k", null)).hasMessageContaining("TYPHACN");
        assertThatThrownBy(() -> new ConfdTyphaProperties("t:5473", null, null, Duration.ZERO, null, null, null, null, null))
                .hasMessageContaining("TYPHAREADTIMEOUT");
        ConfdTyphaProperties discovered = props(null, "calico-typha", null, null, null, null);
        assertThat(discovered.enabled()).as("a service name alone means typha").isTrue();
        assertThat(discovered.discovered()).isTrue();
        assertThat(discovered.k8sNamespace()).isEqualTo("kube-system");
        assertThat(props("t:5473", "calico-typha", null, null, null, null).discovered()).as("an address wins").isFalse();
    }

    @Test
    void noneAndEmptyAreUnsetAndAnAddressUsesTheBgpSyncer() {
        assertThat(props("none", "none", "", " ", "none", null).enabled()).isFalse();
        assertThat(props("none", "none", null, null, null, null).discovered()).isFalse();
        ConfdTyphaProperties p = props("10.0.0.1:5473, 10.0.0.2:5473", null, null, null, null, null);
        assertThat(p.enabled()).isTrue();
        assertThat(p.addresses()).containsExactly("10.0.0.1:5473", "10.0.0.2:5473");
        assertThat(p.options("node-1", p.addresses()).syncerType()).isEqualTo(SyncerType.BGP);
        assertThat(p.options("node-1", p.addresses()).addresses()).containsExactly("10.0.0.1:5473", "10.0.0.2:5473");
        assertThat(p.options("node-1", p.addresses()).hostname()).isEqualTo("node-1");
    }

    /** Calico's names: CALICO_TYPHAADDR wins over FELIX_TYPHAADDR over CONFD_TYPHAADDR. */
    @Test
    void calicoNamesAndTheirPrecedence() {
        assertThat(bound("--CONFD_TYPHAADDR=c:1").addr()).isEqualTo("c:1");
        assertThat(bound("--CONFD_TYPHAADDR=c:1", "--FELIX_TYPHAADDR=f:1").addr()).isEqualTo("f:1");
        assertThat(bound("--CONFD_TYPHAADDR=c:1", "--FELIX_TYPHAADDR=f:1", "--CALICO_TYPHAADDR=k:1").addr())
                .isEqualTo("k:1");
        ConfdTyphaProperties p = bound("--FELIX_TYPHAREADTIMEOUT=7", "--FELIX_TYPHAK8SSERVICENAME=calico-typha");
        assertThat(p.readTimeout()).isEqualTo(Duration.ofSeconds(7));
        assertThat(p.k8sServiceName()).isEqualTo("calico-typha");
        assertThat(p.k8sNamespace()).isEqualTo("kube-system");
        assertThat(bound("--FELIX_TYPHAK8SNAMESPACE=calico-system").k8sNamespace()).isEqualTo("calico-system");
        assertThat(bound().enabled()).isFalse();
    }

    /** The properties as the application reads them from {@code --NAME=value} variables (nothing else started). */
    private static ConfdTyphaProperties bound(String... args) {
        java.util.Map<String, String> env = new java.util.HashMap<>();
        for (String a : args) {
            env.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
        }
        return ConfdTyphaProperties.fromVariables(env);
    }
}
