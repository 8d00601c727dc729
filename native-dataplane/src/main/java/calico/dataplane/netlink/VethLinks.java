package calico.dataplane.netlink;

/**
 * Creating and deleting veth pairs, and moving links between network namespaces, over its own
 * rtnetlink socket (a separate class so {@link Netlink}'s read/route API stays as it is).
 *
 * <p>Like {@link Netlink}, an instance acts on the network namespace of the thread that
 * constructed it, and is not thread-safe.
 */
public final class VethLinks implements AutoCloseable {
    private static final int RTM_NEWLINK = 16;
    private static final int RTM_DELLINK = 17;
    private static final int IFLA_ADDRESS = 1;
    private static final int IFLA_IFNAME = 3;
    private static final int IFLA_MTU = 4;
    private static final int IFLA_LINKINFO = 18;
    private static final int IFLA_NET_NS_FD = 28;
    private static final int IFLA_INFO_KIND = 1;
    private static final int IFLA_INFO_DATA = 2;
    private static final int VETH_INFO_PEER = 1;
    private static final int IFNAMSIZ = 16;

    private final NetlinkSocket socket = new NetlinkSocket();

    /**
     * Creates veth {@code name} here and its peer {@code peerName} in the namespace open as
     * {@code peerNetnsFd} (see {@link NetNamespace#fd()}); both down, both with {@code mtu} (0 =
     * the kernel's default). Exclusive: EEXIST when {@code name} exists here or {@code peerName}
     * exists there, in which case nothing was created.
     */
    public void createVeth(String name, String peerName, int peerNetnsFd, int mtu) {
        checkName("name", name);
        checkName("peerName", peerName);
        if (peerNetnsFd < 0) {
            throw new IllegalArgumentException("peerNetnsFd: " + peerNetnsFd + " is not an open file descriptor");
        }
        if (mtu < 0) {
            throw new IllegalArgumentException("mtu: " + mtu + " is negative");
        }
        MessageWriter w = ifinfo(RTM_NEWLINK, NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_EXCL)
                .attrString(IFLA_IFNAME, name);
        if (mtu > 0) {
            w.attrU32(IFLA_MTU, mtu);
        }
        int info = w.beginNested(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "veth");
        int data = w.beginNested(IFLA_INFO_DATA);
        int peer = w.beginNested(VETH_INFO_PEER);
        // The peer's attributes follow its own ifinfomsg.
        w.u8(0).u8(0).u16(0).u32(0).u32(0).u32(0);
        w.attrString(IFLA_IFNAME, peerName);
        if (mtu > 0) {
            w.attrU32(IFLA_MTU, mtu);
        }
        w.attrU32(IFLA_NET_NS_FD, peerNetnsFd);
        w.endNested(peer);
        w.endNested(data);
        w.endNested(info);
        socket.execute("create veth " + name + " peer " + peerName, w);
    }

    /**
     * Creates link {@code name} of a kind that needs no settings (e.g. {@code wireguard}), down;
     * EEXIST when it exists, EOPNOTSUPP when the kernel has no such kind.
     */
    public void createLink(String name, String kind) {
        checkName("name", name);
        MessageWriter w = ifinfo(RTM_NEWLINK, NetlinkSocket.NLM_F_CREATE | NetlinkSocket.NLM_F_EXCL)
                .attrString(IFLA_IFNAME, name);
        int info = w.beginNested(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, kind);
        w.endNested(info);
        socket.execute("create link " + name + " type " + kind, w);
    }

    /** Moves link {@code name} into the namespace open as {@code netnsFd}. */
    public void moveToNamespace(String name, int netnsFd) {
        checkName("name", name);
        MessageWriter w = ifinfo(RTM_NEWLINK, 0).attrString(IFLA_IFNAME, name).attrU32(IFLA_NET_NS_FD, netnsFd);
        socket.execute("move link " + name + " to netns fd " + netnsFd, w);
    }

    /** Sets the MAC address of link {@code name} ({@code aa:bb:cc:dd:ee:ff}). */
    public void setMac(String name, String mac) {
        checkName("name", name);
        MessageWriter w = ifinfo(RTM_NEWLINK, 0).attrString(IFLA_IFNAME, name).attr(IFLA_ADDRESS, Netlink.parseMac(mac));
        socket.execute("set link " + name + " address " + mac, w);
    }

    /**
     * Deletes link {@code name} (for a veth, both ends go).
     *
     * @return false when there was no such link, so callers can be idempotent
     */
    public boolean deleteLink(String name) {
        checkName("name", name);
        try {
            socket.execute("delete link " + name, ifinfo(RTM_DELLINK, 0).attrString(IFLA_IFNAME, name));
            return true;
        } catch (NetlinkException e) {
            if (e.errno() == Errno.ENODEV) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public void close() {
        socket.close();
    }

    private static MessageWriter ifinfo(int type, int flags) {
        return new MessageWriter(type, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK | flags)
                .u8(Netlink.AF_UNSPEC).u8(0).u16(0).u32(0).u32(0).u32(0);
    }

    private static void checkName(String field, String name) {
        if (name == null || name.isEmpty() || name.length() >= IFNAMSIZ || name.contains("/")
                || name.chars().anyMatch(c -> c <= ' ')) {
            throw new IllegalArgumentException(field + ": '" + name + "' is not a valid Linux interface name");
        }
    }
}
