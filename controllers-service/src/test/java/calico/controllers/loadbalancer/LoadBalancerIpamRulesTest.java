package calico.controllers.loadbalancer;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.KubeControllersConfigurationSpec.AssignIPs;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which Services LoadBalancer IPAM manages, and Calico's handle of their addresses. */
class LoadBalancerIpamRulesTest {

    private static ServiceView service(boolean loadBalancer, Map<String, String> annotations) {
        return new ServiceView("ns", "web", "0b7e4c2a-1f3d-4c5e-9a8b-7c6d5e4f3a2b", loadBalancer, annotations, List.of("IPv4"),
                List.of());
    }

    @Test
    void requestedServicesOnlyNeedsOneOfCalicosAnnotations() {
        assertThat(LoadBalancerIpam.managed(service(true, Map.of()), AssignIPs.AllServices)).isTrue();
        assertThat(LoadBalancerIpam.managed(service(true, Map.of()), AssignIPs.RequestedServicesOnly)).isFalse();
        for (String a : List.of(LoadBalancerIpam.IPV4_POOLS, LoadBalancerIpam.IPV6_POOLS, LoadBalancerIpam.LOAD_BALANCER_IPS)) {
            assertThat(LoadBalancerIpam.managed(service(true, Map.of(a, "[]")), AssignIPs.RequestedServicesOnly)).as(a).isTrue();
        }
        assertThat(LoadBalancerIpam.managed(service(false, Map.of(LoadBalancerIpam.IPV4_POOLS, "[\"p\"]")),
                AssignIPs.AllServices)).as("not a LoadBalancer").isFalse();
    }

    @Test
    void theHandleIsCalicosLbHashOfNameNamespaceAndUid() throws Exception {
        String h = LoadBalancerIpam.handle(service(true, Map.of()));
        // Calico's recipe, spelled out: "lb-" + URL-safe base64 (no padding) of SHA-256("<name>-<namespace>-<uid>"),
        // without '-', '_' and '.'.
        byte[] sha = java.security.MessageDigest.getInstance("SHA-256")
                .digest("web-ns-0b7e4c2a-1f3d-4c5e-9a8b-7c6d5e4f3a2b".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(h).isEqualTo("lb-" + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(sha)
                .replace("-", "").replace("_", ""));
        assertThat(h.substring(3)).matches("[A-Za-z0-9]+");
        assertThat(LoadBalancerIpam.handle(service(true, Map.of("x", "y")))).as("annotations do not matter").isEqualTo(h);
        assertThat(LoadBalancerIpam.handle(new ServiceView("ns", "web", "other-uid", true, Map.of(), List.of(), List.of())))
                .as("a new Service of the same name gets a new handle").isNotEqualTo(h);
    }
}
