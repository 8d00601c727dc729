package calico.dataplane.netlink;

/**
 * An address assigned to an interface.
 *
 * @param linkIndex the interface's ifindex
 * @param prefix    the address with its prefix length ({@code 10.0.0.1/24})
 * @param scope     the kernel's address scope (0 global, 253 link, 254 host)
 */
public record Address(int linkIndex, IpPrefix prefix, int scope) {
}
