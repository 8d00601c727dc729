package calico.whisker.auth;

/** WHISKER_AUTH_MODE=none: for local use only (logged as a warning at start-up). */
public final class NoAuthenticator implements Authenticator {

    @Override
    public String reject(String authorization) {
        return null;
    }
}
