package calico.node.startup.app;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.node.startup.autodetect.AddressDetector;
import calico.node.startup.autodetect.KubernetesNodes;
import calico.node.startup.autodetect.NetlinkHostInterfaces;
import calico.node.startup.steps.NodeStartup;
import io.fabric8.kubernetes.client.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@code calico-node -startup}: a one-shot application (no web server) that runs {@link NodeStartup}
 * once against the datastore, leaves the node's name in {@link NodenameFile} and exits 0, or exits 1 with one line saying what is wrong (the setting
 * and its variable, or the step that failed). Run it before felix and confd, in the node's network
 * namespace (autodetection reads that namespace's interfaces).
 */
@SpringBootApplication
@EnableConfigurationProperties(StartupProperties.class)
public class NodeStartupApplication {

    private static final Logger LOG = LoggerFactory.getLogger(NodeStartupApplication.class);

    /** The first argument that runs the tunnel address daemon instead of start-up (Calico's flag's name). */
    public static final String ALLOCATE_TUNNEL_ADDRS = "allocate-tunnel-addrs";
    /** As calico-node's allocator: a full reconcile this often even when nothing was heard. */
    private static final Duration RESYNC = Duration.ofMinutes(5);
    private static final Duration RETRY = Duration.ofSeconds(5);

    /** The shared datastore settings under {@code node.*}, from Calico's generic variables. */
    static final DatastoreProperties.Source DATASTORE = DatastoreProperties.Source.of("node", "");

    @Bean
    DatastoreProperties nodeDatastore(Environment environment) {
        return DatastoreProperties.bind(environment, DATASTORE);
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /**
     * {@return the exit code} of one start-up with {@code args} (Spring properties, {@code --NAME=value}),
     * or, when the first argument is {@value #ALLOCATE_TUNNEL_ADDRS}, of the tunnel address daemon
     * (which returns only when its thread is interrupted, or fails at once on bad settings).
     */
    public static int run(String... args) {
        boolean daemon = args.length > 0 && args[0].equals(ALLOCATE_TUNNEL_ADDRS);
        String[] springArgs = daemon ? Arrays.copyOfRange(args, 1, args.length) : args;
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(NodeStartupApplication.class)
                .web(WebApplicationType.NONE).logStartupInfo(false).run(springArgs)) {
            StartupProperties props = ctx.getBean(StartupProperties.class);
            DatastoreProperties ds = ctx.getBean(DatastoreProperties.class);
            if (daemon) {
                return allocateTunnelAddrs(props, ds);
            }
            NodeStartup.Result r = startUp(props, ds);
            if (NodenameFile.write(Path.of(props.nodenameFile()), r.node().metadata().name())) {
                LOG.info("wrote the node's name to {}", props.nodenameFile());
            }
            LOG.info("calico-node start-up done for node {}: {}", r.node().metadata().name(),
                    r.changes().isEmpty() ? "nothing to change" : r.changes().size() + " change(s)");
            return 0;
        } catch (RuntimeException e) {
            String reason = rootMessage(e);
            LOG.error("calico-node start-up failed: {}", reason);
            System.err.println("calico-node start-up failed: " + reason);
            return 1;
        }
    }

    /**
     * {@code calico-node -allocate-tunnel-addrs}: {@link TunnelAddressDaemon} until interrupted; the
     * Node must exist (start-up ran first).
     */
    static int allocateTunnelAddrs(StartupProperties props, DatastoreProperties ds) {
        NodeStartup.Settings settings = props.toSettings(ds.type() == DatastoreConfig.Type.KUBERNETES);
        try (Datastore datastore = ds.toConfig().open()) {
            NodeStartup startup = new NodeStartup(datastore, new AddressDetector(List::of, KubernetesNodes.NONE));
            new TunnelAddressDaemon(datastore, startup, settings.node().nodeName(),
                    settings.node().wireguardHostEncryption(), RESYNC, RETRY).run();
        } catch (InterruptedException stopped) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** One start-up with bound settings, in this thread's network namespace. */
    static NodeStartup.Result startUp(StartupProperties props, DatastoreProperties ds) {
        boolean kdd = ds.type() == DatastoreConfig.Type.KUBERNETES;
        NodeStartup.Settings settings = props.toSettings(kdd);
        boolean ipv6Kernel = Files.isDirectory(Path.of("/proc/sys/net/ipv6"));
        settings = new NodeStartup.Settings(settings.node(), settings.ipv4Pool(), settings.ipv6Pool(),
                settings.ipv6Supported() && ipv6Kernel, settings.cluster());
        boolean onKubernetes = kdd || !ds.kubeconfig().isEmpty() || !ds.k8sApiEndpoint().isEmpty()
                || System.getenv("KUBERNETES_SERVICE_HOST") != null;
        Supplier<Optional<Config>> kubernetes = () -> onKubernetes ? Optional.of(ds.kubernetesClientConfig())
                : Optional.empty();
        AddressDetector detector = new AddressDetector(
                new NetlinkHostInterfaces(props.netns().isEmpty() ? Optional.empty() : Optional.of(props.netns())),
                new FabricKubernetesNodes(kubernetes));
        Datastore datastore = ds.toConfig().open();
        try {
            if (props.waitsForDatastore()) {
                awaitDatastore(datastore, props.nodename(), Duration.ofSeconds(1));
            }
            return new NodeStartup(datastore, detector, new FabricKubeadmConfig(kubernetes)).run(settings);
        } finally {
            datastore.close();
        }
    }

    /**
     * {@code WAIT_FOR_DATASTORE=true}, as calico-node: reads this node's Node until the datastore
     * answers (found or not), retrying every {@code every} for as long as it is unavailable (no
     * deadline: the kubelet's start-up probe is the limit); other failures end the wait at once.
     */
    static void awaitDatastore(Datastore datastore, String nodeName, Duration every) {
        for (int attempt = 1; ; attempt++) {
            try {
                datastore.get(ResourceKey.of(ResourceKind.NODE, nodeName));
                if (attempt > 1) {
                    LOG.info("Datastore reachable after {} attempts", attempt);
                }
                return;
            } catch (DatastoreException.Unavailable e) {
                if (attempt == 1 || attempt % 10 == 0) {
                    LOG.warn("Waiting for the datastore (WAIT_FOR_DATASTORE=true), attempt {}: {}", attempt, e.getMessage());
                }
                try {
                    Thread.sleep(every.toMillis());
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for the datastore", ie);
                }
            }
        }
    }

    /** The innermost message: Spring's binding wrappers hide the setting's own. */
    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }
}
