package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.IPAMHandle;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Issue 24's soak on a real control plane: {@value #DEFAULT_PODS} pods (system property
 * {@code soak.pods}) get addresses as Calico's CNI gives them (handle, attributes, the pod's
 * {@code cni.projectcalico.org/podIP} annotation); the controllers run while most pods are deleted, a
 * tenth of them without their CNI DEL (the address leaks). After GC no leaked address remains and no
 * live pod lost its address.
 */
class IpamGcSoakIT {

    static final int DEFAULT_PODS = 1000;

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension();

    @Test
    void afterGcNoLeakRemainsAndNoLivePodLostItsAddress() {
        int pods = Integer.getInteger("soak.pods", DEFAULT_PODS);
        try (KubernetesDatastore store = KUBE.datastore()) {
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            store.create(new IPPool(ObjectMeta.named("soak-pool"), new IPPoolSpec("10.80.0.0/20", null, null, null, null,
                    null, 26, null, null, null, null)));
            store.create(new KubeControllersConfiguration(ObjectMeta.named("default"), new KubeControllersConfigurationSpec(
                    null, null, null, 0, new KubeControllersConfigurationSpec.Controllers(
                    new KubeControllersConfigurationSpec.NodeController(null, null, null, "2s"),
                    null, null, null, null, null, null), null)));
            for (String n : List.of("soak-1", "soak-2")) {
                KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(n).endMetadata().build()).create();
            }
            Map<Integer, IpAddress> ips = new ConcurrentHashMap<>();
            Instant t0 = Instant.now();
            try (ConfigurableApplicationContext app = TestApps.kubernetes(KUBE.kubeconfig(), "soak",
                    "--KUBE_CONTROLLERS_LEADER_ELECTION=false")) {
                IntStream.range(0, pods).parallel().forEach(i -> {
                    String node = i % 2 == 0 ? "soak-1" : "soak-2";
                    IpAddress ip = ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.soak-" + i, node, 1, 0,
                            List.of(), List.of(), Map.of("node", node, "namespace", "default", "pod", "soak-" + i),
                            IntendedUse.WORKLOAD)).ipv4().get(0).address();
                    ips.put(i, ip);
                    KUBE.client().pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
                            .withName("soak-" + i).addToAnnotations("cni.projectcalico.org/podIP", ip + "/32").endMetadata()
                            .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("pause").endContainer()
                            .endSpec().build()).create();
                });
                Instant created = Instant.now();
                // Four in five pods go; one in ten of those goes without its CNI DEL.
                Set<Integer> deleted = IntStream.range(0, pods).filter(i -> i % 5 != 0).boxed().collect(Collectors.toSet());
                Set<Integer> leaked = deleted.stream().filter(i -> i % 10 == 1).collect(Collectors.toSet());
                deleted.parallelStream().forEach(i -> {
                    KUBE.client().pods().inNamespace("default").withName("soak-" + i).withGracePeriod(0).delete();
                    if (!leaked.contains(i)) {
                        ipam.releaseByHandle("k8s-pod-network.soak-" + i);
                    }
                });
                Instant gone = Instant.now();
                Await.until("every leaked address released", Duration.ofMinutes(3), () -> leaked.stream()
                        .allMatch(i -> ipam.addressesByHandle("k8s-pod-network.soak-" + i).isEmpty()));
                Instant collected = Instant.now();
                Set<String> handles = store.list(ResourceKind.IPAM_HANDLE).items().stream()
                        .map(r -> ((IPAMHandle) r).spec().handleID()).collect(Collectors.toSet());
                Set<String> livePods = IntStream.range(0, pods).filter(i -> !deleted.contains(i))
                        .mapToObj(i -> "k8s-pod-network.soak-" + i).collect(Collectors.toSet());
                assertThat(handles).as("only live pods hold addresses").isEqualTo(livePods);
                for (int i = 0; i < pods; i++) {
                    if (!deleted.contains(i)) {
                        assertThat(ipam.addressesByHandle("k8s-pod-network.soak-" + i)).containsExactly(ips.get(i));
                    }
                }
                assertThat(ipam.check().problems()).isEmpty();
                System.out.printf("soak: %d pods created in %s, %d deleted (%d without CNI DEL) in %s, collected %s later%n",
                        pods, Duration.between(t0, created), deleted.size(), leaked.size(), Duration.between(created, gone),
                        Duration.between(gone, collected));
            } finally {
                KUBE.client().pods().inNamespace("default").withGracePeriod(0).delete();
            }
        }
    }
}
