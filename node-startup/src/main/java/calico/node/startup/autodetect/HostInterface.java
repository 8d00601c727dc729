package calico.node.startup.autodetect;

import calico.api.net.Cidr;
import java.util.List;

/**
 * One host interface and its addresses, each with the prefix length of its subnet
 * ({@code 10.0.0.5/24}: the address, not the network), in the kernel's order.
 *
 * @param index the kernel's interface index
 * @param name  the interface name
 * @param cidrs its IPv4 and IPv6 addresses
 */
public record HostInterface(int index, String name, List<Cidr> cidrs) {

    public HostInterface {
        cidrs = List.copyOf(cidrs);
    }

    /** {@return the addresses of IP version {@code version}} */
    public List<Cidr> cidrs(int version) {
        return cidrs.stream().filter(c -> c.version() == version).toList();
    }
}
