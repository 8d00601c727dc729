package calico.node.startup.autodetect;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.dataplane.netlink.Address;
import calico.dataplane.netlink.Link;
import calico.dataplane.netlink.NetNamespace;
import calico.dataplane.netlink.Netlink;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * The node's interfaces read over rtnetlink (a link dump and an address dump on one socket opened
 * per call), in the calling thread's network namespace or, when given one, in that namespace
 * ({@code /run/netns/<name>}: the node when start-up itself runs outside it, as in {@code ./calico up};
 * {@code can-reach} routes are looked up there too). Not {@code java.net.NetworkInterface}: it reads
 * IPv6 addresses from {@code /proc/net}, which is the process's namespace, not the thread's.
 */
public final class NetlinkHostInterfaces implements HostInterfaces {

    private final Optional<String> netns;

    /** The calling thread's namespace. */
    public NetlinkHostInterfaces() {
        this(Optional.empty());
    }

    /** @param netns the namespace's name under {@code /run/netns}, or empty for the calling thread's */
    public NetlinkHostInterfaces(Optional<String> netns) {
        this.netns = netns;
    }

    @Override
    public List<HostInterface> list() {
        return inside(NetlinkHostInterfaces::read);
    }

    @Override
    public Optional<IpAddress> sourceAddress(InetAddress destination) {
        return inside(() -> HostInterfaces.super.sourceAddress(destination));
    }

    private <T> T inside(Callable<T> body) {
        if (netns.isEmpty()) {
            try {
                return body.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        try (NetNamespace ns = NetNamespace.open("/run/netns/" + netns.get())) {
            return ns.call(body);
        }
    }

    private static List<HostInterface> read() {
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
