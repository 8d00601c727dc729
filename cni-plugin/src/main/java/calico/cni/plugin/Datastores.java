package calico.cni.plugin;

import calico.cni.config.NetConf;
import calico.cni.spec.CniError;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.net.URI;
import java.util.Map;

/** Opening the configured datastore, and turning its failures into CNI errors. */
public final class Datastores {
    private Datastores() {
    }

    /** {@return a key naming the datastore a configuration points at} (for sharing clients in the daemon). */
    public static String key(NetConf conf) {
        return conf.datastoreType() + "|" + conf.etcdEndpoints() + "|" + conf.kubeconfig();
    }

    public static Datastore open(NetConf conf) {
        try {
            if (conf.datastoreType().equals("kubernetes")) {
                Map<String, String> env = conf.kubeconfig() == null ? Map.of() : Map.of("KUBECONFIG", conf.kubeconfig());
                KubernetesConfig k = KubernetesConfig.fromEnvironment(env);
                return new DatastoreConfig(DatastoreConfig.Type.KUBERNETES, null, k.withClient(withShortRetries(k.client())))
                        .open();
            }
            if (conf.datastoreType().equals("apiserver")) {
                // The URL, CA and token are the daemon's CALICO_APISERVER_* variables, not network config fields.
                return DatastoreConfig.of(DatastoreConfig.Type.APISERVER, () -> null, System.getenv()).open();
            }
            return new DatastoreConfig(DatastoreConfig.Type.ETCDV3,
                    EtcdConfig.of(conf.etcdEndpoints().toArray(URI[]::new))).open();
        } catch (RuntimeException e) {
            throw new CniError(CniError.DATASTORE_FAILURE, "datastore: cannot open " + conf.datastoreType() + ": " + e.getMessage());
        }
    }

    /**
     * {@return the client configuration retrying a failed request at most twice} (100 and 200 ms):
     * the runtime retries a failed ADD itself, so an unreachable API server is answered "try again
     * later" within a second instead of after fabric8's default backoff (ten retries, about 19 s).
     */
    static Config withShortRetries(Config config) {
        return new ConfigBuilder(config).withRequestRetryBackoffLimit(2).build();
    }

    /** Unreachable is "try again later" (11); anything else is a datastore failure. */
    static CniError error(String what, DatastoreException e) {
        if (e instanceof DatastoreException.Unavailable) {
            return new CniError(CniError.TRY_AGAIN_LATER, what + ": datastore unavailable: " + e.getMessage());
        }
        return new CniError(CniError.DATASTORE_FAILURE, what + ": " + e.getMessage());
    }
}
