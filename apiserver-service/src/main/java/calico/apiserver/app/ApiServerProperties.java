package calico.apiserver.app;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The API server's settings, bound from {@code apiserver.*}: the flags of Calico's API server
 * (translated by {@link KubeFlags}). The datastore settings ({@code apiserver.datastore-type},
 * {@code apiserver.etcd-*}, {@code apiserver.kubeconfig}, {@code apiserver.k8s-api-endpoint}: DATASTORE_TYPE,
 * ETCD_*, KUBECONFIG, K8S_API_ENDPOINT mapped in {@code application.yml}) are libcalico's shared
 * {@link calico.libcalico.datastore.config.DatastoreProperties}, bound by {@link ApiServerConfiguration}.
 *
 * @param securePort                 HTTPS port (--secure-port, 5443)
 * @param bindAddress                listen address (--bind-address)
 * @param tlsCertFile                serving certificate, PEM (--tls-cert-file); none: a self-signed pair is generated
 * @param tlsPrivateKeyFile          its key, PEM PKCS#8 (--tls-private-key-file)
 * @param certDir                    where the self-signed pair is kept (--cert-dir); none: a temporary directory
 * @param clientCaFile               CA of client certificates (--client-ca-file); none: the cluster's, when
 *                                   --authentication-kubeconfig is given
 * @param requestheaderClientCaFile  CA of the front proxy's client certificate (--requestheader-client-ca-file);
 *                                   none: the cluster's, with the other requestheader settings, when
 *                                   --authentication-kubeconfig is given
 * @param requestheaderAllowedNames  CNs the front proxy may have, comma-separated; empty: any
 * @param requestheaderUsernameHeaders headers carrying the user (X-Remote-User)
 * @param requestheaderUidHeaders    headers carrying the uid (none)
 * @param requestheaderGroupHeaders  headers carrying the groups (X-Remote-Group)
 * @param requestheaderExtraHeadersPrefix prefixes of headers carrying extra attributes (X-Remote-Extra-)
 * @param tokenAuthFile              bearer tokens, kube-apiserver CSV (--token-auth-file)
 * @param authenticationKubeconfig   the cluster that reviews bearer tokens (TokenReview) and whose
 *                                   extension-apiserver-authentication ConfigMap supplies the CAs the
 *                                   flags leave out (--authentication-kubeconfig)
 * @param authenticationTokenWebhookCacheTtl how long token reviews are kept (10s)
 * @param authenticationSkipLookup   do not read the ConfigMap (--authentication-skip-lookup)
 * @param authenticationTolerateLookupFailure start even when the ConfigMap cannot be read
 * @param authorizationRulesFile     RBAC YAML (--authorization-rules-file); none: only system:masters may act
 * @param authorizationKubeconfig    delegate authorization to this cluster's SubjectAccessReview API
 *                                   (--authorization-kubeconfig); wins over the rules file
 * @param authorizationWebhookCacheAuthorizedTtl   how long an allowed review is kept (10s)
 * @param authorizationWebhookCacheUnauthorizedTtl how long a denied review is kept (10s)
 * @param maxRequestBodyBytes        bodies above are refused with 413 (3 MiB as kube-apiserver)
 */
@ConfigurationProperties(prefix = "apiserver")
public record ApiServerProperties(
        @DefaultValue("5443") int securePort,
        @DefaultValue("0.0.0.0") String bindAddress,
        String tlsCertFile,
        String tlsPrivateKeyFile,
        String certDir,
        String clientCaFile,
        String requestheaderClientCaFile,
        @DefaultValue("") List<String> requestheaderAllowedNames,
        @DefaultValue("X-Remote-User") List<String> requestheaderUsernameHeaders,
        @DefaultValue("") List<String> requestheaderUidHeaders,
        @DefaultValue("X-Remote-Group") List<String> requestheaderGroupHeaders,
        @DefaultValue("X-Remote-Extra-") List<String> requestheaderExtraHeadersPrefix,
        String tokenAuthFile,
        String authenticationKubeconfig,
        @DefaultValue("10s") Duration authenticationTokenWebhookCacheTtl,
        @DefaultValue("false") boolean authenticationSkipLookup,
        @DefaultValue("false") boolean authenticationTolerateLookupFailure,
        String authorizationRulesFile,
        String authorizationKubeconfig,
        @DefaultValue("10s") Duration authorizationWebhookCacheAuthorizedTtl,
        @DefaultValue("10s") Duration authorizationWebhookCacheUnauthorizedTtl,
        @DefaultValue("3145728") long maxRequestBodyBytes) {

    public ApiServerProperties {
        if (blank(tlsCertFile) != blank(tlsPrivateKeyFile)) {
            throw new IllegalArgumentException("--tls-cert-file and --tls-private-key-file: set both or neither");
        }
        for (var f : Map.of("--tls-cert-file", nz(tlsCertFile), "--tls-private-key-file", nz(tlsPrivateKeyFile),
                "--client-ca-file", nz(clientCaFile), "--requestheader-client-ca-file", nz(requestheaderClientCaFile),
                "--token-auth-file", nz(tokenAuthFile), "--authorization-rules-file", nz(authorizationRulesFile),
                "--authorization-kubeconfig", nz(authorizationKubeconfig),
                "--authentication-kubeconfig", nz(authenticationKubeconfig)).entrySet()) {
            if (!f.getValue().isEmpty() && !Files.isReadable(Path.of(f.getValue()))) {
                throw new IllegalArgumentException(f.getKey() + ": cannot read " + f.getValue());
            }
        }
        requestheaderAllowedNames = nonBlank(requestheaderAllowedNames);
        requestheaderUidHeaders = nonBlank(requestheaderUidHeaders);
        requestheaderExtraHeadersPrefix = nonBlank(requestheaderExtraHeadersPrefix);
        for (var ttl : Map.of("--authentication-token-webhook-cache-ttl", authenticationTokenWebhookCacheTtl,
                "--authorization-webhook-cache-authorized-ttl", authorizationWebhookCacheAuthorizedTtl,
                "--authorization-webhook-cache-unauthorized-ttl", authorizationWebhookCacheUnauthorizedTtl).entrySet()) {
            if (ttl.getValue() == null || ttl.getValue().isNegative()) {
                throw new IllegalArgumentException(ttl.getKey() + ": must be a duration of 0s or more, got " + ttl.getValue());
            }
        }
        if (maxRequestBodyBytes < 1) {
            throw new IllegalArgumentException("--max-request-body-bytes: must be positive");
        }
    }

    private static List<String> nonBlank(List<String> values) {
        return values == null ? List.of() : values.stream().filter(v -> !v.isBlank()).toList();
    }

    static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static String nz(String s) {
        return s == null ? "" : s.trim();
    }
}
