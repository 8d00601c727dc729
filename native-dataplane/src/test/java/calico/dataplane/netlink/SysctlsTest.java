package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.testing.NetNs;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Sysctl writes from a thread inside a namespace land on that namespace's interface. */
class SysctlsTest {
    private static final String PREFIX = "calico-sct";

    private NetNs ns;

    @BeforeEach
    void namespace() {
        ns = NetNs.create(PREFIX);
        ns.exec("ip", "link", "add", "cali0sc", "type", "veth", "peer", "name", "cali1sc");
    }

    @AfterEach
    void deleteNamespace() {
        ns.close();
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(NetNsLeftovers.named(PREFIX)).isEmpty();
    }

    private String inNs(String key) {
        return ns.exec("cat", "/proc/sys/" + key).trim();
    }

    @Test
    void writesFelixsPerInterfaceSysctlsInTheNamespace() {
        // The interface exists only in the namespace: the machine has no such sysctl.
        assertThat(Path.of("/proc/sys/net/ipv4/conf/cali0sc")).doesNotExist();
        assertThat(inNs("net/ipv4/conf/cali0sc/proxy_arp")).isEqualTo("0");

        ns.run(() -> {
            Sysctls s = new Sysctls();
            s.setProxyArp("cali0sc", true);
            s.setProxyDelay("cali0sc", 0);
            s.setIpv4Forwarding("cali0sc", true);
            s.setRpFilter("cali0sc", 2);
            s.setRouteLocalnet("cali0sc", true);
            s.setIpv6Forwarding("cali0sc", true);
        });

        assertThat(inNs("net/ipv4/conf/cali0sc/proxy_arp")).isEqualTo("1");
        assertThat(inNs("net/ipv4/neigh/cali0sc/proxy_delay")).isEqualTo("0");
        assertThat(inNs("net/ipv4/conf/cali0sc/forwarding")).isEqualTo("1");
        assertThat(inNs("net/ipv4/conf/cali0sc/rp_filter")).isEqualTo("2");
        assertThat(inNs("net/ipv4/conf/cali0sc/route_localnet")).isEqualTo("1");
        assertThat(inNs("net/ipv6/conf/cali0sc/forwarding")).isEqualTo("1");
        // The peer was not touched.
        assertThat(inNs("net/ipv4/conf/cali1sc/proxy_arp")).isEqualTo("0");
        assertThat(ns.call(() -> new Sysctls().read("net/ipv4/conf/cali0sc/rp_filter"))).isEqualTo("2");

        ns.run(() -> new Sysctls().setProxyArp("cali0sc", false));
        assertThat(inNs("net/ipv4/conf/cali0sc/proxy_arp")).isEqualTo("0");
    }

    @Test
    void aMissingInterfaceOrBadValueIsAClearError() throws Exception {
        assertThatThrownBy(() -> ns.run(() -> new Sysctls().setProxyArp("absent0", true)))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("net/ipv4/conf/absent0/proxy_arp")
                .hasMessageContaining("no such key");
        assertThatThrownBy(() -> new Sysctls().setRpFilter("cali0sc", 3)).hasMessageContaining("rp_filter: 3");
        assertThatThrownBy(() -> new Sysctls().setProxyArp("../x", true)).hasMessageContaining("interface name");
        assertThatThrownBy(() -> new Sysctls().read("/etc/passwd")).hasMessageContaining("sysctl key");
        // Nothing was created by the failed write.
        assertThat(ns.call(() -> Files.exists(Path.of("/proc/sys/net/ipv4/conf/absent0")))).isFalse();
    }
}
