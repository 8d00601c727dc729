package calico.dataplane.netlink;

import java.util.Optional;

/**
 * A network interface as the kernel reports it.
 *
 * @param index the ifindex
 * @param name  the interface name
 * @param mtu   the MTU
 * @param up    whether the administrative IFF_UP flag is set (not the carrier)
 * @param kind  the link kind from IFLA_LINKINFO ({@code veth}, {@code dummy}, ...), empty for
 *              devices without one such as {@code lo} or most physical NICs
 * @param mac   the link-layer address as {@code aa:bb:cc:dd:ee:ff}, empty when it has none
 */
public record Link(int index, String name, int mtu, boolean up, Optional<String> kind, Optional<String> mac) {
}
