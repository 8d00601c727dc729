package calico.whisker.auth;

/** {@code Authorization: Bearer <token>} against the token read once from WHISKER_AUTH_TOKEN_FILE. */
public final class TokenAuthenticator implements Authenticator {

    private final byte[] digest;

    TokenAuthenticator(String token) {
        this.digest = Secrets.digest(token);
    }

    static TokenAuthenticator fromFile(String file) {
        String token = Secrets.read(file, "WHISKER_AUTH_TOKEN_FILE").strip();
        if (token.isEmpty()) {
            throw new IllegalArgumentException("WHISKER_AUTH_TOKEN_FILE: " + file + " is empty");
        }
        if (token.chars().anyMatch(c -> c <= ' ')) {
            throw new IllegalArgumentException("WHISKER_AUTH_TOKEN_FILE: the token in " + file
                    + " contains white space or control characters");
        }
        return new TokenAuthenticator(token);
    }

    @Override
    public String reject(String authorization) {
        String presented = Secrets.credential(authorization, "Bearer");
        if (presented == null) {
            return "authentication required: send Authorization: Bearer <token>";
        }
        return Secrets.matches(digest, presented) ? null : "the bearer token is not valid";
    }
}
