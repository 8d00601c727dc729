package calico.dataplane.netlink;

import java.net.InetAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * A VXLAN device's settings, as created by {@link Netlink#addVxlan} and read back by
 * {@link Netlink#vxlan}. Learning is always off: the forwarding entries are programmed
 * ({@link Netlink#setFdb}), as Calico's felix does.
 *
 * @param name        the device name ({@code vxlan.calico})
 * @param vni         the VXLAN network identifier (1..16777215)
 * @param port        the UDP destination port (4789 by default)
 * @param parentIndex the ifindex of the underlay interface packets leave by, 0 for none
 * @param local       the source address of the encapsulated packets, empty for none
 * @param mac         the device's MAC ({@code aa:bb:cc:dd:ee:ff}), empty to let the kernel choose
 * @param mtu         the device MTU, 0 for the kernel's default
 */
public record Vxlan(String name, int vni, int port, int parentIndex, Optional<InetAddress> local, Optional<String> mac,
                    int mtu) {
    public Vxlan {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(mac, "mac");
        if (vni < 1 || vni > 0xffffff) {
            throw new IllegalArgumentException("vni: " + vni + " is outside 1..16777215");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " is outside 1..65535");
        }
        if (parentIndex < 0) {
            throw new IllegalArgumentException("parentIndex: " + parentIndex + " is negative");
        }
        if (mtu < 0) {
            throw new IllegalArgumentException("mtu: " + mtu + " is negative");
        }
        mac.ifPresent(Netlink::parseMac);
    }
}
