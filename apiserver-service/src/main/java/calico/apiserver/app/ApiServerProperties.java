package calico.apiserver.app;

import calico.libcalico.datastore.DatastoreConfig;
import calico.libcalico.datastore.etcd.EtcdConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The API server's settings, bound from {@code apiserver.*}: the flags of Calico's API server
 * (translated by {@link KubeFlags}) and the datastore variables ({@code DATASTORE_TYPE},
 * {@code ETCD_ENDPOINTS}, ...) mapped in {@code application.yml}.
 *
 * @param securePort                 HTTPS port (--secure-port, 5443)
 * @param bindAddress                listen address (--bind-address)
 * @param tlsCertFile                serving certificate, PEM (--tls-cert-file); none: a self-signed pair is generated
 * @param tlsPrivateKeyFile          its key, PEM PKCS#8 (--tls-private-key-file)
 * @param clientCaFile               CA of client certificates (--client-ca-file)
 * @param requestheaderClientCaFile  CA of the front proxy's client certificate (--requestheader-client-ca-file)
 * @param requestheaderAllowedNames  CNs the front proxy may have, comma-separated; empty: any
 * @param requestheaderUsernameHeaders headers carrying the user (X-Remote-User)
 * @param requestheaderGroupHeaders  headers carrying the groups (X-Remote-Group)
 * @param tokenAuthFile              bearer tokens, kube-apiserver CSV (--token-auth-file)
 * @param authorizationRulesFile     RBAC YAML (--authorization-rules-file); none: only system:masters may act
 * @param authorizationKubeconfig    delegate authorization to this cluster's SubjectAccessReview API
 *                                   (--authorization-kubeconfig); wins over the rules file
 * @param maxRequestBodyBytes        bodies above are refused with 413 (3 MiB as kube-apiserver)
 */
@ConfigurationProperties(prefix = "apiserver")
public record ApiServerProperties(
        @DefaultValue("etcdv3") String datastoreType,
        @DefaultValue("http://127.0.0.1:2379") String etcdEndpoints,
        String etcdCaCertFile,
        String etcdCertFile,
        String etcdKeyFile,
        @DefaultValue("5443") int securePort,
        @DefaultValue("0.0.0.0") String bindAddress,
        String tlsCertFile,
        String tlsPrivateKeyFile,
        String clientCaFile,
        String requestheaderClientCaFile,
        @DefaultValue("") List<String> requestheaderAllowedNames,
        @DefaultValue("X-Remote-User") List<String> requestheaderUsernameHeaders,
        @DefaultValue("X-Remote-Group") List<String> requestheaderGroupHeaders,
        String tokenAuthFile,
        String authorizationRulesFile,
        String authorizationKubeconfig,
        @DefaultValue("3145728") long maxRequestBodyBytes) {

    public ApiServerProperties {
        datastoreType = datastoreType == null ? "" : datastoreType.trim().toLowerCase(Locale.ROOT);
        // Not "apiserver": that backend is a client of this server, which must hold the store itself.
        if (!List.of("etcdv3", "memory", "kubernetes").contains(datastoreType)) {
            throw new IllegalArgumentException("apiserver.datastore-type (DATASTORE_TYPE): \"" + datastoreType
                    + "\" is not one of etcdv3, kubernetes, memory");
        }
        if (blank(tlsCertFile) != blank(tlsPrivateKeyFile)) {
            throw new IllegalArgumentException("--tls-cert-file and --tls-private-key-file: set both or neither");
        }
        for (var f : Map.of("--tls-cert-file", nz(tlsCertFile), "--tls-private-key-file", nz(tlsPrivateKeyFile),
                "--client-ca-file", nz(clientCaFile), "--requestheader-client-ca-file", nz(requestheaderClientCaFile),
                "--token-auth-file", nz(tokenAuthFile), "--authorization-rules-file", nz(authorizationRulesFile),
                "--authorization-kubeconfig", nz(authorizationKubeconfig)).entrySet()) {
            if (!f.getValue().isEmpty() && !Files.isReadable(Path.of(f.getValue()))) {
                throw new IllegalArgumentException(f.getKey() + ": cannot read " + f.getValue());
            }
        }
        requestheaderAllowedNames = requestheaderAllowedNames == null ? List.of()
                : requestheaderAllowedNames.stream().filter(s -> !s.isBlank()).toList();
        if (maxRequestBodyBytes < 1) {
            throw new IllegalArgumentException("--max-request-body-bytes: must be positive");
        }
    }

    static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static String nz(String s) {
        return s == null ? "" : s.trim();
    }

    DatastoreConfig datastore() {
        return DatastoreConfig.of(DatastoreConfig.Type.valueOf(datastoreType.toUpperCase(Locale.ROOT)),
                () -> EtcdConfig.fromProperties("apiserver.etcd-endpoints (ETCD_ENDPOINTS)",
                        etcdEndpoints, etcdCaCertFile, etcdCertFile, etcdKeyFile), System.getenv());
    }
}
