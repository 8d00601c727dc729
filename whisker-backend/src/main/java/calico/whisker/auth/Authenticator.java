package calico.whisker.auth;

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

    /** A bearer token read from {@code file} (WHISKER_AUTH_TOKEN_FILE); an unreadable file fails start-up. */
    static Authenticator token(String file) {
        return TokenAuthenticator.fromFile(file);
    }

    /** {@code user:password} lines read from {@code file} (WHISKER_AUTH_BASIC_FILE). */
    static Authenticator basic(String file) {
        return BasicAuthenticator.fromFile(file);
    }

    /** JWTs checked against the issuer's (or the given) JWK set, and the audience when one is set. */
    static Authenticator oidc(String issuerUri, String jwkSetUri, String audience) {
        return new OidcAuthenticator(issuerUri, jwkSetUri, audience);
    }

    /** Every request proceeds (WHISKER_AUTH_MODE=none). */
    static Authenticator none() {
        return new NoAuthenticator();
    }
}
