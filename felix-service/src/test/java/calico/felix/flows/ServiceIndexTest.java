package calico.felix.flows;

import static calico.felix.flows.FlowAggregatorTest.ip;
import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.calc.DataplaneUpdate.ServiceLookupUpdate;
import calico.felix.calc.DataplaneUpdate.ServicePortLookup;
import calico.felix.flows.ServiceIndex.ServiceName;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pre-DNAT destination → Kubernetes Service index, as Calico's service lookups cache answers. */
class ServiceIndexTest {

    static final int TCP = 6;
    static final int UDP = 17;

    final ServiceIndex index = new ServiceIndex();

    static ServiceLookupUpdate svc(String ns, String name, List<String> ips, ServicePortLookup... ports) {
        return new ServiceLookupUpdate("KubernetesService/" + ns + "/" + name, ns, name, ips, List.of(ports));
    }

    /** shop/api: cluster IPs 10.96.0.10 and fd00:96::10, external 192.0.2.10, LB 198.51.100.10. */
    static ServiceLookupUpdate api(ServicePortLookup... ports) {
        return svc("shop", "api", List.of("10.96.0.10", "fd00:96::10", "192.0.2.10", "198.51.100.10"), ports);
    }

    ServiceName at(String ip, int port, int proto) {
        return index.lookup(ip(ip), port, proto);
    }

    @Test
    void everyAddressTimesEveryPortNamesTheServiceAndThePort() {
        index.apply(api(new ServicePortLookup("http", TCP, 80, 0), new ServicePortLookup("dns", UDP, 53, 0)));

        ServiceName http = new ServiceName("shop", "api", "http");
        assertThat(at("10.96.0.10", 80, TCP)).as("cluster IP").isEqualTo(http);
        assertThat(at("fd00:96::10", 80, TCP)).as("second cluster IP (dual stack)").isEqualTo(http);
        assertThat(at("192.0.2.10", 80, TCP)).as("external IP").isEqualTo(http);
        assertThat(at("198.51.100.10", 80, TCP)).as("load-balancer ingress IP").isEqualTo(http);
        assertThat(at("10.96.0.10", 53, UDP)).isEqualTo(new ServiceName("shop", "api", "dns"));
        assertThat(at("10.96.0.10", 53, TCP)).as("protocol mismatch").isNull();
        assertThat(at("10.96.0.10", 80, UDP)).as("protocol mismatch").isNull();
        assertThat(at("10.96.0.10", 8080, TCP)).as("port not in the service").isNull();
        assertThat(at("10.96.0.11", 80, TCP)).as("another address").isNull();
        assertThat(index.keys()).isEqualTo(8);
    }

    @Test
    void anUnnamedPortHasAnEmptyPortName() {
        index.apply(svc("shop", "web", List.of("10.96.0.20"), new ServicePortLookup("", TCP, 8080, 0)));
        assertThat(at("10.96.0.20", 8080, TCP)).isEqualTo(new ServiceName("shop", "web", ""));
    }

    @Test
    void aNodePortAnswersOnAnyAddressWithItsProtocolAfterTheAddressesAreTried() {
        index.apply(api(new ServicePortLookup("http", TCP, 80, 30080)));
        assertThat(at("192.168.1.5", 30080, TCP)).as("a node's address").isEqualTo(new ServiceName("shop", "api", "http"));
        assertThat(at("10.96.0.10", 30080, TCP)).isEqualTo(new ServiceName("shop", "api", "http"));
        assertThat(at("192.168.1.5", 30080, UDP)).as("protocol mismatch").isNull();
        assertThat(at("192.168.1.5", 80, TCP)).as("the service port is no NodePort").isNull();
    }

    @Test
    void keysSharedBySeveralServicesOrPortsNameWhatTheyAgreeOnAndStarTheRest() {
        index.apply(svc("shop", "a", List.of("10.96.0.30"), new ServicePortLookup("web", TCP, 80, 30001)));
        index.apply(svc("shop", "b", List.of("10.96.0.30"), new ServicePortLookup("web", TCP, 80, 30001)));
        assertThat(at("10.96.0.30", 80, TCP)).isEqualTo(new ServiceName("shop", "*", "web"));
        assertThat(at("1.2.3.4", 30001, TCP)).isEqualTo(new ServiceName("shop", "*", "web"));
        // One service, two port entries landing on the same key with different names.
        index.apply(svc("dev", "c", List.of("10.96.0.31"), new ServicePortLookup("x", TCP, 81, 0),
                new ServicePortLookup("y", TCP, 81, 0)));
        assertThat(at("10.96.0.31", 81, TCP)).isEqualTo(new ServiceName("dev", "c", "*"));
        // Once b goes, a answers alone again.
        index.remove("KubernetesService/shop/b");
        assertThat(at("10.96.0.30", 80, TCP)).isEqualTo(new ServiceName("shop", "a", "web"));
    }

    @Test
    void anUpdateReplacesEveryKeyAndADeleteLeavesNothingBehind() {
        index.apply(api(new ServicePortLookup("http", TCP, 80, 30080)));
        index.apply(svc("shop", "api", List.of("10.96.0.12"), new ServicePortLookup("https", TCP, 443, 0)));
        assertThat(at("10.96.0.10", 80, TCP)).as("old address and port gone").isNull();
        assertThat(at("1.2.3.4", 30080, TCP)).as("old NodePort gone").isNull();
        assertThat(at("10.96.0.12", 443, TCP)).isEqualTo(new ServiceName("shop", "api", "https"));
        assertThat(index.keys()).isEqualTo(1);
        index.apply(svc("shop", "api", List.of("10.96.0.12"), new ServicePortLookup("https", TCP, 443, 0)));
        assertThat(index.keys()).as("re-sending the same service changes nothing").isEqualTo(1);

        index.remove("KubernetesService/shop/api");
        assertThat(at("10.96.0.12", 443, TCP)).isNull();
        assertThat(index.size()).isZero();
        assertThat(index.keys()).as("memory follows services, nothing left").isZero();
        index.remove("KubernetesService/shop/unknown");
    }
}
