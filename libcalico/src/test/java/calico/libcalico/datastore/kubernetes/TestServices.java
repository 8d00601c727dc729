package calico.libcalico.datastore.kubernetes;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.Map;

/** Kubernetes Services for tests of the kubernetes datastore and of what reads them (shipped in the test-jar). */
public final class TestServices {

    private TestServices() {
    }

    /**
     * A dual-stack LoadBalancer Service labelled {@code app=<name>}: cluster IPs {@code clusterIp}
     * and {@code fd00:96::10}, external IP 192.0.2.10, ingress IP 198.51.100.10, port {@code http}
     * TCP {@code port} with NodePort 30080 and port {@code dns} UDP 53.
     */
    public static Service service(String name, String clusterIp, int port) {
        return new ServiceBuilder().withNewMetadata().withName(name).withLabels(Map.of("app", name)).endMetadata()
                .withNewSpec().withType("LoadBalancer").withClusterIP(clusterIp)
                .withClusterIPs(clusterIp, "fd00:96::10").withExternalIPs("192.0.2.10")
                .addNewPort().withName("http").withProtocol("TCP").withPort(port).withNodePort(30080).endPort()
                .addNewPort().withName("dns").withProtocol("UDP").withPort(53).endPort()
                .endSpec().withNewStatus().withNewLoadBalancer().addNewIngress().withIp("198.51.100.10").endIngress()
                .endLoadBalancer().endStatus().build();
    }
}
