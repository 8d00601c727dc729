package calico.dataplane.wireguard;

import calico.dataplane.netlink.IpPrefix;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.Comparator;

/**
 * One peer of a WireGuard device, as configured (no statistics).
 *
 * @param endpoint          where its packets go; {@code null} until known
 * @param allowedIps        what it may send from and what is routed to it, as networks (host
 *                          bits cleared here, as the device stores them, so a read-back compares equal)
 * @param keepaliveSeconds  {@code persistent_keepalive_interval}, 0 = off
 */
public record WireguardPeer(WireguardKey publicKey, InetSocketAddress endpoint, Set<IpPrefix> allowedIps,
                            int keepaliveSeconds) {

    static final Comparator<IpPrefix> ORDER = Comparator.comparing((IpPrefix p) -> p.isIpv4() ? 0 : 1)
            .thenComparing(p -> p.address().getHostAddress()).thenComparingInt(IpPrefix::length);

    public WireguardPeer {
        Objects.requireNonNull(publicKey, "publicKey");
        if (endpoint != null && endpoint.isUnresolved()) {
            throw new IllegalArgumentException("endpoint: " + endpoint + " is not an address");
        }
        TreeSet<IpPrefix> nets = new TreeSet<>(ORDER);
        allowedIps.forEach(p -> nets.add(network(p)));
        allowedIps = java.util.Collections.unmodifiableSet(nets);
        if (keepaliveSeconds < 0 || keepaliveSeconds > 65535) {
            throw new IllegalArgumentException("keepaliveSeconds: " + keepaliveSeconds + " is outside 0..65535");
        }
    }

    /** {@return {@code p} with its host bits cleared} */
    static IpPrefix network(IpPrefix p) {
        byte[] a = p.address().getAddress();
        for (int bit = p.length(); bit < a.length * 8; bit++) {
            a[bit / 8] &= (byte) ~(0x80 >> (bit % 8));
        }
        try {
            return new IpPrefix(InetAddress.getByAddress(a), p.length());
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
