package calico.dataplane.netlink;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Objects;

/**
 * An address with a prefix length: an interface address ({@code 10.0.0.1/24}, host bits kept)
 * or a route destination ({@code 10.0.0.0/24}). IPv4 or IPv6.
 */
public record IpPrefix(InetAddress address, int length) {

    public IpPrefix {
        Objects.requireNonNull(address, "address");
        int max = bits(address);
        if (length < 0 || length > max) {
            throw new IllegalArgumentException("prefix length: " + length + " is outside 0.." + max + " for " + address.getHostAddress());
        }
    }

    /**
     * Parses {@code "10.0.0.0/24"}, {@code "fd00::1/64"} or a bare address (a host prefix).
     * Only literals: never a DNS lookup.
     */
    public static IpPrefix parse(String text) {
        Objects.requireNonNull(text, "prefix");
        int slash = text.indexOf('/');
        String addr = slash < 0 ? text : text.substring(0, slash);
        if (addr.isEmpty() || !addr.matches("[0-9A-Fa-f:.]+")) {
            throw new IllegalArgumentException("prefix: '" + text + "' is not an IP literal");
        }
        InetAddress a;
        try {
            a = InetAddress.getByName(addr); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("prefix: '" + text + "' is not an IP literal", e);
        }
        if (slash < 0) {
            return new IpPrefix(a, bits(a));
        }
        try {
            return new IpPrefix(a, Integer.parseInt(text.substring(slash + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("prefix: '" + text + "' has a non-numeric length", e);
        }
    }

    /** {@return a prefix covering exactly {@code address}} (/32 or /128). */
    public static IpPrefix host(InetAddress address) {
        return new IpPrefix(address, bits(address));
    }

    public boolean isIpv4() {
        return address instanceof Inet4Address;
    }

    /** {@return AF_INET (2) or AF_INET6 (10)} */
    int family() {
        return isIpv4() ? Netlink.AF_INET : Netlink.AF_INET6;
    }

    static int bits(InetAddress a) {
        return a instanceof Inet4Address ? 32 : 128;
    }

    @Override
    public String toString() {
        return address.getHostAddress() + "/" + length;
    }
}
