package calico.dataplane.wireguard;

import calico.dataplane.netlink.IpPrefix;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * WireGuard's cross-platform userspace API (the {@code key=value} lines wireguard-go serves on
 * its Unix socket): a {@link WireguardChange} as a {@code set=1} request, and the answer to
 * {@code get=1} as a {@link WireguardState}. Keys in hex, ports and marks in decimal, every
 * request and answer ends with an empty line.
 */
final class Uapi {

    static final String GET = "get=1\n\n";

    private Uapi() {
    }

    /** {@return the {@code set=1} request for {@code change}} */
    static String set(WireguardChange change) {
        StringBuilder b = new StringBuilder("set=1\n");
        if (change.privateKey() != null) {
            b.append("private_key=").append(change.privateKey().hex()).append('\n');
        }
        if (change.listenPort() != null) {
            b.append("listen_port=").append(change.listenPort()).append('\n');
        }
        if (change.fwmark() != null) {
            b.append("fwmark=").append(Integer.toUnsignedString(change.fwmark())).append('\n');
        }
        for (WireguardKey k : change.removePeers()) {
            b.append("public_key=").append(k.hex()).append("\nremove=true\n");
        }
        for (WireguardPeer p : change.setPeers()) {
            b.append("public_key=").append(p.publicKey().hex()).append('\n');
            if (p.endpoint() != null) {
                b.append("endpoint=").append(endpoint(p.endpoint())).append('\n');
            }
            b.append("persistent_keepalive_interval=").append(p.keepaliveSeconds()).append('\n');
            b.append("replace_allowed_ips=true\n");
            p.allowedIps().forEach(ip -> b.append("allowed_ip=").append(ip.address().getHostAddress())
                    .append('/').append(ip.length()).append('\n'));
        }
        return b.append('\n').toString();
    }

    static String endpoint(InetSocketAddress a) {
        String host = a.getAddress().getHostAddress();
        return (a.getAddress() instanceof java.net.Inet6Address ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /** {@return the errno of an answer} (0: done); fails on an answer without one */
    static int errno(String answer) {
        for (String line : answer.split("\n")) {
            if (line.startsWith("errno=")) {
                return Integer.parseInt(line.substring(6).strip());
            }
        }
        throw new IllegalArgumentException("WireGuard userspace API: answer without errno: " + answer.strip());
    }

    /** {@return the device's configuration in a {@code get=1} answer} */
    static WireguardState parseGet(String answer) {
        int errno = errno(answer);
        if (errno != 0) {
            throw new IllegalStateException("WireGuard userspace API: get failed with errno " + errno);
        }
        WireguardKey privateKey = null;
        int port = 0;
        int fwmark = 0;
        Map<WireguardKey, PeerBuilder> peers = new LinkedHashMap<>();
        PeerBuilder peer = null;
        for (String line : answer.split("\n")) {
            int eq = line.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String key = line.substring(0, eq);
            String value = line.substring(eq + 1);
            switch (key) {
                case "private_key" -> privateKey = isZero(value) ? null : WireguardKey.fromHex(value);
                case "listen_port" -> port = Integer.parseInt(value);
                case "fwmark" -> fwmark = Integer.parseUnsignedInt(value);
                case "public_key" -> {
                    peer = new PeerBuilder(WireguardKey.fromHex(value));
                    peers.put(peer.key, peer);
                }
                case "endpoint" -> requirePeer(peer, line).endpoint = parseEndpoint(value);
                case "persistent_keepalive_interval" -> requirePeer(peer, line).keepalive = Integer.parseInt(value);
                case "allowed_ip" -> requirePeer(peer, line).allowed.add(IpPrefix.parse(value));
                default -> {
                    // statistics and protocol_version: not configuration
                }
            }
        }
        Map<WireguardKey, WireguardPeer> out = new HashMap<>();
        peers.forEach((k, p) -> out.put(k, new WireguardPeer(k, p.endpoint, p.allowed, p.keepalive)));
        return new WireguardState(privateKey, port, fwmark, out);
    }

    private static boolean isZero(String hex) {
        return hex.chars().allMatch(c -> c == '0');
    }

    private static PeerBuilder requirePeer(PeerBuilder p, String line) {
        if (p == null) {
            throw new IllegalArgumentException("WireGuard userspace API: '" + line + "' before any public_key");
        }
        return p;
    }

    static InetSocketAddress parseEndpoint(String text) {
        int colon = text.lastIndexOf(':');
        String host = text.substring(0, colon);
        if (host.startsWith("[")) {
            host = host.substring(1, host.length() - 1);
        }
        int pct = host.indexOf('%');
        if (pct >= 0) {
            host = host.substring(0, pct);
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(IpPrefix.parse(host).address().getAddress()),
                    Integer.parseInt(text.substring(colon + 1)));
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("endpoint: " + text, e);
        }
    }

    private static final class PeerBuilder {
        final WireguardKey key;
        InetSocketAddress endpoint;
        int keepalive;
        final Set<IpPrefix> allowed = new LinkedHashSet<>();

        PeerBuilder(WireguardKey key) {
            this.key = key;
        }
    }
}
