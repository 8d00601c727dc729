package calico.apiserver.auth;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * How callers are authenticated, as k8s.io/apiserver's delegated authentication options.
 *
 * @param clientCas               {@code --client-ca-file}; empty: looked up in the cluster's
 *                                authentication ConfigMap (when there is a kubeconfig and lookup is on)
 * @param requestHeader           the {@code --requestheader-*} flags, present when
 *                                {@code --requestheader-client-ca-file} is given; empty: looked up likewise
 * @param tokenFile               {@code --token-auth-file} (static tokens, asked first)
 * @param kubeconfig              {@code --authentication-kubeconfig}: TokenReviews and the ConfigMap
 *                                lookup go to this cluster; {@code null}: neither
 * @param tokenCacheTtl           {@code --authentication-token-webhook-cache-ttl} (10 s)
 * @param skipLookup              {@code --authentication-skip-lookup}
 * @param tolerateLookupFailure   {@code --authentication-tolerate-lookup-failure}
 */
public record AuthenticationSettings(List<X509Certificate> clientCas, Optional<RequestHeaderConfig> requestHeader,
                                     TokenFile tokenFile, Path kubeconfig, Duration tokenCacheTtl, boolean skipLookup,
                                     boolean tolerateLookupFailure) {
    public AuthenticationSettings {
        clientCas = List.copyOf(clientCas);
        if (tokenCacheTtl == null || tokenCacheTtl.isNegative()) {
            throw new IllegalArgumentException("--authentication-token-webhook-cache-ttl: must not be negative, got "
                    + tokenCacheTtl);
        }
    }

    /** Whether the cluster's ConfigMap supplies what the flags leave out. */
    boolean looksUp() {
        return kubeconfig != null && !skipLookup && (clientCas.isEmpty() || requestHeader.isEmpty());
    }
}
