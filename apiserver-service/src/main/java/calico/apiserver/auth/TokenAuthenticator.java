package calico.apiserver.auth;

import java.util.Optional;

/** Who a bearer token belongs to: the token file, or the cluster's TokenReview API. */
public interface TokenAuthenticator {

    /** {@return the token's user}, or empty when this source does not know it (or could not ask). */
    Optional<User> user(String token);
}
