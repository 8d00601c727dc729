package calico.dataplane.wireguard;

import calico.dataplane.netlink.GenericMessage;
import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.netlink.NetlinkAttribute;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The kernel module's generic netlink messages ({@code WG_CMD_SET_DEVICE}, the answer to
 * {@code WG_CMD_GET_DEVICE}): the genl header, then attributes in host byte order, except the
 * endpoint, a {@code sockaddr_in}/{@code sockaddr_in6} whose port is in network order. Nested
 * attributes carry {@code NLA_F_NESTED}, as {@code wg} sends them.
 */
final class WireguardNetlink {
    static final int VERSION = 1;
    static final int CMD_GET_DEVICE = 0;
    static final int CMD_SET_DEVICE = 1;

    static final int DEVICE_IFNAME = 2;
    static final int DEVICE_PRIVATE_KEY = 3;
    static final int DEVICE_LISTEN_PORT = 6;
    static final int DEVICE_FWMARK = 7;
    static final int DEVICE_PEERS = 8;

    static final int PEER_PUBLIC_KEY = 1;
    static final int PEER_FLAGS = 3;
    static final int PEER_ENDPOINT = 4;
    static final int PEER_KEEPALIVE = 5;
    static final int PEER_ALLOWEDIPS = 9;
    static final int PEER_F_REMOVE_ME = 1;
    static final int PEER_F_REPLACE_ALLOWEDIPS = 2;

    static final int ALLOWEDIP_FAMILY = 1;
    static final int ALLOWEDIP_IPADDR = 2;
    static final int ALLOWEDIP_CIDR_MASK = 3;

    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    private WireguardNetlink() {
    }

    /** {@return the payload of a {@code WG_CMD_GET_DEVICE} dump request for {@code ifname}} */
    static byte[] get(String ifname) {
        GenericMessage w = new GenericMessage(CMD_GET_DEVICE, VERSION);
        w.string(DEVICE_IFNAME, ifname);
        return w.bytes();
    }

    /** {@return the payload of a {@code WG_CMD_SET_DEVICE} request making {@code change} on {@code ifname}} */
    static byte[] set(String ifname, WireguardChange change) {
        GenericMessage w = new GenericMessage(CMD_SET_DEVICE, VERSION);
        w.string(DEVICE_IFNAME, ifname);
        if (change.privateKey() != null) {
            w.attr(DEVICE_PRIVATE_KEY, change.privateKey().bytes());
        }
        if (change.listenPort() != null) {
            w.u16(DEVICE_LISTEN_PORT, change.listenPort());
        }
        if (change.fwmark() != null) {
            w.u32(DEVICE_FWMARK, change.fwmark());
        }
        if (!change.removePeers().isEmpty() || !change.setPeers().isEmpty()) {
            int peers = w.begin(DEVICE_PEERS);
            for (WireguardKey k : change.removePeers()) {
                int p = w.begin(0);
                w.attr(PEER_PUBLIC_KEY, k.bytes());
                w.u32(PEER_FLAGS, PEER_F_REMOVE_ME);
                w.end(p);
            }
            for (WireguardPeer peer : change.setPeers()) {
                int p = w.begin(0);
                w.attr(PEER_PUBLIC_KEY, peer.publicKey().bytes());
                w.u32(PEER_FLAGS, PEER_F_REPLACE_ALLOWEDIPS);
                if (peer.endpoint() != null) {
                    w.attr(PEER_ENDPOINT, sockaddr(peer.endpoint()));
                }
                w.u16(PEER_KEEPALIVE, peer.keepaliveSeconds());
                int ips = w.begin(PEER_ALLOWEDIPS);
                for (IpPrefix ip : peer.allowedIps()) {
                    int a = w.begin(0);
                    w.u16(ALLOWEDIP_FAMILY, ip.isIpv4() ? AF_INET : AF_INET6);
                    w.attr(ALLOWEDIP_IPADDR, ip.address().getAddress());
                    w.attr(ALLOWEDIP_CIDR_MASK, new byte[] {(byte) ip.length()});
                    w.end(a);
                }
                w.end(ips);
                w.end(p);
            }
            w.end(peers);
        }
        return w.bytes();
    }

