package calico.cni.plugin;

import calico.cni.spec.CniError;
import calico.cni.spec.CniResult;
import calico.dataplane.netlink.Address;
import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.netlink.Link;
import calico.dataplane.netlink.NetNamespace;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.Route;
import calico.dataplane.netlink.Sysctls;
import calico.dataplane.netlink.VethLinks;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * The kernel half of a workload, as Calico's CNI plugin wires it: a veth pair whose host end
 * ({@code cali…}, MAC {@code ee:ee:ee:ee:ee:ee}, proxy_arp on) carries a /32 (/128) route to
 * each address, and whose pod end ({@code CNI_IFNAME}) holds the addresses with a link route
 * to {@code 169.254.1.1} and the default route through it (IPv6: through the host end's
 * link-local address). Runs in the caller's namespace (the host's); the pod side is entered
 * through {@link NetNamespace#call}.
 */
public final class WorkloadNetwork {
    static final String HOST_MAC = "ee:ee:ee:ee:ee:ee";
    static final InetAddress GATEWAY_V4 = literal("169.254.1.1");
    /** The EUI-64 link-local address the kernel derives from {@link #HOST_MAC}. */
    static final InetAddress GATEWAY_V6 = literal("fe80::ecee:eeff:feee:eeee");

    private final Sysctls sysctls = new Sysctls();
    private final String hostNetns;

    /** The host side is the caller's own network namespace (a plugin run by the kubelet). */
    public WorkloadNetwork() {
        this(null);
    }

    /**
     * The host side (host veth, its routes and sysctls) is the namespace at {@code hostNetns}
     * ({@code /run/netns/NAME}), or the caller's when null. Only this work enters it: the
     * caller's datastore and Kubernetes API connections stay where the caller is.
     */
    public WorkloadNetwork(String hostNetns) {
        this.hostNetns = hostNetns;
    }

    private <T> T onHost(Callable<T> work) {
        if (hostNetns == null) {
            try {
                return work.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        try (NetNamespace host = NetNamespace.open(hostNetns)) {
            return host.call(work);
        }
    }

    /**
     * Creates the pair and configures both ends. All or nothing: on any failure the pair (and
     * with it every address and route on it) is deleted before the error is thrown.
     *
     * @return the interfaces (host end first, then the pod end) with their MACs
     */
    public List<CniResult.Interface> setUp(NetNamespace ns, String hostVeth, String ifName, int mtu, List<IpPrefix> ips) {
        return onHost(() -> setUpHere(ns, hostVeth, ifName, mtu, ips));
    }

    private List<CniResult.Interface> setUpHere(NetNamespace ns, String hostVeth, String ifName, int mtu, List<IpPrefix> ips) {
        boolean created = false;
        try (VethLinks veths = new VethLinks(); Netlink nl = new Netlink()) {
            veths.createVeth(hostVeth, ifName, ns.fd(), mtu);
            created = true;
            veths.setMac(hostVeth, HOST_MAC);
            boolean v6 = ips.stream().anyMatch(p -> p.address() instanceof java.net.Inet6Address);
            if (v6) {
                // The pod's gateway is this end's link-local address: no DAD delay before it works.
                sysctls.write("net/ipv6/conf/" + hostVeth + "/accept_dad", "0");
                sysctls.setIpv6Forwarding(hostVeth, true);
            }
            sysctls.setProxyArp(hostVeth, true);
            sysctls.setProxyDelay(hostVeth, 0);
            sysctls.setIpv4Forwarding(hostVeth, true);
            nl.setLinkUp(hostVeth, true);
            String podMac = ns.call(() -> configurePod(ifName, ips));
            int hostIndex = nl.linkIndex(hostVeth);
            for (IpPrefix ip : ips) {
                nl.replaceRoute(Route.device(IpPrefix.host(ip.address()), hostIndex));
            }
            return List.of(new CniResult.Interface(hostVeth, HOST_MAC, null),
                    new CniResult.Interface(ifName, podMac, ns.path()));
        } catch (RuntimeException e) {
            if (created) {
                try {
                    tearDownHere(hostVeth);
                } catch (RuntimeException rollback) {
                    e.addSuppressed(rollback);
                }
            }
            throw wrap(e, "set up " + hostVeth + "/" + ifName);
        }
    }

    private static String configurePod(String ifName, List<IpPrefix> ips) {
        Sysctls pod = new Sysctls();
        try (Netlink nl = new Netlink()) {
            boolean v4 = ips.stream().anyMatch(p -> p.address() instanceof java.net.Inet4Address);
            boolean v6 = ips.stream().anyMatch(p -> p.address() instanceof java.net.Inet6Address);
            if (v6) {
                pod.write("net/ipv6/conf/" + ifName + "/accept_dad", "0");
            }
            nl.setLinkUp(ifName, true);
            int index = nl.linkIndex(ifName);
            for (IpPrefix ip : ips) {
                nl.addAddress(index, ip);
            }
            if (v4) {
                nl.addRoute(Route.device(IpPrefix.host(GATEWAY_V4), index));
                nl.addRoute(Route.via(IpPrefix.parse("0.0.0.0/0"), GATEWAY_V4, index));
            }
            if (v6) {
                nl.addRoute(Route.via(IpPrefix.parse("::/0"), GATEWAY_V6, index));
            }
            return nl.link(ifName).flatMap(Link::mac).orElse(null);
        }
    }

    /** Deletes the host end (the kernel deletes the pod end with it). {@return whether it existed} */
    public boolean tearDown(String hostVeth) {
        return onHost(() -> tearDownHere(hostVeth));
    }

    private static boolean tearDownHere(String hostVeth) {
        try (VethLinks veths = new VethLinks()) {
            return veths.deleteLink(hostVeth);
        }
    }

    /** {@return whether the host end exists} */
    public boolean exists(String hostVeth) {
        return onHost(() -> {
            try (Netlink nl = new Netlink()) {
                return nl.link(hostVeth).isPresent();
            }
        });
    }

    /**
     * Checks the pod end against {@code expected}: the interface exists and is up, holds every
     * address, and has the gateway routes. {@return the problems found} (empty when all is well).
     */
    public List<String> check(NetNamespace ns, String hostVeth, String ifName, List<IpPrefix> expected) {
        List<String> problems = new ArrayList<>(onHost(() -> checkHost(hostVeth, expected)));
        problems.addAll(ns.call(() -> checkPod(ifName, expected)));
        return problems;
    }

    private static List<String> checkHost(String hostVeth, List<IpPrefix> expected) {
        List<String> problems = new ArrayList<>();
        try (Netlink nl = new Netlink()) {
            Optional<Link> host = nl.link(hostVeth);
            if (host.isEmpty()) {
                problems.add("host interface " + hostVeth + " does not exist");
            } else {
                List<Route> routes = nl.routes(Route.TABLE_MAIN);
                for (IpPrefix ip : expected) {
                    IpPrefix h = IpPrefix.host(ip.address());
                    if (routes.stream().noneMatch(r -> r.destination().equals(h) && r.linkIndex() == host.get().index())) {
                        problems.add("host route " + h + " dev " + hostVeth + " is missing");
                    }
                }
            }
        }
        return problems;
    }

    private static List<String> checkPod(String ifName, List<IpPrefix> expected) {
        List<String> problems = new ArrayList<>();
        try (Netlink nl = new Netlink()) {
            Optional<Link> link = nl.link(ifName);
            if (link.isEmpty()) {
                problems.add("interface " + ifName + " does not exist in the container");
                return problems;
            }
            int index = link.get().index();
            if (!link.get().up()) {
                problems.add("interface " + ifName + " is down");
            }
            List<IpPrefix> have = nl.addresses(index).stream().map(Address::prefix).toList();
            for (IpPrefix ip : expected) {
                if (!have.contains(ip)) {
                    problems.add("address " + ip + " is missing from " + ifName);
                }
            }
            List<Route> routes = nl.routes(Route.TABLE_MAIN);
            boolean v4 = expected.stream().anyMatch(p -> p.address() instanceof java.net.Inet4Address);
            boolean v6 = expected.stream().anyMatch(p -> p.address() instanceof java.net.Inet6Address);
            if (v4) {
                if (routes.stream().noneMatch(r -> r.destination().equals(IpPrefix.host(GATEWAY_V4)) && r.linkIndex() == index)) {
                    problems.add("route 169.254.1.1/32 dev " + ifName + " is missing");
                }
                if (routes.stream().noneMatch(r -> r.destination().length() == 0 && r.destination().address() instanceof java.net.Inet4Address
                        && r.gateway().equals(Optional.of(GATEWAY_V4)) && r.linkIndex() == index)) {
                    problems.add("default route via 169.254.1.1 dev " + ifName + " is missing");
                }
            }
            if (v6 && routes.stream().noneMatch(r -> r.destination().length() == 0 && r.destination().address() instanceof java.net.Inet6Address
                    && r.gateway().equals(Optional.of(GATEWAY_V6)))) {
                problems.add("default route via fe80::ecee:eeff:feee:eeee dev " + ifName + " is missing");
            }
        }
        return problems;
    }

    static CniError wrap(RuntimeException e, String what) {
        if (e instanceof CniError c) {
            return c;
        }
        if (e instanceof NetlinkException n) {
            if (n.alreadyExists()) {
                return new CniError(CniError.NETLINK_FAILURE, what + ": an interface of that name already exists", n.getMessage());
            }
            return new CniError(CniError.NETLINK_FAILURE, what + ": " + n.getMessage());
        }
        return new CniError(CniError.NETLINK_FAILURE, what + ": " + e.getMessage());
    }

    private static InetAddress literal(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
