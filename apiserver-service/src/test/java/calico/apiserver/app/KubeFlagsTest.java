package calico.apiserver.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KubeFlagsTest {

    @Test
    void calicoFlagsBecomeApiserverProperties() {
        assertThat(KubeFlags.translate(new String[] {"--secure-port=6443", "--tls-cert-file", "/c.pem",
                "--server.address=1.2.3.4", "positional"}))
                .containsExactly("--apiserver.secure-port=6443", "--apiserver.tls-cert-file=/c.pem",
                        "--server.address=1.2.3.4", "positional");
        assertThatThrownBy(() -> KubeFlags.translate(new String[] {"--token-auth-file"}))
                .hasMessageContaining("--token-auth-file: a value is required");
    }

    @Test
    void booleanFlagsStandAloneAsPflagsDo() {
        assertThat(KubeFlags.translate(new String[] {"--authentication-skip-lookup", "--cert-dir", "/d",
                "--authentication-tolerate-lookup-failure=false"}))
                .containsExactly("--apiserver.authentication-skip-lookup=true", "--apiserver.cert-dir=/d",
                        "--apiserver.authentication-tolerate-lookup-failure=false");
    }
}
