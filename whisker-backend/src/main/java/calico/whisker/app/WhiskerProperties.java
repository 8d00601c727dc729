package calico.whisker.app;

import calico.whisker.auth.AuthMode;
import calico.whisker.auth.Authenticator;
import calico.whisker.goldmane.GoldmaneClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * whisker-backend's settings, bound from {@code whisker.*} ({@code application.yml} maps the
 * environment names of API.md onto them). Validated here so that a misconfigured backend does not
 * start; every message names the environment variable.
 *
 * @param goldmaneHost   goldmane's gRPC address, host:port (GOLDMANE_HOST)
 * @param caCertPath     CA that signed goldmane's certificate (CA_CERT_PATH)
 * @param tlsCertPath    our client certificate towards goldmane (TLS_CERT_PATH)
 * @param tlsKeyPath     its key, PEM PKCS#8 (TLS_KEY_PATH)
 * @param authMode       token | basic | oidc | none (WHISKER_AUTH_MODE)
 * @param authTokenFile  file holding the bearer token (WHISKER_AUTH_TOKEN_FILE)
 * @param authBasicFile  file of user:password lines (WHISKER_AUTH_BASIC_FILE)
 * @param oidcIssuerUri  issuer; its discovery document names the JWK set (WHISKER_OIDC_ISSUER_URI)
 * @param oidcJwkSetUri  JWK set, instead of or besides discovery (WHISKER_OIDC_JWK_SET_URI)
 * @param oidcAudience   required audience, empty for any (WHISKER_OIDC_AUDIENCE)
 * @param callTimeout    deadline of one unary goldmane call
 * @param keepAlive      interval of the SSE keep-alive comment; also how soon a vanished client is noticed
 * @param probeInterval  how often goldmane is asked until it first answers (readiness)
 */
@ConfigurationProperties(prefix = "whisker")
public record WhiskerProperties(
        @DefaultValue("127.0.0.1:7443") String goldmaneHost,
        String caCertPath,
        String tlsCertPath,
        String tlsKeyPath,
        @DefaultValue("token") String authMode,
        String authTokenFile,
        String authBasicFile,
        String oidcIssuerUri,
        String oidcJwkSetUri,
        String oidcAudience,
        @DefaultValue("30s") Duration callTimeout,
        @DefaultValue("15s") Duration keepAlive,
        @DefaultValue("5s") Duration probeInterval) {

    public WhiskerProperties {
        goldmaneHost = trim(goldmaneHost);
        caCertPath = trim(caCertPath);
        tlsCertPath = trim(tlsCertPath);
        tlsKeyPath = trim(tlsKeyPath);
        authTokenFile = trim(authTokenFile);
        authBasicFile = trim(authBasicFile);
        oidcIssuerUri = trim(oidcIssuerUri);
        oidcJwkSetUri = trim(oidcJwkSetUri);
        oidcAudience = trim(oidcAudience);
        if (goldmaneHost == null || !goldmaneHost.matches("[^\\s:]+:\\d{1,5}|\\[[0-9a-fA-F:.]+]:\\d{1,5}")) {
            throw new IllegalArgumentException("whisker.goldmane-host (GOLDMANE_HOST): needs host:port, got '"
                    + goldmaneHost + "'");
        }
        int tls = (caCertPath == null ? 0 : 1) + (tlsCertPath == null ? 0 : 1) + (tlsKeyPath == null ? 0 : 1);
        if (tls != 0 && tls != 3) {
            throw new IllegalArgumentException("CA_CERT_PATH, TLS_CERT_PATH, TLS_KEY_PATH: set all three for "
                    + "mutual TLS towards goldmane, or none");
        }
        if (tls == 3) {
            readable(caCertPath, "CA_CERT_PATH");
            readable(tlsCertPath, "TLS_CERT_PATH");
            readable(tlsKeyPath, "TLS_KEY_PATH");
        }
        AuthMode mode = mode(authMode);
        switch (mode) {
            case TOKEN -> readable(required(authTokenFile, "WHISKER_AUTH_TOKEN_FILE", mode), "WHISKER_AUTH_TOKEN_FILE");
            case BASIC -> readable(required(authBasicFile, "WHISKER_AUTH_BASIC_FILE", mode), "WHISKER_AUTH_BASIC_FILE");
            case OIDC -> {
                if (oidcIssuerUri == null && oidcJwkSetUri == null) {
                    throw new IllegalArgumentException("WHISKER_OIDC_ISSUER_URI / WHISKER_OIDC_JWK_SET_URI: "
                            + "WHISKER_AUTH_MODE=oidc needs at least one");
                }
                httpUri(oidcIssuerUri, "WHISKER_OIDC_ISSUER_URI");
                httpUri(oidcJwkSetUri, "WHISKER_OIDC_JWK_SET_URI");
            }
            case NONE -> { }
        }
        if (callTimeout.isNegative() || callTimeout.isZero() || keepAlive.isNegative() || keepAlive.isZero()
                || probeInterval.isNegative() || probeInterval.isZero()) {
            throw new IllegalArgumentException("whisker.call-timeout, keep-alive, probe-interval: must be positive");
        }
    }

    /** {@return the parsed WHISKER_AUTH_MODE} */
    public AuthMode mode() {
        return mode(authMode);
    }

    /** {@return whether the goldmane connection uses mutual TLS} */
    public boolean tls() {
        return caCertPath != null;
    }

    /** {@return how the goldmane client connects} */
    public GoldmaneClient.Connection goldmane() {
        return new GoldmaneClient.Connection(goldmaneHost, callTimeout, probeInterval, caCertPath, tlsCertPath,
                tlsKeyPath);
    }

    /** {@return the authenticator of the configured mode}; a bad credentials file fails start-up. */
    public Authenticator authenticator() {
        return switch (mode()) {
            case TOKEN -> Authenticator.token(authTokenFile);
            case BASIC -> Authenticator.basic(authBasicFile);
            case OIDC -> Authenticator.oidc(oidcIssuerUri, oidcJwkSetUri, oidcAudience);
            case NONE -> Authenticator.none();
        };
    }

    private static AuthMode mode(String s) {
        try {
            return AuthMode.valueOf(s == null ? "" : s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("whisker.auth-mode (WHISKER_AUTH_MODE): '" + s
                    + "' is not one of token, basic, oidc, none");
        }
    }

    private static String required(String v, String env, AuthMode mode) {
        if (v == null) {
            throw new IllegalArgumentException(env + ": required when WHISKER_AUTH_MODE=" + mode.name().toLowerCase(
                    Locale.ROOT));
        }
        return v;
    }

    private static void readable(String file, String env) {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
            throw new IllegalArgumentException(env + ": " + file + " is not a readable file");
        }
    }

    private static void httpUri(String uri, String env) {
        if (uri == null) {
            return;
        }
        try {
            var u = java.net.URI.create(uri);
            if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
                throw new IllegalArgumentException("not http(s)");
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(env + ": needs an http or https URL, got " + uri);
        }
    }

    private static String trim(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }
}
