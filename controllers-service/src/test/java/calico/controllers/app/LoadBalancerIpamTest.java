package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.model.ObjectMeta;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.controllers.loadbalancer.LoadBalancerIpam;
import calico.controllers.loadbalancer.ServiceView;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * LoadBalancer IPAM on a real control plane, the whole application with only the loadbalancer
 * controller: Services of type LoadBalancer get an address from the LoadBalancer pools (any, a pool
 * named in {@code projectcalico.org/ipv4pools}, the one in {@code projectcalico.org/loadBalancerIPs});
 * an address outside every LoadBalancer pool gets no address, a Warning event and the condition
 * {@code False}; the address goes back when the Service stops being a LoadBalancer or is deleted.
 */
class LoadBalancerIpamTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static void service(String name, Map<String, String> annotations) {
        KUBE.client().services().inNamespace("default").resource(new ServiceBuilder().withNewMetadata().withName(name)
                .withAnnotations(annotations).endMetadata().withNewSpec().withType("LoadBalancer").addNewPort()
                .withPort(80).endPort().withSelector(Map.of("app", name)).endSpec().build()).create();
    }

    private static Service get(String name) {
        return KUBE.client().services().inNamespace("default").withName(name).get();
    }

    private static Optional<String> ingress(String name) {
        return Optional.ofNullable(get(name)).flatMap(s -> ingressOf(s).stream().findFirst());
    }

    private static List<String> ingressOf(Service s) {
        return s.getStatus() == null || s.getStatus().getLoadBalancer() == null
                || s.getStatus().getLoadBalancer().getIngress() == null ? List.of()
                : s.getStatus().getLoadBalancer().getIngress().stream().map(LoadBalancerIngress::getIp).toList();
    }

    private static String conditionOf(Service s) {
        return s.getStatus() == null || s.getStatus().getConditions() == null ? null : s.getStatus().getConditions().stream()
                .filter(c -> LoadBalancerIpam.CONDITION.equals(c.getType())).map(Condition::getStatus).findFirst().orElse(null);
    }

    private static String handle(Service s) {
        return LoadBalancerIpam.handle(new ServiceView("default", s.getMetadata().getName(), s.getMetadata().getUid(), true,
                Map.of(), List.of(), List.of()));
    }

    @Test
    void servicesOfTypeLoadBalancerGetAddressesFromLoadBalancerPools() {
        try (KubernetesDatastore store = KUBE.datastore()) {
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            for (var pool : Map.of("lb-one", "10.90.0.0/27", "lb-two", "10.91.0.0/27").entrySet()) {
                store.create(new IPPool(ObjectMeta.named(pool.getKey()), new IPPoolSpec(pool.getValue(), null, null, null, null,
                        null, 29, null, null, List.of(IPPoolSpec.AllowedUse.LoadBalancer), null)));
            }
            store.create(new IPPool(ObjectMeta.named("workloads"), IPPoolSpec.ofCidr("10.92.0.0/24")));
            store.create(new KubeControllersConfiguration(ObjectMeta.named("default"), new KubeControllersConfigurationSpec(
                    null, null, null, 0, new KubeControllersConfigurationSpec.Controllers(null, null, null, null, null,
                    new KubeControllersConfigurationSpec.LoadBalancerController(KubeControllersConfigurationSpec.AssignIPs.AllServices),
                    null), null)));
            try (ConfigurableApplicationContext app = TestApps.kubernetes(KUBE.kubeconfig(), "lb",
                    "--KUBE_CONTROLLERS_LEADER_ELECTION=false")) {
                service("lb-any", Map.of());
                service("lb-pool", Map.of(LoadBalancerIpam.IPV4_POOLS, "[\"lb-two\"]"));
                service("lb-fixed", Map.of(LoadBalancerIpam.LOAD_BALANCER_IPS, "[\"10.90.0.20\"]"));
                service("lb-outside", Map.of(LoadBalancerIpam.LOAD_BALANCER_IPS, "[\"10.92.0.7\"]"));

                String any = Await.value("lb-any's address", WAIT, () -> ingress("lb-any"));
                IpAddress anyIp = IpAddress.parse(any);
                assertThat(Cidr.parse("10.90.0.0/27").contains(anyIp) || Cidr.parse("10.91.0.0/27").contains(anyIp)).isTrue();
                assertThat(ipam.addressesByHandle(handle(get("lb-any")))).containsExactly(anyIp);
                String pooled = Await.value("lb-pool's address", WAIT, () -> ingress("lb-pool"));
                assertThat(Cidr.parse("10.91.0.0/27").contains(IpAddress.parse(pooled))).isTrue();
                assertThat(Await.value("lb-fixed's address", WAIT, () -> ingress("lb-fixed"))).isEqualTo("10.90.0.20");

                Condition refused = Await.value("lb-outside refused", WAIT, () -> Optional.ofNullable(get("lb-outside")
                        .getStatus().getConditions()).flatMap(cs -> cs.stream()
                        .filter(c -> LoadBalancerIpam.CONDITION.equals(c.getType())).findFirst()));
                assertThat(refused.getStatus()).isEqualTo("False");
                assertThat(refused.getMessage()).contains("10.92.0.7").contains("outside every IP pool with allowedUses LoadBalancer");
                assertThat(ingress("lb-outside")).isEmpty();
                assertThat(ipam.addressesByHandle(handle(get("lb-outside")))).isEmpty();
                Await.until("a Warning event for lb-outside", WAIT, () -> KUBE.client().events().v1().events()
                        .inNamespace("default").list().getItems().stream().anyMatch(e -> "lb-outside".equals(
                                e.getRegarding().getName()) && "Warning".equals(e.getType())));

                // The refused Service asks for an address inside a pool: the address and the condition True come in
                // one status write (a watch never sees the address beside the stale False).
                List<Service> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
                long serviceLists = TestApps.clusterLists(KUBE, "services");
                try (var w = KUBE.client().services().inNamespace("default").withName("lb-outside").watch(
                        new io.fabric8.kubernetes.client.Watcher<Service>() {
                            @Override
                            public void eventReceived(Action action, Service s) {
                                seen.add(s);
                            }

                            @Override
                            public void onClose(io.fabric8.kubernetes.client.WatcherException e) {
                            }
                        })) {
                    KUBE.client().services().inNamespace("default").withName("lb-outside").edit(s -> new ServiceBuilder(s)
                            .editMetadata().addToAnnotations(LoadBalancerIpam.LOAD_BALANCER_IPS, "[\"10.90.0.21\"]")
                            .endMetadata().build());
                    Await.until("lb-outside allocated, condition True", WAIT, () -> seen.stream().anyMatch(x ->
                            ingressOf(x).contains("10.90.0.21") && "True".equals(conditionOf(x))));
                    assertThat(seen).as("no status with the address and the refusal").noneMatch(x ->
                            !ingressOf(x).isEmpty() && "False".equals(conditionOf(x)));
                    assertThat(TestApps.clusterLists(KUBE, "services") - serviceLists)
                            .as("the run read the informer's cache, not a LIST").isZero();
                }

                // Type changed: the address goes back. Deleted: the same.
                String anyHandle = handle(get("lb-any"));
                KUBE.client().services().inNamespace("default").withName("lb-any").edit(s -> new ServiceBuilder(s)
                        .editSpec().withType("ClusterIP").withAllocateLoadBalancerNodePorts(null).endSpec()
                        .editSpec().editFirstPort().withNodePort(null).endPort().endSpec().build());
                Await.until("lb-any's address released", WAIT, () -> ipam.addressesByHandle(anyHandle).isEmpty());
                String fixedHandle = handle(get("lb-fixed"));
                KUBE.client().services().inNamespace("default").withName("lb-fixed").delete();
                Await.until("lb-fixed's address released", WAIT, () -> ipam.addressesByHandle(fixedHandle).isEmpty());
                assertThat(ipam.addressesByHandle(handle(get("lb-pool")))).containsExactly(IpAddress.parse(pooled));
                assertThat(ipam.check().problems()).isEmpty();
            }
        }
    }
}
