package calico.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * One node's long-running services, as calico-node runs them: felix (kernel dataplane in the
 * node's namespace, {@code FELIX_DATAPLANENETNS}), confd and BIRD (with the {@code bird} backend:
 * confd renders BIRD's configuration from the datastore; BIRD runs inside the node's namespace,
 * where it speaks BGP on the underlay and programs the node's routes), and the CNI daemon
 * (host-side work in the node's namespace, {@code CALICO_CNI_NETNS}). The JVMs run in the
 * launcher's namespace, where the datastore, typha and goldmane listen on loopback; their ports
 * are the node's ({@link Ports#forNode}).
 */
final class NodeServices {

    /** A service of the node: its process, when it may start, and when it is ready. */
    record Service(DetachedProcess process, BooleanSupplier mayStart, BooleanSupplier ready) {
        String name() {
            return process.name();
        }
    }

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    private final Settings settings;
    private final Node node;
    private final Ports ports;
    private final Path dir;

    NodeServices(Settings settings, Node node) {
        this.settings = settings;
        this.node = node;
        this.ports = settings.ports().forNode(node.index());
        this.dir = settings.nodeDir(node);
    }

    Node node() {
        return node;
    }

    Ports ports() {
        return ports;
    }

    Path cniSocket() {
        return dir.resolve("cni.sock");
    }

    Path cniConf() {
        return dir.resolve("10-calico.conf");
    }

    Path birdSocket() {
        return dir.resolve("bird.ctl");
    }

    Path birdConfig() {
        return dir.resolve("bird.cfg");
    }

    /** {@return the services in start order} (BIRD only once confd installed its configuration). */
    List<Service> services() {
        List<Service> list = new ArrayList<>();
        list.add(new Service(felix(), () -> true, () -> http(ports.felixHealth(), "/readiness")));
        list.add(new Service(javaProcess("cni", settings.jar("cni-plugin", "cni-plugin.jar"),
                Map.of("CALICO_CNI_NETNS", node.namespace(), "CALICO_CNI_HTTP_PORT", Integer.toString(ports.cniHttp())),
                "daemon", cniSocket().toString()),
                () -> true, () -> Files.exists(cniSocket()) && http(ports.cniHttp(), "/ipam/v1/usage")));
        if (settings.encapsulation().bgp()) {
            list.add(new Service(confd(), () -> true, () -> http(ports.confdHealth(), "/readiness")));
            // -R: graceful restart recovery, as calico-node's runit starts BIRD: a restarted BIRD keeps the
            // kernel's routes until its BGP sessions are back (without it, a crash withdraws them for seconds).
            list.add(new Service(process("bird", node.namespace(), List.of("bird", "-R", "-f", "-c", birdConfig().toString(),
                    "-s", birdSocket().toString(), "-P", dir.resolve("bird.pid").toString()), Map.of()),
                    () -> Files.exists(birdConfig()), this::birdAnswers));
        }
        return list;
    }

    private DetachedProcess felix() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("FELIX_DATAPLANEDRIVERNAME", "kernel");
        env.put("FELIX_DATAPLANENETNS", node.namespace());
        env.put("FELIX_FELIXHOSTNAME", node.name());
        env.put("FELIX_TYPHAADDR", settings.typha());
        env.put("FELIX_FLOWLOGSGOLDMANESERVER", settings.goldmane());
        env.put("FELIX_HEALTHPORT", Integer.toString(ports.felixHealth()));
        env.put("FELIX_ADMINPORT", Integer.toString(ports.felixAdmin()));
        env.put("FELIX_PROMETHEUSMETRICSPORT", Integer.toString(ports.felixMetrics()));
        // Each node's endpoint status files in its own directory: the felixes share this machine's
        // filesystem, and in Calico's /var/run/calico each would delete the others' files as stale.
        env.put("FELIX_ENDPOINTSTATUSPATHPREFIX", dir.toString());
        if (settings.dataplane().equals("nftables")) {
            env.put("FELIX_NFTABLESMODE", "Enabled");
        } else {
            env.put("FELIX_NFTABLESMODE", "Disabled");
            env.put("FELIX_IPTABLESBACKEND", "NFT");
        }
        if (settings.wireguard()) {
            env.put("FELIX_WIREGUARDENABLED", "true");
        }
        return javaProcess("felix", settings.jar("felix-service", "felix-service-exec.jar"), env);
    }

    private DetachedProcess confd() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("NODENAME", node.name());
        env.put("CALICO_NETWORKING_BACKEND", settings.encapsulation().backend());
        env.put("CALICO_BIRD_SOCKET", birdSocket().toString());
        env.put("CALICO_BIRD_CONFIG", birdConfig().toString());
        // Through typha's bgp syncer, as calico-node's confd does when typha runs.
        env.put("CONFD_TYPHAADDR", settings.typha());
        env.put("CONFD_HEALTHHOST", "127.0.0.1");
        env.put("CONFD_HEALTHPORT", Integer.toString(ports.confdHealth()));
        env.put("CONFD_ADMINHOST", "127.0.0.1");
        env.put("CONFD_ADMINPORT", Integer.toString(ports.confdAdmin()));
        return javaProcess("confd", settings.jar("confd-service", "confd-service-exec.jar"), env);
    }

    private DetachedProcess process(String service, String netns, List<String> command, Map<String, String> env) {
        return new DetachedProcess(service + "-" + node.name(), netns, command, env, settings.runDir());
    }

    /** A JVM of the node: its jar as the flags file says (options, class archive), the file's {@code env} line added. */
    private DetachedProcess javaProcess(String service, Path jar, Map<String, String> env, String... args) {
        Map<String, String> all = new LinkedHashMap<>(env);
        all.putAll(settings.jvmFlags().environment());
        return new DetachedProcess(service + "-" + node.name(), null, () -> settings.jvmFlags().javaJar(service, jar, all, args), all,
                settings.runDir());
    }

    /**
     * Writes the node's CNI network configuration (what a kubelet's {@code /etc/cni/net.d} holds),
     * for the datastore named by {@code DATASTORE_TYPE} in {@code environment}.
     */
    void writeCniConf(Map<String, String> environment) {
        String type = environment.getOrDefault("DATASTORE_TYPE", "etcdv3");
        String datastore = switch (type) {
            case "kubernetes" -> "\"datastore_type\": \"kubernetes\"";
            // The daemon reaches the apiserver with its own CALICO_APISERVER_* environment.
            case "apiserver" -> "\"datastore_type\": \"apiserver\"";
            default -> "\"datastore_type\": \"etcdv3\", \"etcd_endpoints\": \""
                    + environment.getOrDefault("ETCD_ENDPOINTS", "http://127.0.0.1:2379") + "\"";
        };
        String conf = "{\"cniVersion\": \"1.0.0\", \"name\": \"k8s-pod-network\", \"type\": \"calico\",\n"
                + " " + datastore + ", \"nodename\": \"" + node.name() + "\", \"mtu\": 1500,\n"
                + " \"ipam\": {\"type\": \"calico-ipam\", \"assign_ipv4\": \"true\", \"ipv4_pools\": [\"" + settings.poolCidr() + "\"]},\n"
                + " \"policy\": {\"type\": \"k8s\"}, \"kubernetes\": {\"kubeconfig\": \"" + settings.kubeconfig() + "\"}}\n";
        try {
            Files.createDirectories(dir);
            Files.writeString(cniConf(), conf, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + cniConf(), e);
        }
    }

    /** {@return the environment of calico-node's start-up for this node} (added to the datastore's). */
    Map<String, String> startupEnvironment() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOSTNAME", "");
        env.put("NODENAME", node.name());
        env.put("CALICO_NODE_NETNS", node.namespace());
        env.put("IP_AUTODETECTION_METHOD", "interface=" + Node.UPLINK);
        env.put("CALICO_NETWORKING_BACKEND", settings.encapsulation().backend());
        env.put("CALICO_IPV4POOL_CIDR", settings.poolCidr());
        env.put("CALICO_IPV4POOL_VXLAN", settings.encapsulation().vxlanMode());
        env.put("CALICO_IPV4POOL_IPIP", settings.encapsulation().ipipMode());
        env.put("CALICO_IPV6POOL_CIDR", "none");
        // Each node's own file: the machine's /var/lib/calico/nodename would be every node's at once.
        env.put("CALICO_NODENAME_FILE", dir.resolve("nodename").toString());
        return env;
    }

    /** Prints how to reach this node's services. */
    void info(PrintStream out) {
        out.printf("%s (network namespace %s, %s on the underlay):%n", node.name(), node.namespace(), node.cidr());
        out.printf("  felix:  curl http://127.0.0.1:%d/readiness; admin API curl http://127.0.0.1:%d/felix/v1/endpoints%n",
                ports.felixHealth(), ports.felixAdmin());
        if (settings.encapsulation().bgp()) {
            out.printf("  confd:  curl http://127.0.0.1:%d/peers; BIRD: birdc -s %s show protocols%n", ports.confdAdmin(), birdSocket());
        }
        out.printf("  CNI:    socket %s, config %s, IPAM usage curl http://127.0.0.1:%d/ipam/v1/usage%n",
                cniSocket(), cniConf(), ports.cniHttp());
        out.printf("  routes: ip -n %s route; rules: ip netns exec %s %s%n", node.namespace(), node.namespace(),
                settings.dataplane().equals("nftables") ? "nft list table inet calico" : "iptables-save -t filter");
    }

    static boolean http(int port, String path) {
        try {
            HttpResponse<Void> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(3)).GET().build(), HttpResponse.BodyHandlers.discarding());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** BIRD greets on its control socket ({@code 0001 BIRD ... ready.}) once it runs. */
    private boolean birdAnswers() {
        if (!Files.exists(birdSocket())) {
            return false;
        }
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(birdSocket()));
            ByteBuffer buf = ByteBuffer.allocate(256);
            ch.read(buf);
            return new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).startsWith("0001");
        } catch (IOException e) {
            return false;
        }
    }
}
