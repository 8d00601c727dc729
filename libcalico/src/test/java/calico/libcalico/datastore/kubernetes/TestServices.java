package calico.libcalico.datastore.kubernetes;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
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

    /**
     * An IPv4 EndpointSlice {@code name} of Service {@code service} (its
     * {@code kubernetes.io/service-name} label): one endpoint per address (the first ready, the
     * others not: Calico matches them all), port {@code http} TCP {@code port} and an unnamed UDP
     * port 53.
     */
    public static EndpointSlice endpointSlice(String name, String service, int port, String... addresses) {
        EndpointSliceBuilder b = new EndpointSliceBuilder().withNewMetadata().withName(name)
                .withLabels(Map.of("kubernetes.io/service-name", service)).endMetadata().withAddressType("IPv4");
        for (int i = 0; i < addresses.length; i++) {
            b.addNewEndpoint().withAddresses(addresses[i]).withNewConditions().withReady(i == 0).endConditions()
                    .endEndpoint();
        }
        return b.addNewPort().withName("http").withProtocol("TCP").withPort(port).endPort()
                .addNewPort().withProtocol("UDP").withPort(53).endPort().build();
    }
}
