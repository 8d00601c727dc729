package calico.felix.app;

import calico.api.model.FelixConfigurationEnums;
import calico.libcalico.datastore.DatastoreConfig;
import calico.libcalico.datastore.etcd.EtcdConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Felix's local settings (those it needs before it can read the datastore), bound from
 * {@code felix.*}; {@code application.yml} maps Calico's environment names onto them. Every
 * error names the property and the Calico variable it comes from, and fails start-up.
 *
 * @param hostname           this node's name ({@code FELIX_FELIXHOSTNAME}, else {@code HOSTNAME})
 * @param datastoreType      {@code etcdv3}, {@code kubernetes} or {@code memory}
 * @param etcdEndpoints      comma-separated etcd URLs, used when the type is etcdv3
 * @param logSeverityScreen  Calico's level names: Trace, Debug, Info, Warning, Error, Fatal
 * @param readyPollInitial   first wait between reads of ClusterInformation {@code default}
 * @param readyPollMax       cap of that (doubling) wait
 * @param applyTimeout       an apply or graph batch running longer than this counts as stalled
 * @param datastoreTimeout   read directly from the datastore, felix is not ready once the datastore has not
 *                           answered for this long (probed every third of it, at most every 10 s)
 * @param dataplaneDriver    {@code model} (in-memory, the default) or {@code kernel} (the kernel: policy
 *                           backend from FelixConfiguration, and routes); {@code iptables} is a synonym
 *                           of {@code kernel} kept for older settings ({@code FELIX_DATAPLANEDRIVERNAME})
 * @param dataplaneNetns     network namespace ({@code /run/netns/<name>}) the kernel dataplane programs;
 *                           empty for felix's own ({@code FELIX_DATAPLANENETNS})
 * @param iptablesBackend    {@code Auto}, {@code NFT} or {@code Legacy} ({@code FELIX_IPTABLESBACKEND}); checked
 *                           here so a typo fails start-up; the dataplane reads the same variable through
 *                           the resolved FelixConfiguration
 * @param kubeconfig         the kubeconfig of the kubernetes datastore ({@code KUBECONFIG}); empty: in-cluster
 *                           or {@code ~/.kube/config}
 * @param k8sApiEndpoint     the API server URL, overriding the kubeconfig's ({@code K8S_API_ENDPOINT})
 */
@ConfigurationProperties(prefix = "felix")
public record FelixProperties(
        String hostname,
        @DefaultValue("etcdv3") String datastoreType,
        @DefaultValue("http://127.0.0.1:2379") String etcdEndpoints,
        String etcdCaCertFile,
        String etcdCertFile,
        String etcdKeyFile,
        @DefaultValue("Info") String logSeverityScreen,
        @DefaultValue("100ms") Duration readyPollInitial,
        @DefaultValue("5s") Duration readyPollMax,
        @DefaultValue("60s") Duration applyTimeout,
        @DefaultValue("30s") Duration datastoreTimeout,
        @DefaultValue("model") String dataplaneDriver,
        String dataplaneNetns,
        @DefaultValue("Auto") String iptablesBackend,
        String kubeconfig,
        String k8sApiEndpoint) {

    static final List<String> DRIVERS = List.of("model", "kernel", "iptables");

    public FelixProperties {
        if (hostname == null || hostname.isBlank()) {
            throw new IllegalArgumentException(
                    "felix.hostname (FELIX_FELIXHOSTNAME or HOSTNAME): required, the node's name");
        }
        hostname = hostname.trim();
        datastoreType = datastoreType == null ? "" : datastoreType.trim().toLowerCase(Locale.ROOT);
        if (DatastoreConfig.Type.byEnvName(datastoreType).isEmpty()) {
            throw new IllegalArgumentException("felix.datastore-type (FELIX_DATASTORETYPE or DATASTORE_TYPE): \""
                    + datastoreType + "\" is not one of " + DatastoreConfig.TYPE_NAMES);
        }
        if (datastoreType.equals("etcdv3")) {
            etcd(etcdEndpoints, etcdCaCertFile, etcdCertFile, etcdKeyFile); // validates at start-up
        }
        logSeverityScreen = oneOf("felix.log-severity-screen (FELIX_LOGSEVERITYSCREEN)", logSeverityScreen,
                "logSeverityScreen");
        positive("felix.ready-poll-initial", readyPollInitial);
        positive("felix.ready-poll-max", readyPollMax);
        positive("felix.apply-timeout", applyTimeout);
        positive("felix.datastore-timeout", datastoreTimeout);
        dataplaneDriver = dataplaneDriver == null ? "" : dataplaneDriver.trim().toLowerCase(Locale.ROOT);
        if (!DRIVERS.contains(dataplaneDriver)) {
            throw new IllegalArgumentException("felix.dataplane-driver (FELIX_DATAPLANEDRIVERNAME): \""
                    + dataplaneDriver + "\" is not one of " + String.join(", ", DRIVERS));
        }
        dataplaneNetns = dataplaneNetns == null ? "" : dataplaneNetns.trim();
        if (!dataplaneNetns.isEmpty() && !dataplaneNetns.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("felix.dataplane-netns (FELIX_DATAPLANENETNS): \"" + dataplaneNetns
                    + "\" is not a namespace name (letters, digits, '.', '_', '-')");
        }
        iptablesBackend = oneOf("felix.iptables-backend (FELIX_IPTABLESBACKEND)", iptablesBackend, "iptablesBackend");
    }

    /**
     * {@return the datastore client configuration}; files are checked to be readable. The
     * kubernetes variables are felix's properties (so a {@code --KUBECONFIG=} argument works like
     * the environment variable), over the process environment (in-cluster detection).
     */
    public DatastoreConfig datastore() {
        Map<String, String> env = new HashMap<>(System.getenv());
        if (kubeconfig != null && !kubeconfig.isBlank()) {
            env.put("KUBECONFIG", kubeconfig);
        }
        if (k8sApiEndpoint != null && !k8sApiEndpoint.isBlank()) {
            env.put("K8S_API_ENDPOINT", k8sApiEndpoint);
        }
        return datastore(env);
    }

    /** {@return the datastore client configuration}, reading the kubernetes variables from {@code env} */
    private DatastoreConfig datastore(Map<String, String> env) {
        return DatastoreConfig.of(DatastoreConfig.Type.valueOf(datastoreType.toUpperCase(Locale.ROOT)),
                () -> etcd(etcdEndpoints, etcdCaCertFile, etcdCertFile, etcdKeyFile), env);
    }

    private static EtcdConfig etcd(String endpoints, String caCertFile, String certFile, String keyFile) {
        return EtcdConfig.fromProperties("felix.etcd-endpoints (FELIX_ETCDENDPOINTS or ETCD_ENDPOINTS)", endpoints,
                caCertFile, certFile, keyFile);
    }

    /** {@return the v3 spelling of {@code raw}}, checked against calico-api's table of {@code field}'s values. */
    private static String oneOf(String what, String raw, String field) {
        FelixConfigurationEnums.Allowed allowed = FelixConfigurationEnums.of(field).orElseThrow();
        return allowed.canonical(raw).orElseThrow(() -> new IllegalArgumentException(what + ": \"" + raw
                + "\" is not one of " + String.join(", ", allowed.values())));
    }

    private static void positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": must be a positive duration, got " + d);
        }
    }
}
