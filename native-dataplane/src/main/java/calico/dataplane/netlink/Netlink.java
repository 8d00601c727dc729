package calico.dataplane.netlink;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * rtnetlink over one raw {@code NETLINK_ROUTE} socket, through JNA to libc: links, addresses,
 * routes and neighbours. No {@code ip} commands.
 *
 * <p><b>Threading:</b> not thread-safe; use one instance per thread (or guard it). The socket
 * belongs to the network namespace of the thread that constructed this object, and keeps
 * acting on that namespace whichever thread calls it later.
 *
 * <p><b>Errors:</b> every kernel refusal is a {@link NetlinkException} naming the operation and
 * the errno; {@link NetlinkException#alreadyExists()} and {@link NetlinkException#notFound()}
 * let callers make add/delete idempotent.
 */
public final class Netlink implements AutoCloseable {
    static final int AF_UNSPEC = 0;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    private static final int AF_BRIDGE = 7;

    private static final int RTM_NEWLINK = 16;
    private static final int RTM_DELLINK = 17;
    private static final int RTM_GETLINK = 18;
    private static final int RTM_NEWADDR = 20;
    private static final int RTM_DELADDR = 21;
    private static final int RTM_GETADDR = 22;
    private static final int RTM_NEWROUTE = 24;
    private static final int RTM_DELROUTE = 25;
    private static final int RTM_GETROUTE = 26;
    private static final int RTM_NEWNEIGH = 28;
    private static final int RTM_DELNEIGH = 29;
    private static final int RTM_GETNEIGH = 30;
    private static final int RTM_NEWQDISC = 36;
    private static final int RTM_GETQDISC = 38;
    private static final int TCA_KIND = 1;
    /** TC_H_INGRESS: the parent of the qdisc in an interface's ingress slot ({@code ingress} or {@code clsact}). */
    private static final int TC_H_INGRESS = 0xFFFFFFF1;

    private static final int IFF_UP = 0x1;
    private static final int IFLA_ADDRESS = 1;
    private static final int IFLA_IFNAME = 3;
    private static final int IFLA_MTU = 4;
    private static final int IFLA_LINKINFO = 18;
    private static final int IFLA_INFO_KIND = 1;
    private static final int IFLA_INFO_DATA = 2;
    private static final int IFLA_VXLAN_ID = 1;
    private static final int IFLA_VXLAN_LINK = 3;
    private static final int IFLA_VXLAN_LOCAL = 4;
    private static final int IFLA_VXLAN_LEARNING = 7;
    private static final int IFLA_VXLAN_PORT = 15;
    private static final int IFLA_VXLAN_LOCAL6 = 17;

    private static final int IFA_ADDRESS = 1;
    private static final int IFA_LOCAL = 2;

    private static final int RTA_DST = 1;
    private static final int RTA_OIF = 4;
    private static final int RTA_GATEWAY = 5;
    private static final int RTA_PRIORITY = 6;
    private static final int RTA_TABLE = 15;
    private static final int RTNH_F_ONLINK = 0x4;
    private static final int RTM_F_CLONED = 0x200;
    private static final int RT_SCOPE_NOWHERE = 255;

    private static final int NDA_DST = 1;
    private static final int NDA_LLADDR = 2;
    private static final int NTF_SELF = 0x02;

    private static final int IFNAMSIZ = 16;

    private final NetlinkSocket socket;

    /** Opens a socket in the calling thread's network namespace. */
    public Netlink() {
        this.socket = new NetlinkSocket();
    }

    // ---------------------------------------------------------------- links

    public List<Link> links() {
        List<Link> out = new ArrayList<>();
        for (NetlinkSocket.Message m : socket.dump("list links", ifinfo(RTM_GETLINK, NetlinkSocket.NLM_F_DUMP, 0, 0, 0))) {
            if (m.type() == RTM_NEWLINK) {
                out.add(decodeLink(m.payload()));
            }
        }
        return out;
    }

    /**
     * {@return the kind of the qdisc in the interface's ingress slot} ({@code clsact}, {@code ingress}),
     * empty when there is none: tc's BPF hooks need {@code clsact}, and a filter added for egress
     * to an {@code ingress} qdisc would silently run on ingress.
     */
    public Optional<String> ingressQdiscKind(int linkIndex) {
        checkIndex(linkIndex);
        MessageWriter req = new MessageWriter(RTM_GETQDISC, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_DUMP)
                .u8(AF_UNSPEC).u8(0).u16(0).u32(linkIndex).u32(0).u32(0).u32(0);
        for (NetlinkSocket.Message m : socket.dump("list qdiscs", req)) {
            ByteBuffer p = m.payload();
            if (m.type() == RTM_NEWQDISC && p.getInt(4) == linkIndex && p.getInt(12) == TC_H_INGRESS) {
                return Attributes.parse(p.position(20)).string(TCA_KIND);
            }
        }
        return Optional.empty();
    }

    /** {@return the link named {@code name}}, empty when there is none. */
    public Optional<Link> link(String name) {
        return linkMessage(name).map(Netlink::decodeLink);
    }

    /** {@return the RTM_NEWLINK payload for {@code name}}, empty when there is no such link. */
    private Optional<ByteBuffer> linkMessage(String name) {
        MessageWriter req = ifinfo(RTM_GETLINK, NetlinkSocket.NLM_F_ACK, 0, 0, 0).attrString(IFLA_IFNAME, checkName(name));
        try {
            for (NetlinkSocket.Message m : socket.execute("get link " + name, req)) {
                if (m.type() == RTM_NEWLINK) {
                    return Optional.of(m.payload());
                }
            }
            return Optional.empty();
        } catch (NetlinkException e) {
            if (e.errno() == Errno.ENODEV) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /** {@return the ifindex of {@code name}}; fails with ENODEV when there is no such link. */
    public int linkIndex(String name) {
        return link(name).map(Link::index)
                .orElseThrow(() -> new NetlinkException("find link " + name, Errno.ENODEV, null));
    }

    public void setLinkUp(String name, boolean up) {
        MessageWriter req = ifinfo(RTM_NEWLINK, NetlinkSocket.NLM_F_ACK, 0, up ? IFF_UP : 0, IFF_UP)
                .attrString(IFLA_IFNAME, checkName(name));
        socket.execute("set link " + name + (up ? " up" : " down"), req);
    }

    public void setLinkMtu(String name, int mtu) {
        if (mtu <= 0) {
            throw new IllegalArgumentException("mtu: " + mtu + " is not positive");
        }
        MessageWriter req = ifinfo(RTM_NEWLINK, NetlinkSocket.NLM_F_ACK, 0, 0, 0)
                .attrString(IFLA_IFNAME, checkName(name))
                .attrU32(IFLA_MTU, mtu);
        socket.execute("set link " + name + " mtu " + mtu, req);
    }

    /**
     * Creates a VXLAN device, down, with learning off (its forwarding entries are programmed,
     * {@link #setFdb}); EEXIST when a link of that name exists, in which case nothing changed.
     */
    public void addVxlan(Vxlan v) {
        MessageWriter w = ifinfo(RTM_NEWLINK, NetlinkSocket.NLM_F_ACK | NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_EXCL, 0, 0, 0)
                .attrString(IFLA_IFNAME, checkName(v.name()));
        v.mac().ifPresent(mac -> w.attr(IFLA_ADDRESS, parseMac(mac)));
        if (v.mtu() > 0) {
            w.attrU32(IFLA_MTU, v.mtu());
        }
        int info = w.beginNested(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "vxlan");
        int data = w.beginNested(IFLA_INFO_DATA);
        w.attrU32(IFLA_VXLAN_ID, v.vni());
        if (v.parentIndex() != 0) {
            w.attrU32(IFLA_VXLAN_LINK, v.parentIndex());
        }
        v.local().ifPresent(ip -> {
            byte[] b = ip.getAddress();
            w.attr(b.length == 4 ? IFLA_VXLAN_LOCAL : IFLA_VXLAN_LOCAL6, b);
        });
        w.attr(IFLA_VXLAN_PORT, new byte[] {(byte) (v.port() >> 8), (byte) v.port()}); // network byte order
        w.attr(IFLA_VXLAN_LEARNING, new byte[] {0});
        w.endNested(data);
        w.endNested(info);
        socket.execute("add vxlan " + v.name() + " id " + v.vni(), w);
    }

    /**
     * Creates an IPIP link {@code name} with no endpoints (for {@code tunl0}: the request makes the
     * kernel load its {@code ipip} module, whose fallback device {@code tunl0} then exists in every
     * namespace, as Calico's felix asks for it). EEXIST when the link exists; EOPNOTSUPP when the
     * kernel has no {@code ipip} module.
     */
    public void addIpip(String name) {
        MessageWriter w = ifinfo(RTM_NEWLINK, NetlinkSocket.NLM_F_ACK | NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_EXCL, 0, 0, 0)
                .attrString(IFLA_IFNAME, checkName(name));
        int info = w.beginNested(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "ipip");
        w.endNested(info);
        socket.execute("add ipip " + name, w);
    }

    /**
     * {@return the VXLAN settings of link {@code name}}, empty when there is no such link or it
     * is not a VXLAN device. {@link Vxlan#mtu()} and {@link Vxlan#mac()} are the link's.
     */
    public Optional<Vxlan> vxlan(String name) {
        Optional<ByteBuffer> payload = linkMessage(name);
        if (payload.isPresent()) {
            Attributes a = Attributes.parse(payload.get().position(16));
            Optional<Attributes> info = a.nested(IFLA_LINKINFO);
            if (info.flatMap(i -> i.string(IFLA_INFO_KIND)).filter("vxlan"::equals).isEmpty()) {
                return Optional.empty();
            }
            Attributes d = info.flatMap(i -> i.nested(IFLA_INFO_DATA)).orElseThrow(
                    () -> new NetlinkException("get link " + name + ": vxlan without IFLA_INFO_DATA", Errno.EINVAL, null));
            int port = d.bytes(IFLA_VXLAN_PORT).filter(b -> b.length == 2)
                    .map(b -> ((b[0] & 0xff) << 8) | (b[1] & 0xff)).orElse(0);
            return Optional.of(new Vxlan(a.string(IFLA_IFNAME).orElse(name), d.u32(IFLA_VXLAN_ID).orElse(0),
                    port, d.u32(IFLA_VXLAN_LINK).orElse(0),
                    d.address(IFLA_VXLAN_LOCAL).or(() -> d.address(IFLA_VXLAN_LOCAL6)),
                    a.bytes(IFLA_ADDRESS).filter(b -> b.length == 6).map(Netlink::formatMac),
                    a.u32(IFLA_MTU).orElse(0)));
        }
        return Optional.empty();
    }

    /** Deletes link {@code name}; {@return false} when there was none. */
    public boolean deleteLink(String name) {
        try {
            socket.execute("delete link " + name, ifinfo(RTM_DELLINK, NetlinkSocket.NLM_F_ACK, 0, 0, 0)
                    .attrString(IFLA_IFNAME, checkName(name)));
            return true;
        } catch (NetlinkException e) {
            if (e.errno() == Errno.ENODEV) {
                return false;
            }
            throw e;
        }
    }

    // ---------------------------------------------------------------- addresses

    /** {@return every IPv4 and IPv6 address on every link} */
    public List<Address> addresses() {
        return addresses(0);
    }

    /** {@return the IPv4 and IPv6 addresses of link {@code linkIndex}} (0 = all links). */
    public List<Address> addresses(int linkIndex) {
        MessageWriter req = new MessageWriter(RTM_GETADDR, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_DUMP)
                .u8(AF_UNSPEC).u8(0).u8(0).u8(0).u32(0);
        List<Address> out = new ArrayList<>();
        for (NetlinkSocket.Message m : socket.dump("list addresses", req)) {
            if (m.type() != RTM_NEWADDR) {
                continue;
            }
            ByteBuffer p = m.payload();
            int family = Byte.toUnsignedInt(p.get(0));
            int prefixLen = Byte.toUnsignedInt(p.get(1));
            int scope = Byte.toUnsignedInt(p.get(3));
            int index = p.getInt(4);
            if ((family != AF_INET && family != AF_INET6) || (linkIndex != 0 && index != linkIndex)) {
                continue;
            }
            Attributes a = Attributes.parse(p.position(8));
            // IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer on point-to-point links.
            Optional<InetAddress> addr = a.address(IFA_LOCAL).or(() -> a.address(IFA_ADDRESS));
            addr.ifPresent(ip -> out.add(new Address(index, new IpPrefix(ip, prefixLen), scope)));
        }
        return out;
    }

    /** Adds {@code prefix} to the link; EEXIST if it is already there. */
    public void addAddress(int linkIndex, IpPrefix prefix) {
        socket.execute("add address " + prefix + " dev " + linkIndex,
                address(RTM_NEWADDR, NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_EXCL, linkIndex, prefix));
    }

    /** Removes {@code prefix} from the link; EADDRNOTAVAIL if it is not there. */
    public void deleteAddress(int linkIndex, IpPrefix prefix) {
        socket.execute("delete address " + prefix + " dev " + linkIndex, address(RTM_DELADDR, 0, linkIndex, prefix));
    }

    // ---------------------------------------------------------------- routes

    /** {@return the IPv4 and IPv6 routes of the main table} */
    public List<Route> routes() {
        return routes(Route.TABLE_MAIN);
    }

    /** {@return the IPv4 and IPv6 routes of {@code table}} (0 = every table). Cached clones are skipped. */
    public List<Route> routes(long table) {
        MessageWriter req = new MessageWriter(RTM_GETROUTE, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_DUMP)
                .u8(AF_UNSPEC).u8(0).u8(0).u8(0).u8(0).u8(0).u8(0).u8(0).u32(0);
        List<Route> out = new ArrayList<>();
        for (NetlinkSocket.Message m : socket.dump("list routes", req)) {
            if (m.type() != RTM_NEWROUTE) {
                continue;
            }
            Route r = decodeRoute(m.payload());
            if (r != null && (table == 0 || r.table() == table)) {
                out.add(r);
            }
        }
        return out;
    }

    /** Adds a route; EEXIST if one with the same key is there. */
    public void addRoute(Route route) {
        socket.execute("add route " + route,
                route(RTM_NEWROUTE, NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_EXCL, route, false));
    }

    /** Adds the route or replaces the one with the same destination, table and metric. */
    public void replaceRoute(Route route) {
        socket.execute("replace route " + route,
                route(RTM_NEWROUTE, NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_REPLACE, route, false));
    }

    /**
     * Deletes the route matching {@code route}'s destination and table (and its gateway,
     * interface and metric when set; scope and protocol are not matched); ESRCH if none.
     */
    public void deleteRoute(Route route) {
        socket.execute("delete route " + route, route(RTM_DELROUTE, 0, route, true));
    }

    // ---------------------------------------------------------------- neighbours

    /** {@return every IPv4 and IPv6 neighbour entry} (0 = all links) of link {@code linkIndex}. */
    public List<Neighbour> neighbours(int linkIndex) {
        List<Neighbour> out = new ArrayList<>();
        for (NeighMessage n : neighbourDump("list neighbours", AF_UNSPEC)) {
            if ((n.family() != AF_INET && n.family() != AF_INET6) || (linkIndex != 0 && n.index() != linkIndex)) {
                continue;
            }
            Attributes a = n.attributes();
            a.address(NDA_DST).ifPresent(ip -> out.add(new Neighbour(n.index(), ip, a.bytes(NDA_LLADDR).map(Netlink::formatMac),
                    n.state())));
        }
        return out;
    }

    /** Adds or replaces a permanent entry {@code address -> mac} on the link. */
    public void setPermanentNeighbour(int linkIndex, InetAddress address, String mac) {
        MessageWriter req = neigh(RTM_NEWNEIGH, NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_REPLACE,
                linkIndex, address, Neighbour.NUD_PERMANENT)
                .attr(NDA_LLADDR, parseMac(mac));
        socket.execute("set neighbour " + address.getHostAddress() + " lladdr " + mac + " dev " + linkIndex, req);
    }

    /** Deletes the entry for {@code address} on the link; ENOENT if there is none. */
    public void deleteNeighbour(int linkIndex, InetAddress address) {
        socket.execute("delete neighbour " + address.getHostAddress() + " dev " + linkIndex,
                neigh(RTM_DELNEIGH, 0, linkIndex, address, 0));
    }

    // ---------------------------------------------------------------- forwarding database (VXLAN)

    /** {@return the forwarding entries with a remote destination on link {@code linkIndex}} (AF_BRIDGE neighbours with NDA_DST). */
    public List<FdbEntry> fdb(int linkIndex) {
        checkIndex(linkIndex);
        List<FdbEntry> out = new ArrayList<>();
        for (NeighMessage n : neighbourDump("list fdb", AF_BRIDGE)) {
            if (n.family() != AF_BRIDGE || n.index() != linkIndex) {
                continue;
            }
            Optional<String> mac = n.attributes().bytes(NDA_LLADDR).filter(b -> b.length == 6).map(Netlink::formatMac);
            Optional<InetAddress> dst = n.attributes().address(NDA_DST);
            if (mac.isPresent() && dst.isPresent()) {
                out.add(new FdbEntry(n.index(), mac.get(), dst.get(), n.state()));
            }
        }
        return out;
    }

    /** Adds or replaces the permanent entry {@code mac -> destination} on the VXLAN link. */
    public void setFdb(int linkIndex, String mac, InetAddress destination) {
        socket.execute("set fdb " + mac + " dst " + destination.getHostAddress() + " dev " + linkIndex,
                fdbMessage(RTM_NEWNEIGH, NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_REPLACE, linkIndex, mac,
                        destination, Neighbour.NUD_PERMANENT));
    }

    /** Deletes the entry {@code mac -> destination} on the link; ENOENT if there is none. */
    public void deleteFdb(int linkIndex, String mac, InetAddress destination) {
        socket.execute("delete fdb " + mac + " dst " + destination.getHostAddress() + " dev " + linkIndex,
                fdbMessage(RTM_DELNEIGH, 0, linkIndex, mac, destination, 0));
    }

    /** One RTM_NEWNEIGH of a dump: ndmsg's family, ifindex and state, and its attributes. */
    private record NeighMessage(int family, int index, int state, Attributes attributes) {
    }

    /** Dumps the neighbour table of {@code family} (AF_UNSPEC: IPv4 and IPv6; AF_BRIDGE: forwarding entries). */
    private List<NeighMessage> neighbourDump(String operation, int family) {
        MessageWriter req = new MessageWriter(RTM_GETNEIGH, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_DUMP)
                .u8(family).u8(0).u16(0).u32(0).u16(0).u8(0).u8(0);
        List<NeighMessage> out = new ArrayList<>();
        for (NetlinkSocket.Message m : socket.dump(operation, req)) {
            if (m.type() == RTM_NEWNEIGH) {
                ByteBuffer p = m.payload();
                out.add(new NeighMessage(Byte.toUnsignedInt(p.get(0)), p.getInt(4), Short.toUnsignedInt(p.getShort(8)),
                        Attributes.parse(p.position(12))));
            }
        }
        return out;
    }

    /** nlmsghdr + ndmsg {AF_BRIDGE, ifindex, state, NTF_SELF} + NDA_LLADDR + NDA_DST: an entry of the device's own table. */
    private static MessageWriter fdbMessage(int type, int flags, int linkIndex, String mac, InetAddress dst, int state) {
        checkIndex(linkIndex);
        return new MessageWriter(type, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK | flags)
                .u8(AF_BRIDGE).u8(0).u16(0).u32(linkIndex).u16(state).u8(NTF_SELF).u8(0)
                .attr(NDA_LLADDR, parseMac(mac))
                .attr(NDA_DST, dst.getAddress());
    }

    @Override
    public void close() {
        socket.close();
    }

    // ---------------------------------------------------------------- encoding

    /** nlmsghdr + ifinfomsg {family, pad, type, index, flags, change}. */
    private static MessageWriter ifinfo(int type, int extraFlags, int index, int flags, int change) {
        return new MessageWriter(type, NetlinkSocket.NLM_F_REQUEST | extraFlags)
                .u8(AF_UNSPEC).u8(0).u16(0).u32(index).u32(flags).u32(change);
    }

    /** nlmsghdr + ifaddrmsg {family, prefixlen, flags, scope, index} + IFA_LOCAL/IFA_ADDRESS. */
    private static MessageWriter address(int type, int flags, int linkIndex, IpPrefix prefix) {
        checkIndex(linkIndex);
        byte[] ip = prefix.address().getAddress();
        return new MessageWriter(type, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK | flags)
                .u8(prefix.family()).u8(prefix.length()).u8(0).u8(0).u32(linkIndex)
                .attr(IFA_LOCAL, ip)
                .attr(IFA_ADDRESS, ip);
    }

    /**
     * nlmsghdr + rtmsg {family, dst_len, src_len, tos, table, protocol, scope, type, flags} +
     * attributes. Tables above 255 do not fit rtm_table, so RTA_TABLE always carries the table.
     * A delete leaves type/protocol unset and scope NOWHERE so the kernel matches any.
     */
    private static MessageWriter route(int type, int flags, Route r, boolean delete) {
        int rtmTable = r.table() < 256 ? (int) r.table() : 0;
        MessageWriter w = new MessageWriter(type, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK | flags)
                .u8(r.destination().family())
                .u8(r.destination().length())
                .u8(0).u8(0)
                .u8(rtmTable)
                .u8(delete ? 0 : r.protocol())
                .u8(delete ? RT_SCOPE_NOWHERE : r.scope())
                .u8(delete ? 0 : r.type().ordinal())
                .u32(r.onlink() ? RTNH_F_ONLINK : 0);
        w.attrU32(RTA_TABLE, (int) r.table());
        if (r.destination().length() > 0) {
            w.attr(RTA_DST, r.destination().address().getAddress());
        }
        r.gateway().ifPresent(g -> w.attr(RTA_GATEWAY, g.getAddress()));
        if (r.linkIndex() != 0) {
            w.attrU32(RTA_OIF, r.linkIndex());
        }
        if (r.priority() != 0) {
            w.attrU32(RTA_PRIORITY, r.priority());
        }
        return w;
    }

    /** nlmsghdr + ndmsg {family, pad1, pad2, ifindex, state, flags, type} + NDA_DST. */
    private static MessageWriter neigh(int type, int flags, int linkIndex, InetAddress address, int state) {
        checkIndex(linkIndex);
        byte[] ip = address.getAddress();
        return new MessageWriter(type, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK | flags)
                .u8(ip.length == 4 ? AF_INET : AF_INET6).u8(0).u16(0).u32(linkIndex).u16(state).u8(0).u8(0)
                .attr(NDA_DST, ip);
    }

    // ---------------------------------------------------------------- decoding

    private static Link decodeLink(ByteBuffer p) {
        int index = p.getInt(4);
        int flags = p.getInt(8);
        Attributes a = Attributes.parse(p.position(16));
        return new Link(index,
                a.string(IFLA_IFNAME).orElse(""),
                a.u32(IFLA_MTU).orElse(0),
                (flags & IFF_UP) != 0,
                a.nested(IFLA_LINKINFO).flatMap(info -> info.string(IFLA_INFO_KIND)),
                a.bytes(IFLA_ADDRESS).filter(b -> b.length > 0).map(Netlink::formatMac));
    }

    /** {@return the route, or null for an entry that is not a plain IPv4/IPv6 route} */
    private static Route decodeRoute(ByteBuffer p) {
        int family = Byte.toUnsignedInt(p.get(0));
        int dstLen = Byte.toUnsignedInt(p.get(1));
        int rtmTable = Byte.toUnsignedInt(p.get(4));
        int protocol = Byte.toUnsignedInt(p.get(5));
        int scope = Byte.toUnsignedInt(p.get(6));
        int type = Byte.toUnsignedInt(p.get(7));
        int flags = p.getInt(8);
        if ((family != AF_INET && family != AF_INET6) || (flags & RTM_F_CLONED) != 0) {
            return null;
        }
        Attributes a = Attributes.parse(p.position(12));
        InetAddress dst = a.address(RTA_DST).orElseGet(() -> zero(family));
        long table = a.u32(RTA_TABLE).map(Integer::toUnsignedLong).orElse((long) rtmTable);
        return new Route(new IpPrefix(dst, dstLen), a.address(RTA_GATEWAY), a.u32(RTA_OIF).orElse(0), table,
                Route.Type.fromCode(type), scope, protocol, a.u32(RTA_PRIORITY).orElse(0),
                (flags & RTNH_F_ONLINK) != 0);
    }

    private static InetAddress zero(int family) {
        try {
            return InetAddress.getByAddress(new byte[family == AF_INET ? 4 : 16]);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    static String formatMac(byte[] b) {
        return HexFormat.ofDelimiter(":").formatHex(b);
    }

    static byte[] parseMac(String mac) {
        if (mac == null || !mac.matches("[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}")) {
            throw new IllegalArgumentException("mac: '" + mac + "' is not of the form aa:bb:cc:dd:ee:ff");
        }
        return HexFormat.ofDelimiter(":").parseHex(mac.toLowerCase());
    }

    private static String checkName(String name) {
        if (name == null || name.isEmpty() || name.length() >= IFNAMSIZ || name.contains("/")
                || name.chars().anyMatch(c -> c <= ' ')) {
            throw new IllegalArgumentException("interface name: '" + name + "' is not a valid Linux interface name");
        }
        return name;
    }

    private static void checkIndex(int linkIndex) {
        if (linkIndex <= 0) {
            throw new IllegalArgumentException("linkIndex: " + linkIndex + " is not a valid ifindex");
        }
    }
}