    /** {@code sockaddr_in} (16 bytes) or {@code sockaddr_in6} (28 bytes): family in host order, port in network order. */
    static byte[] sockaddr(InetSocketAddress a) {
        boolean v4 = a.getAddress() instanceof Inet4Address;
        ByteBuffer b = ByteBuffer.allocate(v4 ? 16 : 28).order(ByteOrder.nativeOrder());
        b.putShort((short) (v4 ? AF_INET : AF_INET6));
        b.order(ByteOrder.BIG_ENDIAN).putShort((short) a.getPort());
        if (!v4) {
            b.putInt(0); // flowinfo
        }
        b.put(a.getAddress().getAddress());
        return b.array();
    }

    static InetSocketAddress parseSockaddr(byte[] raw) {
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
        int family = Short.toUnsignedInt(b.getShort());
        int port = Short.toUnsignedInt(b.order(ByteOrder.BIG_ENDIAN).getShort());
        byte[] addr = new byte[family == AF_INET ? 4 : 16];
        if (family != AF_INET) {
            b.getInt();
        }
        b.get(addr);
        try {
            return port == 0 && allZero(addr) ? null : new InetSocketAddress(InetAddress.getByAddress(addr), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * {@return the device's configuration from the replies of a get dump} (genl header first): a
     * large device comes in several messages, the same peer continuing in the next one.
     */
    static WireguardState parseGet(List<ByteBuffer> replies) {
        WireguardKey privateKey = null;
        int port = 0;
        int fwmark = 0;
        Map<WireguardKey, PeerParts> peers = new LinkedHashMap<>();
        for (ByteBuffer reply : replies) {
            ByteBuffer b = reply.duplicate().order(ByteOrder.nativeOrder());
            b.position(b.position() + 4);
            for (NetlinkAttribute a : NetlinkAttribute.parseAll(b)) {
                switch (a.type()) {
                    case DEVICE_PRIVATE_KEY -> privateKey = allZero(a.value()) ? null : WireguardKey.of(a.value());
                    case DEVICE_LISTEN_PORT -> port = a.u16();
                    case DEVICE_FWMARK -> fwmark = a.u32();
                    case DEVICE_PEERS -> {
                        for (NetlinkAttribute p : a.nested()) {
                            parsePeer(p.nested(), peers);
                        }
                    }
                    default -> {
                    }
                }
            }
        }
        Map<WireguardKey, WireguardPeer> out = new LinkedHashMap<>();
        peers.forEach((k, p) -> out.put(k, new WireguardPeer(k, p.endpoint, p.allowed, p.keepalive)));
        return new WireguardState(privateKey, port, fwmark, out);
    }

    private static void parsePeer(List<NetlinkAttribute> attrs, Map<WireguardKey, PeerParts> peers) {
        PeerParts p = null;
        for (NetlinkAttribute a : attrs) {
            if (a.type() == PEER_PUBLIC_KEY) {
                p = peers.computeIfAbsent(WireguardKey.of(a.value()), PeerParts::new);
            }
        }
        if (p == null) {
            return;
        }
        for (NetlinkAttribute a : attrs) {
            switch (a.type()) {
                case PEER_ENDPOINT -> p.endpoint = parseSockaddr(a.value());
                case PEER_KEEPALIVE -> p.keepalive = a.u16();
                case PEER_ALLOWEDIPS -> {
                    for (NetlinkAttribute ip : a.nested()) {
                        byte[] addr = null;
                        int mask = -1;
                        for (NetlinkAttribute f : ip.nested()) {
                            if (f.type() == ALLOWEDIP_IPADDR) {
                                addr = f.value();
                            } else if (f.type() == ALLOWEDIP_CIDR_MASK) {
                                mask = Byte.toUnsignedInt(f.value()[0]);
                            }
                        }
                        if (addr != null && mask >= 0) {
                            try {
                                p.allowed.add(new IpPrefix(InetAddress.getByAddress(addr), mask));
                            } catch (UnknownHostException e) {
                                throw new IllegalStateException(e);
                            }
                        }
                    }
                }
                default -> {
                }
            }
        }
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static final class PeerParts {
        final WireguardKey key;
        InetSocketAddress endpoint;
        int keepalive;
        final Set<IpPrefix> allowed = new LinkedHashSet<>();

        PeerParts(WireguardKey key) {
            this.key = key;
        }
    }
}
