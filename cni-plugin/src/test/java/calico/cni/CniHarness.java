package calico.cni;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.cni.plugin.CalicoCni;
import calico.cni.plugin.DatastoreCache;
import calico.cni.plugin.WorkloadNetwork;
import calico.cni.spec.CniRequest;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.kubernetes.Kubeconfigs;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A "node" for CNI tests: a network namespace standing in for the host (the plugin runs inside
 * it, so host-side veths and routes never touch the machine), pods as further namespaces, and a
 * plugin talking to a real etcd. Everything it creates is deleted on {@link #close()}.
 */
final class CniHarness implements AutoCloseable {
    static final String PREFIX = "cni-t";
    static final String NODE = "cni-node-1";
    static final String CNI_PATH = "/usr/lib/cni";

    final ObjectMapper json = new ObjectMapper();
    final NetNs host;
    final URI etcd;
    final Datastore store;
    final DatastoreCache datastores = new DatastoreCache();
    final CalicoCni cni;
    private final List<NetNs> pods = new ArrayList<>();

    CniHarness(URI etcd) {
        this(etcd, null);
    }

    /**
     * A node whose test-side datastore is {@code store} (e.g. the kubernetes datastore over a test
     * API server) instead of one opened on {@code etcd}; {@code etcd} may then be null. The
     * harness closes {@code store}.
     */
    CniHarness(URI etcd, Datastore store) {
        this(etcd, store, NetNs.create(PREFIX + "h"));
    }

    /** The same in {@code host}, a namespace the caller made (the harness deletes it). */
    CniHarness(URI etcd, Datastore store, NetNs host) {
        this.etcd = etcd;
        this.host = host;
        host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
        // As felix does at start on a node with IPv6: the kernel forwards IPv6 only with the
        // global switch on (a veth's own forwarding flag is not enough).
        host.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
        // A default route out of another interface, as a real host has: proxy ARP answers for
        // 169.254.1.1 only when the host has a unicast route to it that leaves by another link.
        host.exec("ip", "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink1");
        host.exec("ip", "link", "set", "uplink0", "up");
        host.exec("ip", "link", "set", "uplink1", "up");
        host.exec("ip", "route", "add", "default", "dev", "uplink0");
        this.store = store != null ? store : new DatastoreConfig(DatastoreConfig.Type.ETCDV3, EtcdConfig.of(etcd)).open();
        // Trap: gRPC's shared event-loop threads live in the namespace of the thread that first
        // needs them, and the plugin runs on threads inside the host namespace, whose 127.0.0.1
        // is not etcd's. Touch etcd from this (root-namespace) thread first.
        this.store.list(calico.api.model.ResourceKind.IP_POOL);
        this.cni = new CalicoCni(json, NODE, datastores, new WorkloadNetwork());
    }

    void pool(String name, String cidr, int blockSize) {
        store.create(new IPPool(ObjectMeta.named(name),
                new IPPoolSpec(cidr, null, null, null, null, null, blockSize, null, null, null, null)));
    }

    NetNs pod() {
        NetNs p = NetNs.create(PREFIX + "p");
        synchronized (pods) {
            pods.add(p);
        }
        return p;
    }

    static String netns(NetNs pod) {
        return "/run/netns/" + pod.name();
    }

    /** Calico's configuration with calico-ipam from the given pools. */
    String calicoConf(String version, String pool) {
        return """
                {"cniVersion":"%s","name":"k8s-pod-network","type":"calico","datastore_type":"etcdv3",
                 "etcd_endpoints":"%s","nodename":"%s","mtu":1440,"log_level":"info",
                 "ipam":{"type":"calico-ipam","assign_ipv4":"true","ipv4_pools":["%s"]},
                 "policy":{"type":"k8s"}}""".formatted(version, etcd, NODE, pool);
    }

    static Map<String, String> env(String command, String containerId, String netns, String ns, String pod) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", command);
        env.put("CNI_CONTAINERID", containerId);
        if (netns != null) {
            env.put("CNI_NETNS", netns);
        }
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", CNI_PATH);
        if (pod != null) {
            env.put("CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=" + ns + ";K8S_POD_NAME=" + pod
                    + ";K8S_POD_INFRA_CONTAINER_ID=" + containerId);
        }
        return env;
    }

    /** Runs the plugin in-process inside the host namespace. */
    CniResponse call(Map<String, String> env, String conf) {
        return host.call(() -> cni.handle(new CniRequest(env, conf.getBytes(StandardCharsets.UTF_8))));
    }

    JsonNode parse(CniResponse r) {
        try {
            return json.readTree(r.stdout());
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + r.stdout(), e);
        }
    }

    /**
     * Writes a kubeconfig for a plain-HTTP test API server on loopback {@code port} into
     * {@code dir} and {@return the network config {@code conf} naming it} ({@code kubernetes.kubeconfig}).
     */
    static String withKubeconfig(String conf, Path dir, int port) throws IOException {
        Path kubeconfig = Kubeconfigs.write(dir, "http://127.0.0.1:" + port);
        return conf.substring(0, conf.lastIndexOf('}')) + ",\"kubernetes\":{\"kubeconfig\":\"" + kubeconfig + "\"}}";
    }

    static String containerId() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    /** Names of the host namespace's links that start with {@code cali}. */
    List<String> caliLinks() {
        List<String> out = new ArrayList<>();
        for (String line : host.exec("ip", "-o", "link", "show").split("\n")) {
            String[] f = line.split(":\\s+");
            if (f.length > 1 && f[1].startsWith("cali")) {
                out.add(f[1].replaceAll("@.*", ""));
            }
        }
        return out;
    }

    /** {@return this machine's namespaces left from CNI tests} (for an after-all check). */
    static List<String> leftoverNamespaces() {
        try (var names = java.nio.file.Files.list(java.nio.file.Path.of("/run/netns"))) {
            return names.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(PREFIX)).toList();
        } catch (java.io.IOException e) {
            return List.of();
        }
    }

    @Override
    public void close() {
        synchronized (pods) {
            pods.forEach(NetNs::close);
        }
        host.close();
        datastores.close();
        store.close();
    }
}
