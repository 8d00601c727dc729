package calico.node.startup.autodetect;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.dataplane.netlink.Address;
import calico.dataplane.netlink.Link;
import calico.dataplane.netlink.Netlink;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The calling thread's network namespace, read over rtnetlink (a link dump and an address dump on
 * one socket opened per call). Not {@code java.net.NetworkInterface}: it reads IPv6 addresses from
 * {@code /proc/net}, which is the process's namespace, not the thread's.
 */
public final class NetlinkHostInterfaces implements HostInterfaces {

    @Override
    public List<HostInterface> list() {
        try (Netlink nl = new Netlink()) {
            Map<Integer, List<Address>> byLink = nl.addresses().stream()
                    .collect(Collectors.groupingBy(Address::linkIndex));
            List<HostInterface> out = new ArrayList<>();
            for (Link l : nl.links()) {
                List<Cidr> cidrs = byLink.getOrDefault(l.index(), List.of()).stream()
                        .map(a -> new Cidr(IpAddress.of(a.prefix().address().getAddress()), a.prefix().length()))
                        .toList();
                out.add(new HostInterface(l.index(), l.name(), cidrs));
            }
            out.sort(Comparator.comparingInt(HostInterface::index));
            return out;
        }
    }
}
