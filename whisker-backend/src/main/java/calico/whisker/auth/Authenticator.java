package calico.whisker.auth;

import calico.whisker.app.WhiskerProperties;

/** Checks the {@code Authorization} header of an API request (WHISKER_AUTH_MODE). */
public sealed interface Authenticator permits TokenAuthenticator, BasicAuthenticator, OidcAuthenticator,
        NoAuthenticator {

    /**
     * @param authorization the header, or null
     * @return null when the request may proceed, else why not (the 401 message; never echoes a secret)
     */
    String reject(String authorization);

    /** {@return the WWW-Authenticate challenge for a 401} (Bearer unless the scheme is another) */
    default String challenge() {
        return "Bearer realm=\"whisker\"";
    }

    /** Builds the authenticator of the configured mode; a bad credentials file fails start-up. */
    static Authenticator of(WhiskerProperties p) {
        return switch (p.mode()) {
            case TOKEN -> TokenAuthenticator.fromFile(p.authTokenFile());
            case BASIC -> BasicAuthenticator.fromFile(p.authBasicFile());
            case OIDC -> new OidcAuthenticator(p.oidcIssuerUri(), p.oidcJwkSetUri(), p.oidcAudience());
            case NONE -> new NoAuthenticator();
        };
    }
}
