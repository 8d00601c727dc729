package calico.libcalico.datastore.config;

import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import io.fabric8.kubernetes.client.Config;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which datastore a service reads, as every service binds it: the same property names under the
 * service's prefix ({@code <prefix>.datastore-type}, {@code .etcd-endpoints},
 * {@code .etcd-ca-cert-file}, {@code .etcd-cert-file}, {@code .etcd-key-file}, {@code .kubeconfig},
 * {@code .k8s-api-endpoint}), mapped in each {@code application.yml} from Calico's variables
 * ({@code DATASTORE_TYPE}, {@code ETCD_ENDPOINTS}, {@code ETCD_CA_CERT_FILE}, {@code ETCD_CERT_FILE},
 * {@code ETCD_KEY_FILE}, {@code KUBECONFIG}, {@code K8S_API_ENDPOINT}, and a component's own
 * {@code FELIX_DATASTORETYPE}, {@code TYPHA_ETCDENDPOINTS}, ...). Validated once, when built: every
 * error names the property and the variables it comes from, and fails start-up. {@link #toConfig()}
 * is the conversion to the datastore client's settings.
 *
 * @param source         which service bound it: its property prefix, variable prefix and allowed types
 * @param datastoreType  {@code etcdv3}, {@code kubernetes}, {@code memory} or {@code apiserver} (those
 *                       {@code source} allows), lower case
 * @param etcdEndpoints  comma-separated {@code http(s)://host:port} URLs, checked when the type is etcdv3
 * @param kubeconfig     the kubernetes datastore's kubeconfig; empty: in-cluster, else {@code ~/.kube/config}
 * @param k8sApiEndpoint the API server URL, overriding the kubeconfig's
 */
public record DatastoreProperties(Source source, String datastoreType, String etcdEndpoints, String etcdCaCertFile,
                                  String etcdCertFile, String etcdKeyFile, String kubeconfig, String k8sApiEndpoint) {

    /** Calico's default etcd endpoint, every service's default. */
    public static final String DEFAULT_ETCD_ENDPOINTS = "http://127.0.0.1:2379";
    /** Calico's default datastore type, for the Spring binding and {@link #fromVariables} alike. */
    public static final String DEFAULT_DATASTORE_TYPE = "etcdv3";

    /**
     * A service's names for these settings.
     *
     * @param propertyPrefix its properties' prefix ({@code felix})
     * @param envPrefix      its own variables' prefix, which win over Calico's generic ones ({@code FELIX_}:
     *                       {@code FELIX_DATASTORETYPE} over {@code DATASTORE_TYPE}); empty for none
     * @param types          the datastore types it can run on
     */
    public record Source(String propertyPrefix, String envPrefix, Set<DatastoreConfig.Type> types) {
        public Source {
            types = Set.copyOf(types);
        }

        /** A service that reads every datastore type. */
        public static Source of(String propertyPrefix, String envPrefix) {
            return new Source(propertyPrefix, envPrefix, Set.of(DatastoreConfig.Type.values()));
        }

        /** {@return {@code <prefix>.<property> (<variables>)}}, how errors name a setting. */
        String describe(String property, String variable) {
            String own = envPrefix.isEmpty() ? "" : envPrefix + variable.replace("_", "") + " or ";
            return propertyPrefix + "." + property + " (" + own + variable + ")";
        }

        String typeNames() {
            return Arrays.stream(DatastoreConfig.TYPE_NAMES.split(", ")).filter(n -> types.stream()
                    .anyMatch(t -> t.envName().equals(n))).collect(Collectors.joining(", "));
        }
    }

    public DatastoreProperties {
        if (source == null) {
            throw new IllegalArgumentException("source: required");
        }
        datastoreType = datastoreType == null ? "" : datastoreType.trim().toLowerCase(Locale.ROOT);
        String type = datastoreType;
        if (DatastoreConfig.Type.byEnvName(type).filter(source.types()::contains).isEmpty()) {
            throw new IllegalArgumentException(source.describe("datastore-type", "DATASTORE_TYPE") + ": \"" + type
                    + "\" is not one of " + source.typeNames());
        }
        etcdEndpoints = etcdEndpoints == null ? "" : etcdEndpoints.trim();
        etcdCaCertFile = trimmed(etcdCaCertFile);
        etcdCertFile = trimmed(etcdCertFile);
        etcdKeyFile = trimmed(etcdKeyFile);
        kubeconfig = trimmed(kubeconfig);
        k8sApiEndpoint = trimmed(k8sApiEndpoint);
        if (type.equals(DatastoreConfig.Type.ETCDV3.envName())) {
            etcd(source, etcdEndpoints, etcdCaCertFile, etcdCertFile, etcdKeyFile); // checked at start-up
        }
    }

    /** {@return the bound datastore type} */
    public DatastoreConfig.Type type() {
        return DatastoreConfig.Type.byEnvName(datastoreType).orElseThrow();
    }

    /**
     * {@return the datastore client's settings}. The kubernetes variables are these properties
     * (so a {@code --KUBECONFIG=} argument works like the variable) over the process environment
     * (in-cluster detection reads {@code KUBERNETES_SERVICE_HOST}); an unusable kubeconfig is
     * reported naming {@code KUBECONFIG}.
     */
    public DatastoreConfig toConfig() {
        return toConfig(System.getenv());
    }

    /** As {@link #toConfig()}, over {@code env} instead of the process environment. */
    public DatastoreConfig toConfig(Map<String, String> env) {
        return DatastoreConfig.of(type(), () -> etcd(source, etcdEndpoints, etcdCaCertFile, etcdCertFile, etcdKeyFile),
                environment(env));
    }

    /**
     * {@return the configuration of a Kubernetes client for this service}: the kubeconfig and API
     * endpoint of these properties when either is set (as the kubernetes datastore reads them),
     * otherwise fabric8's default (the pod's service account inside a cluster, else
     * {@code ~/.kube/config} or {@code KUBECONFIG}).
     */
    public Config kubernetesClientConfig() {
        if (!kubeconfig.isEmpty() || !k8sApiEndpoint.isEmpty()) {
            return KubernetesConfig.fromEnvironment(environment(System.getenv())).client();
        }
        return Config.autoConfigure(null);
    }

    /** {@code env} with {@code KUBECONFIG} and {@code K8S_API_ENDPOINT} as bound, when set. */
    private Map<String, String> environment(Map<String, String> env) {
        Map<String, String> out = new HashMap<>(env);
        if (!kubeconfig.isEmpty()) {
            out.put("KUBECONFIG", kubeconfig);
        }
        if (!k8sApiEndpoint.isEmpty()) {
            out.put("K8S_API_ENDPOINT", k8sApiEndpoint);
        }
        return out;
    }

    private static EtcdConfig etcd(Source source, String endpoints, String caCertFile, String certFile,
                                   String keyFile) {
        return EtcdConfig.fromProperties(source.describe("etcd-endpoints", "ETCD_ENDPOINTS"), endpoints, caCertFile,
                certFile, keyFile);
    }

    private static String trimmed(String s) {
        return s == null ? "" : s.trim();
    }

    /**
     * {@return the settings bound from {@code environment}} under {@code source}'s prefix, with
     * Calico's defaults (etcdv3 on {@value #DEFAULT_ETCD_ENDPOINTS}).
     *
     * @throws IllegalArgumentException naming the property and its variables when a value is unusable
     */
    public static DatastoreProperties bind(org.springframework.core.env.Environment environment, Source source) {
        Bound b = org.springframework.boot.context.properties.bind.Binder.get(environment)
                .bindOrCreate(source.propertyPrefix(),
                        org.springframework.boot.context.properties.bind.Bindable.of(Bound.class));
        return new DatastoreProperties(source, b.datastoreType(), b.etcdEndpoints(), b.etcdCaCertFile(),
                b.etcdCertFile(), b.etcdKeyFile(), b.kubeconfig(), b.k8sApiEndpoint());
    }

    /**
     * {@return the settings read from Calico's variables} in {@code variables}, for a service without
     * Spring (confd): each of {@code DATASTORE_TYPE}, {@code ETCD_ENDPOINTS}, {@code ETCD_CA_CERT_FILE},
     * {@code ETCD_CERT_FILE}, {@code ETCD_KEY_FILE}, {@code KUBECONFIG}, {@code K8S_API_ENDPOINT} with the
     * service's own variable winning ({@code FELIX_DATASTORETYPE}), empty as unset, Calico's defaults as
     * {@link #bind} has them.
     *
     * @throws IllegalArgumentException naming the property and its variables when a value is unusable
     */
    public static DatastoreProperties fromVariables(Map<String, String> variables, Source source) {
        java.util.function.BiFunction<String, String, String> read = (variable, fallback) -> {
            for (String name : new String[] {source.envPrefix().isEmpty() ? null
                    : source.envPrefix() + variable.replace("_", ""), variable}) {
                String value = name == null ? null : variables.get(name);
                if (value != null && !value.isBlank()) {
                    return value;
                }
            }
            return fallback;
        };
        return new DatastoreProperties(source, read.apply("DATASTORE_TYPE", DEFAULT_DATASTORE_TYPE),
                read.apply("ETCD_ENDPOINTS", DEFAULT_ETCD_ENDPOINTS), read.apply("ETCD_CA_CERT_FILE", null),
                read.apply("ETCD_CERT_FILE", null), read.apply("ETCD_KEY_FILE", null), read.apply("KUBECONFIG", null),
                read.apply("K8S_API_ENDPOINT", null));
    }

    /** The properties as bound, before they are checked. */
    record Bound(
            @org.springframework.boot.context.properties.bind.DefaultValue(DEFAULT_DATASTORE_TYPE) String datastoreType,
            @org.springframework.boot.context.properties.bind.DefaultValue(DEFAULT_ETCD_ENDPOINTS) String etcdEndpoints,
            String etcdCaCertFile, String etcdCertFile, String etcdKeyFile, String kubeconfig, String k8sApiEndpoint) {
    }
}
