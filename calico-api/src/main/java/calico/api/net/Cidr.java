package calico.api.net;

import java.util.Optional;

/**
 * An IP network written as {@code address/prefixLength}. The address is kept as written, host
 * bits and all, so {@link #isStrictlyMasked()} can tell {@code 10.0.0.1/8} from
 * {@code 10.0.0.0/8}; {@link #network()} clears them, as Go's {@code net.ParseCIDR} does for
 * the network it returns. Equality is therefore textual-canonical: {@code 10.0.0.1/8} and
 * {@code 10.0.0.0/8} are different values with equal networks.
 */
public record Cidr(IpAddress address, int prefixLength) {

    public Cidr {
        if (address == null) {
            throw new IllegalArgumentException("a CIDR needs an address");
        }
        if (prefixLength < 0 || prefixLength > address.bits()) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " out of range for IPv"
                    + address.version());
        }
    }

    /** {@return the single-address network {@code ip/32} or {@code ip/128}} */
    public static Cidr of(IpAddress ip) {
        return new Cidr(ip, ip.bits());
    }

    /** {@return the CIDR}, or empty unless the text is {@code <ip>/<prefix length>}. */
    public static Optional<Cidr> tryParse(String text) {
        return Optional.ofNullable(parseOrNull(text));
    }

    /** @throws IllegalArgumentException saying what is wrong unless the text is {@code <ip>/<prefix length>} */
    public static Cidr parse(String text) {
        Cidr c = parseOrNull(text);
        if (c == null) {
            throw new IllegalArgumentException(problem(text));
        }
        return c;
    }

    /** Like {@link #tryParse} but a bare address is accepted as a full-length prefix (/32, /128). */
    public static Optional<Cidr> tryParseCidrOrIp(String text) {
        if (text != null && text.indexOf('/') < 0) {
            return IpAddress.tryParse(text).map(Cidr::of);
        }
        return tryParse(text);
    }

    /** Like {@link #parse} but a bare address is accepted as a full-length prefix (/32, /128). */
    public static Cidr parseCidrOrIp(String text) {
        if (text != null && text.indexOf('/') < 0) {
            return of(IpAddress.parse(text));
        }
        return parse(text);
    }

    public int version() {
        return address.version();
    }

    /** {@return the network: the address with host bits cleared} */
    public Cidr network() {
        return isStrictlyMasked() ? this : new Cidr(address.mask(prefixLength), prefixLength);
    }

    /** {@return whether no host bits are set, as Calico requires of pools and rule nets} */
    public boolean isStrictlyMasked() {
        return address.mask(prefixLength).equals(address);
    }

    /** {@return whether this is one address: /32 or /128} */
    public boolean isSingleAddress() {
        return prefixLength == address.bits();
    }

    /** {@return whether the address is in this network}; never across IP versions. */
    public boolean contains(IpAddress ip) {
        return ip.version() == version() && ip.mask(prefixLength).equals(address.mask(prefixLength));
    }

    /** {@return whether every address of {@code other} is in this network}; never across IP versions. */
    public boolean contains(Cidr other) {
        return other.version() == version() && other.prefixLength >= prefixLength && contains(other.address);
    }

    /** {@return whether the two networks share at least one address}; never across IP versions. */
    public boolean overlaps(Cidr other) {
        if (other.version() != version()) {
            return false;
        }
        int p = Math.min(prefixLength, other.prefixLength);
        return address.mask(p).equals(other.address.mask(p));
    }

    /** {@return the canonical address as written, then the prefix length}, e.g. {@code 2001:db8::1/64} */
    @Override
    public String toString() {
        return address + "/" + prefixLength;
    }

    private static Cidr parseOrNull(String text) {
        int slash = text == null ? -1 : text.indexOf('/');
        if (slash < 0) {
            return null;
        }
        IpAddress ip = IpAddress.parseOrNull(text.substring(0, slash));
        if (ip == null) {
            return null;
        }
        int prefix = parsePrefix(text.substring(slash + 1));
        return prefix < 0 || prefix > ip.bits() ? null : new Cidr(ip, prefix);
    }

    /**
     * Decimal digits only, as Go's {@code net.ParseCIDR} reads them: leading zeros are allowed
     * ({@code /08} is 8), signs and spaces are not. {@return the value, or -1 when malformed}
     */
    private static int parsePrefix(String s) {
        return IpAddress.decimal(s, 999); // over 128 is refused by the caller, with its own message
    }

    /** Says why {@link #parseOrNull} refused the text; only called on failure. */
    private static String problem(String text) {
        int slash = text == null ? -1 : text.indexOf('/');
        if (slash < 0) {
            return "\"" + text + "\" is not a CIDR (expected address/prefix-length)";
        }
        IpAddress ip = IpAddress.parseOrNull(text.substring(0, slash));
        if (ip == null) {
            return "\"" + text + "\" is not a CIDR: \"" + text.substring(0, slash) + "\" is not an IP address";
        }
        int prefix = parsePrefix(text.substring(slash + 1));
        if (prefix < 0) {
            return "\"" + text + "\" has an invalid prefix length";
        }
        return "\"" + text + "\" has a prefix length over " + ip.bits();
    }
}
