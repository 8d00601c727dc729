package calico.node.startup.autodetect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.net.Cidr;
import calico.dataplane.testing.NetNs;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every autodetection method against real interfaces, read over netlink inside a network namespace
 * of the test's own (uniquely named, deleted after). The namespace holds, in creation (index) order,
 * veth pairs (this kernel has no dummy links; the peers {@code p0}, {@code p1}, {@code p5} have no
 * address): {@code dummy0} 10.1.0.1/24 (excluded by name from first-found), {@code eth1} 10.2.0.7/24
 * and fe80::99/64, {@code ens5} 10.3.0.9/16 and 2001:db8::9/64, all up.
 */
class AutodetectionNetnsTest {

    private static NetNs ns;

    @BeforeAll
    static void host() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create("nst");
        for (String[] l : new String[][] {{"dummy0", "p0", "10.1.0.1/24"}, {"eth1", "p1", "10.2.0.7/24"},
                {"ens5", "p5", "10.3.0.9/16"}}) {
            ns.exec("ip", "link", "add", l[0], "type", "veth", "peer", "name", l[1]);
            ns.exec("ip", "addr", "add", l[2], "dev", l[0]);
            ns.exec("ip", "link", "set", l[1], "up");
            ns.exec("ip", "link", "set", l[0], "up");
        }
        ns.exec("ip", "-6", "addr", "add", "2001:db8::9/64", "dev", "ens5", "nodad");
        ns.exec("ip", "-6", "addr", "add", "fe80::99/64", "dev", "eth1", "nodad");
    }

    @AfterAll
    static void done() {
        if (ns != null) {
            ns.close();
        }
    }

    private static Detection detect(String method, int version) {
        return detect(method, version, KubernetesNodes.NONE);
    }

    private static Detection detect(String method, int version, KubernetesNodes k8s) {
        AutodetectionMethod m = AutodetectionMethod.parse(method, "IP_AUTODETECTION_METHOD");
        return ns.call(() -> new AddressDetector(new NetlinkHostInterfaces(), k8s).detect(m, version, "kn1"));
    }

    @Test
    void theNamespacesInterfacesAreReadOverNetlink() {
        List<HostInterface> all = ns.call(() -> new NetlinkHostInterfaces().list());
        assertThat(all).extracting(HostInterface::name).containsExactlyInAnyOrder("lo", "dummy0", "p0", "eth1", "p1",
                "ens5", "p5");
        assertThat(all).isSortedAccordingTo(java.util.Comparator.comparingInt(HostInterface::index));
        assertThat(all.stream().filter(i -> i.name().equals("ens5")).findFirst().orElseThrow().cidrs())
                .contains(Cidr.parse("10.3.0.9/16"), Cidr.parse("2001:db8::9/64"));
    }

    @Test
    void firstFoundTakesTheLastInterfaceFirstAndSkipsExcludedNamesAndLinkLocal() {
        assertThat(detect("first-found", 4)).isEqualTo(Detection.found(Cidr.parse("10.3.0.9/16"), "ens5"));
        assertThat(detect("", 4).cidr()).as("empty is first-found").contains(Cidr.parse("10.3.0.9/16"));
        assertThat(detect("first-found", 6)).isEqualTo(Detection.found(Cidr.parse("2001:db8::9/64"), "ens5"));
    }

    @Test
    void interfaceMatchesNames() {
        assertThat(detect("interface=eth.*", 4)).isEqualTo(Detection.found(Cidr.parse("10.2.0.7/24"), "eth1"));
        assertThat(detect("interface=nomatch, eth1", 4).cidr()).contains(Cidr.parse("10.2.0.7/24"));
        assertThat(detect("interface=eth.*", 6).cidr()).as("eth1 has only a link-local IPv6 address").isEmpty();
        assertThat(detect("interface=wlan.*", 4).reason()).isEqualTo("no valid host interfaces found");
    }

    @Test
    void skipInterfaceSkipsThoseAndTheDefaultExclusions() {
        assertThat(detect("skip-interface=ens.*", 4)).isEqualTo(Detection.found(Cidr.parse("10.2.0.7/24"), "eth1"));
        assertThat(detect("skip-interface=ens.*,eth.*", 4).cidr()).as("dummy0 stays excluded").isEmpty();
    }

    @Test
    void cidrMatchesAddressesOnAnyInterface() {
        assertThat(detect("cidr=10.1.0.0/16", 4)).as("no name exclusions for cidr=")
                .isEqualTo(Detection.found(Cidr.parse("10.1.0.1/24"), "dummy0"));
        assertThat(detect("cidr=192.168.0.0/16, 10.2.0.0/24", 4).cidr()).contains(Cidr.parse("10.2.0.7/24"));
        assertThat(detect("cidr=2001:db8::/32", 6).cidr()).contains(Cidr.parse("2001:db8::9/64"));
        assertThat(detect("cidr=172.16.0.0/12", 4).reason()).contains("no valid IPv4 addresses");
    }

    @Test
    void canReachUsesTheKernelsSourceAddress() {
        assertThat(detect("can-reach=10.2.0.200", 4)).isEqualTo(Detection.found(Cidr.parse("10.2.0.7/24"), "eth1"));
        assertThat(detect("can-reach=10.1.0.77", 4).cidr()).contains(Cidr.parse("10.1.0.1/24"));
        assertThat(detect("can-reach=2001:db8::1", 6).cidr()).contains(Cidr.parse("2001:db8::9/64"));
        assertThat(detect("can-reach=192.0.2.1", 4).cidr()).as("no route there in the namespace").isEmpty();
    }

    @Test
    void kubernetesInternalIpMustBeOnAHostInterface() {
        KubernetesNodes k8s = name -> Optional.of(List.of("10.2.0.7", "2001:db8::9"));
        assertThat(detect("kubernetes-internal-ip", 4, k8s).cidr()).contains(Cidr.parse("10.2.0.7/24"));
        assertThat(detect("kubernetes-internal-ip", 6, k8s).cidr()).contains(Cidr.parse("2001:db8::9/64"));
        assertThat(detect("kubernetes-internal-ip", 4, name -> Optional.of(List.of("10.9.9.9"))).reason())
                .contains("InternalIP 10.9.9.9 is on no host interface");
        assertThat(detect("kubernetes-internal-ip", 4).reason()).contains("needs a Kubernetes cluster");
    }

    @Test
    void aBadMethodIsRefusedNamingIt() {
        assertThatThrownBy(() -> AutodetectionMethod.parse("fastest", "node.ip-autodetection-method (IP_AUTODETECTION_METHOD)"))
                .hasMessageContaining("IP_AUTODETECTION_METHOD").hasMessageContaining("\"fastest\"")
                .hasMessageContaining("first-found, can-reach=DEST");
        assertThatThrownBy(() -> AutodetectionMethod.parse("interface=eth(", "IP6_AUTODETECTION_METHOD"))
                .hasMessageContaining("IP6_AUTODETECTION_METHOD").hasMessageContaining("\"eth(\" is not a regular expression");
        assertThatThrownBy(() -> AutodetectionMethod.parse("cidr=10.0.0.0/33", "IP_AUTODETECTION_METHOD"))
                .hasMessageContaining("\"10.0.0.0/33\" is not a CIDR");
        assertThatThrownBy(() -> AutodetectionMethod.parse("can-reach=", "IP_AUTODETECTION_METHOD"))
                .hasMessageContaining("needs a destination");
    }
}
