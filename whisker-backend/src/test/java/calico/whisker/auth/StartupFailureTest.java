package calico.whisker.auth;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.whisker.testing.Whisker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A misconfigured backend does not start, and the cause names the environment variable. */
class StartupFailureTest {

    @TempDir
    Path dir;

    private void fails(String expected, String... extra) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--calico.health.port=0",
                "--calico.health.host=127.0.0.1", "--whisker.goldmane-host=127.0.0.1:1"));
        args.addAll(List.of(extra));
        assertThatThrownBy(() -> Whisker.run(args.toArray(String[]::new)).close())
                .rootCause().hasMessageContaining(expected);
    }

    @Test
    void tokenModeWithoutTokenFile() {
        fails("WHISKER_AUTH_TOKEN_FILE: required when WHISKER_AUTH_MODE=token");
    }

    @Test
    void tokenFileMissingOrEmpty() throws Exception {
        fails("WHISKER_AUTH_TOKEN_FILE: " + dir.resolve("nope") + " is not a readable file",
                "--whisker.auth-token-file=" + dir.resolve("nope"));
        Path empty = Files.writeString(dir.resolve("empty"), " \n");
        fails("WHISKER_AUTH_TOKEN_FILE: " + empty + " is empty", "--whisker.auth-token-file=" + empty);
    }

    @Test
    void basicModeFileProblems() throws Exception {
        fails("WHISKER_AUTH_BASIC_FILE: required when WHISKER_AUTH_MODE=basic", "--whisker.auth-mode=basic");
        Path bad = Files.writeString(dir.resolve("users"), "alice:ok\nbob\n");
        fails("line 2 is not user:password", "--whisker.auth-mode=basic", "--whisker.auth-basic-file=" + bad);
        Path none = Files.writeString(dir.resolve("none"), "# nobody\n");
        fails("has no user:password line", "--whisker.auth-mode=basic", "--whisker.auth-basic-file=" + none);
    }

    @Test
    void oidcModeNeedsAnIssuerOrJwkSet() {
        fails("WHISKER_AUTH_MODE=oidc needs at least one", "--whisker.auth-mode=oidc");
        fails("WHISKER_OIDC_ISSUER_URI: needs an http or https URL", "--whisker.auth-mode=oidc",
                "--whisker.oidc-issuer-uri=ftp://x");
    }

    @Test
    void unknownModeAndBadGoldmaneAddress() {
        fails("WHISKER_AUTH_MODE): 'ldap' is not one of token, basic, oidc, none", "--whisker.auth-mode=ldap");
        fails("GOLDMANE_HOST): needs host:port", "--whisker.auth-mode=none", "--whisker.goldmane-host=goldmane");
    }

    @Test
    void incompleteTlsTrio() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
        fails("CA_CERT_PATH, TLS_CERT_PATH, TLS_KEY_PATH: set all three", "--whisker.auth-mode=none",
                "--whisker.ca-cert-path=" + ca);
        fails("TLS_KEY_PATH: " + dir.resolve("k") + " is not a readable file", "--whisker.auth-mode=none",
                "--whisker.ca-cert-path=" + ca, "--whisker.tls-cert-path=" + ca,
                "--whisker.tls-key-path=" + dir.resolve("k"));
    }
}
