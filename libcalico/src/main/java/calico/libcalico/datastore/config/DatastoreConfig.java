package calico.libcalico.datastore.config;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.apiserver.ApiServerConfig;
import calico.libcalico.datastore.apiserver.ApiServerDatastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.datastore.memory.MemoryManifest;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Which datastore a component talks to, read from Calico's environment variables:
 * {@code DATASTORE_TYPE} ({@code etcdv3}, the default here, {@code kubernetes}, {@code memory} or
 * {@code apiserver}: Calico's own API server as a shared store, see {@link ApiServerConfig});
 * for etcd, {@code ETCD_ENDPOINTS}, {@code ETCD_CA_CERT_FILE}, {@code ETCD_CERT_FILE},
 * {@code ETCD_KEY_FILE}; for kubernetes, {@code KUBECONFIG} (else in-cluster or
 * {@code ~/.kube/config}, as fabric8 detects them) and {@code K8S_API_ENDPOINT}; for memory,
 * {@code CALICO_MEMORY_MANIFEST} (ours: what the store holds when it opens, {@link MemoryManifest}).
 *
 * @param type       the backend
 * @param etcd       how to reach etcd; {@code null} unless {@code type} is {@link Type#ETCDV3}
 * @param kubernetes how to reach the API server; {@code null} means "detect it when opening"
 *                   (only read when {@code type} is {@link Type#KUBERNETES})
 * @param apiserver  how to reach Calico's API server; required exactly when {@code type} is {@link Type#APISERVER}
 * @param memory     what a memory store holds when it opens (only read when {@code type} is {@link Type#MEMORY})
 */
public record DatastoreConfig(Type type, EtcdConfig etcd, KubernetesConfig kubernetes, ApiServerConfig apiserver,
                              MemoryManifest memory) {

    /** The names {@code DATASTORE_TYPE} accepts, for error messages. */
    public static final String TYPE_NAMES = "etcdv3, kubernetes, memory, apiserver";

    /** The backends, by the names {@code DATASTORE_TYPE} uses. */
    public enum Type {
        ETCDV3("etcdv3"), MEMORY("memory"), KUBERNETES("kubernetes"), APISERVER("apiserver");

        private final String envName;

        Type(String envName) {
            this.envName = envName;
        }

        public String envName() {
            return envName;
        }

        /** {@return the type {@code DATASTORE_TYPE} names} (case-insensitive, trimmed). */
        public static Optional<Type> byEnvName(String raw) {
            String s = raw == null ? "" : raw.trim().toLowerCase(Locale.ROOT);
            for (Type t : values()) {
                if (t.envName.equals(s)) {
                    return Optional.of(t);
                }
            }
            return Optional.empty();
        }
    }

    /** Etcd or memory; a kubernetes configuration is detected when {@link #open()} is called. */
    public DatastoreConfig(Type type, EtcdConfig etcd) {
        this(type, etcd, null, null);
    }

    public DatastoreConfig(Type type, EtcdConfig etcd, KubernetesConfig kubernetes) {
        this(type, etcd, kubernetes, null);
    }

    public DatastoreConfig(Type type, EtcdConfig etcd, KubernetesConfig kubernetes, ApiServerConfig apiserver) {
        this(type, etcd, kubernetes, apiserver, MemoryManifest.NONE);
    }

    public DatastoreConfig {
        memory = memory == null ? MemoryManifest.NONE : memory;
        if (type == null) {
            throw new IllegalArgumentException("DATASTORE_TYPE: required");
        }
        if (type == Type.ETCDV3 && etcd == null) {
            throw new IllegalArgumentException("ETCD_ENDPOINTS: required when DATASTORE_TYPE is etcdv3");
        }
        if (type == Type.APISERVER && apiserver == null) {
            throw new IllegalArgumentException("CALICO_APISERVER_URL: required when DATASTORE_TYPE is apiserver");
        }
    }

    /** Reads the configuration; every error names the variable at fault. */
    public static DatastoreConfig fromEnvironment(Map<String, String> env) {
        String raw = env.getOrDefault("DATASTORE_TYPE", "").trim();
        Type type = Type.ETCDV3;
        if (!raw.isEmpty()) {
            type = Type.byEnvName(raw).orElseThrow(() -> new IllegalArgumentException(
                    "DATASTORE_TYPE: \"" + raw + "\" is not one of " + TYPE_NAMES));
        }
        return of(type, () -> EtcdConfig.fromEnvironment(env), env);
    }

    /**
     * {@return the configuration of {@code type}} for a component that binds its own etcd
     * settings (felix's {@code FELIX_ETCD*}, typha's {@code TYPHA_ETCD*}): {@code etcd} is read only
     * for etcdv3; kubernetes reads {@code KUBECONFIG}/{@code K8S_API_ENDPOINT} from {@code env},
     * apiserver the {@code CALICO_APISERVER_*} variables, memory {@code CALICO_MEMORY_MANIFEST} (the file
     * read and checked now).
     */
    public static DatastoreConfig of(Type type, Supplier<EtcdConfig> etcd, Map<String, String> env) {
        return switch (type) {
            case ETCDV3 -> new DatastoreConfig(type, etcd.get());
            case MEMORY -> new DatastoreConfig(type, null, null, null, MemoryManifest.fromEnvironment(env));
            case KUBERNETES -> new DatastoreConfig(type, null, KubernetesConfig.fromEnvironment(env));
            case APISERVER -> new DatastoreConfig(type, null, null, ApiServerConfig.fromEnvironment(env));
        };
    }

    /** {@return a client of the configured backend}; the caller closes it. */
    public Datastore open() {
        return switch (type) {
            case ETCDV3 -> new EtcdDatastore(etcd);
            case MEMORY -> memory.open();
            case KUBERNETES -> new KubernetesDatastore(kubernetes != null ? kubernetes
                    : KubernetesConfig.fromEnvironment(System.getenv()));
            case APISERVER -> new ApiServerDatastore(apiserver);
        };
    }
}
