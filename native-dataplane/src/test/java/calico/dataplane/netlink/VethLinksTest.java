package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.testing.NetNs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link VethLinks} and {@link NetNamespace} between two namespaces standing in for a host and
 * a pod; the kernel's view is read back with {@code ip}.
 */
class VethLinksTest {
    static final String PREFIX = "cni-vlt";

    private NetNs host;
    private NetNs pod;

    @BeforeEach
    void namespaces() {
        host = NetNs.create(PREFIX);
        pod = NetNs.create(PREFIX);
    }

    @AfterEach
    void delete() {
        host.close();
        pod.close();
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(NetNsLeftovers.named(PREFIX)).isEmpty();
    }

    @Test
    void createsVethWithPeerInOtherNamespaceAndDeletesBothEnds() {
        try (NetNamespace podNs = NetNamespace.open("/run/netns/" + pod.name())) {
            host.run(() -> {
                try (VethLinks v = new VethLinks()) {
                    v.createVeth("calitest0", "eth0", podNs.fd(), 1400);
                    v.setMac("calitest0", "ee:ee:ee:ee:ee:ee");
                }
            });
            assertThat(host.exec("ip", "-o", "link", "show", "calitest0")).contains("mtu 1400").contains("ee:ee:ee:ee:ee:ee");
            assertThat(pod.exec("ip", "-o", "link", "show", "eth0")).contains("mtu 1400");
            assertThat(host.tryExec("ip", "link", "show", "eth0").status()).isNotZero();

            // Code run inside the namespace sees the pod's eth0.
            int index = podNs.call(() -> {
                try (Netlink nl = new Netlink()) {
                    return nl.linkIndex("eth0");
                }
            });
            assertThat(index).isPositive();

            boolean deleted = host.call(() -> {
                try (VethLinks v = new VethLinks()) {
                    return v.deleteLink("calitest0");
                }
            });
            assertThat(deleted).isTrue();
            assertThat(pod.tryExec("ip", "link", "show", "eth0").status()).isNotZero();
            boolean again = host.call(() -> {
                try (VethLinks v = new VethLinks()) {
                    return v.deleteLink("calitest0");
                }
            });
            assertThat(again).isFalse();
        }
    }

    @Test
    void duplicateNameIsRefusedAndCreatesNothing() {
        try (NetNamespace podNs = NetNamespace.open("/run/netns/" + pod.name())) {
            pod.exec("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "x0");
            assertThatThrownBy(() -> host.run(() -> {
                try (VethLinks v = new VethLinks()) {
                    v.createVeth("calitest1", "eth0", podNs.fd(), 0);
                }
            })).isInstanceOf(NetlinkException.class).satisfies(e -> assertThat(((NetlinkException) e).alreadyExists()).isTrue());
            assertThat(host.tryExec("ip", "link", "show", "calitest1").status()).isNotZero();
        }
    }

    @Test
    void movesLinkIntoNamespace() {
        host.exec("ip", "link", "add", "mv0", "type", "veth", "peer", "name", "mv1");
        try (NetNamespace podNs = NetNamespace.open("/run/netns/" + pod.name())) {
            host.run(() -> {
                try (VethLinks v = new VethLinks()) {
                    v.moveToNamespace("mv0", podNs.fd());
                }
            });
        }
        assertThat(pod.exec("ip", "-o", "link", "show", "mv0")).contains("mv0");
    }

    @Test
    void missingNamespaceFileIsEnoent() {
        assertThatThrownBy(() -> NetNamespace.open("/run/netns/" + PREFIX + "-absent"))
                .isInstanceOf(NetlinkException.class)
                .satisfies(e -> assertThat(((NetlinkException) e).errno()).isEqualTo(Errno.ENOENT));
    }

    @Test
    void badNamesAreRefusedBeforeTheKernel() {
        try (VethLinks v = new VethLinks()) {
            assertThatThrownBy(() -> v.createVeth("way-too-long-name0", "eth0", 0, 0)).hasMessageContaining("name:");
            assertThatThrownBy(() -> v.createVeth("ok0", "eth0", -1, 0)).hasMessageContaining("peerNetnsFd");
        }
    }
}
