package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Netlink#addIpip}: where the kernel has the {@code ipip} module, {@code tunl0} exists after
 * it (created, or the module's own fallback device: EEXIST); where it has none (this machine), the
 * request fails with EOPNOTSUPP, as {@code ip link add x type ipip} fails ("Unknown device type").
 */
class IpipNetlinkTest {

    private NetNs ns;

    @BeforeEach
    void namespace() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create("v6-ipip");
    }

    @AfterEach
    void delete() {
        if (ns != null) {
            ns.close();
        }
    }

    @Test
    void addIpipMakesTunl0OrSaysTheKernelHasNoIpip() {
        NetNs.Result probe = ns.tryExec("ip", "link", "add", "probe0", "type", "ipip");
        ns.run(() -> {
            try (Netlink nl = new Netlink()) {
                if (probe.status() == 0) {
                    try {
                        nl.addIpip("tunl0");
                    } catch (NetlinkException e) {
                        assertThat(e.errno()).as("only the module's own tunl0 may already be there").isEqualTo(Errno.EEXIST);
                    }
                    assertThat(nl.link("tunl0")).isPresent();
                    assertThatThrownBy(() -> nl.addIpip("tunl0")).isInstanceOfSatisfying(NetlinkException.class,
                            e -> assertThat(e.errno()).isEqualTo(Errno.EEXIST));
                } else {
                    assertThat(probe.output()).contains("Unknown device type");
                    assertThatThrownBy(() -> nl.addIpip("tunl0")).isInstanceOfSatisfying(NetlinkException.class,
                            e -> assertThat(e.errno()).isEqualTo(Errno.EOPNOTSUPP));
                    assertThat(nl.link("tunl0")).isEmpty();
                }
            }
        });
    }
}
