package calico.controllers.app;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.model.ObjectMeta;
import calico.api.net.IpAddress;
import calico.controlplane.ControlPlane;
import calico.controlplane.Repository;
import calico.controlplane.Settings;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Issue 24's heap benchmark: the whole application on a real control plane (Calico's CRDs, no controller
 * manager) holding {@code pods} pods with addresses from Calico IPAM on 10 nodes and {@code services}
 * LoadBalancer Services. Prints the heap the running controllers keep (heap used after full collections,
 * with the application settled, minus the same before it started) and how long the LoadBalancer addresses
 * took. {@code bench/run.sh controllers-service calico.controllers.app.ControllersHeapBench [pods] [services]}.
 */
public final class ControllersHeapBench {

    private ControllersHeapBench() {
    }

    public static void main(String[] args) throws Exception {
        int pods = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        int services = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        Path dir = Files.createTempDirectory("kc-heap-bench-");
        Settings settings = Settings.in(dir).withControllerManager(false).withScheduler(false);
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            settings = settings.withEtcdData(Files.createTempDirectory(shm, "kc-heap-bench-etcd-"));
        }
        try (ControlPlane cp = ControlPlane.start(settings)) {
            cp.apply(Repository.crds());
            Config config = Config.fromKubeconfig(Files.readString(cp.adminKubeconfig()));
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
                 KubernetesDatastore store = new KubernetesDatastore(KubernetesConfig.of(config))) {
                run(cp, client, store, pods, services);
            }
        }
    }

    private static void run(ControlPlane cp, KubernetesClient client, KubernetesDatastore store, int pods, int services) {
        IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
        store.create(new IPPool(ObjectMeta.named("kc-bench-pods"), new IPPoolSpec("10.60.0.0/16", null, null, null, null,
                null, 26, null, null, null, null)));
        store.create(new IPPool(ObjectMeta.named("kc-bench-lb"), new IPPoolSpec("10.61.0.0/20", null, null, null, null,
                null, 26, null, null, List.of(IPPoolSpec.AllowedUse.LoadBalancer), null)));
        store.create(new KubeControllersConfiguration(ObjectMeta.named("default"), new KubeControllersConfigurationSpec(
                null, null, null, 0, new KubeControllersConfigurationSpec.Controllers(
                new KubeControllersConfigurationSpec.NodeController(null, null, null, "1m"), null, null, null, null,
                new KubeControllersConfigurationSpec.LoadBalancerController(KubeControllersConfigurationSpec.AssignIPs.AllServices),
                null), null)));
        client.serviceAccounts().inNamespace("default").resource(new ServiceAccountBuilder().withNewMetadata()
                .withName("default").endMetadata().build()).create();
        for (int n = 0; n < 10; n++) {
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName("kc-bench-" + n).endMetadata().build())
                    .create();
        }
        Instant t0 = Instant.now();
        IntStream.range(0, pods).parallel().forEach(i -> {
            String node = "kc-bench-" + i % 10;
            IpAddress ip = ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.kc-bench-" + i, node, 1, 0, List.of(),
                    List.of(), Map.of("node", node, "namespace", "default", "pod", "kc-bench-" + i), IntendedUse.WORKLOAD))
                    .ipv4().get(0).address();
            client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("kc-bench-" + i)
                    .addToLabels("app", "a" + i % 50).addToAnnotations("cni.projectcalico.org/podIP", ip + "/32")
                    .endMetadata().withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("pause")
                    .endContainer().endSpec().build()).create();
        });
        IntStream.range(0, services).parallel().forEach(i -> client.services().inNamespace("default").resource(
                new ServiceBuilder().withNewMetadata().withName("kc-bench-" + i).endMetadata().withNewSpec()
                        .withType("LoadBalancer").addNewPort().withPort(80).endPort().withSelector(Map.of("app", "a" + i % 50))
                        .endSpec().build()).create());
        System.out.printf("%d pods (with addresses) and %d Services written in %s%n", pods, services,
                Duration.between(t0, Instant.now()));

        long before = usedHeapAfterGc();
        Instant started = Instant.now();
        try (ConfigurableApplicationContext app = TestApps.kubernetes(cp.adminKubeconfig(), "kc-bench",
                "--KUBE_CONTROLLERS_LEADER_ELECTION=false")) {
            ControllersDaemon daemon = app.getBean(ControllersDaemon.class);
            Await.until("every Service has its LoadBalancer address", Duration.ofMinutes(15), () -> client.services()
                    .inNamespace("default").list().getItems().stream().filter(s -> s.getMetadata().getName()
                            .startsWith("kc-bench-")).allMatch(s -> s.getStatus() != null && s.getStatus().getLoadBalancer()
                            != null && s.getStatus().getLoadBalancer().getIngress() != null
                            && !s.getStatus().getLoadBalancer().getIngress().isEmpty()));
            Duration allocated = Duration.between(started, Instant.now());
            Await.until("a node-controller run that saw every pod's address", Duration.ofMinutes(5), () -> {
                NodeControllers.Run r = daemon.lastNodeRun();
                return r != null && r.gc().stats().inUse().values().stream().mapToLong(Long::longValue).sum() >= pods;
            });
            long after = usedHeapAfterGc();
            System.out.printf("LoadBalancer addresses for %d Services %s after start; heap kept by the running controllers:"
                    + " %.1f MiB (used %.1f MiB before start, %.1f MiB after)%n", services, allocated,
                    (after - before) / 1048576.0, before / 1048576.0, after / 1048576.0);
        }
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
