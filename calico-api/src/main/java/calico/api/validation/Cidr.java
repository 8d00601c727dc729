package calico.api.validation;

import java.util.Optional;

/**
 * An IP network written as {@code address/prefixLength}. The address is kept as written, so
 * {@link #isStrictlyMasked()} can tell {@code 10.0.0.1/8} from {@code 10.0.0.0/8}.
 */
public record Cidr(IpAddress address, int prefixLength) {

    public Cidr {
        if (prefixLength < 0 || prefixLength > address.bits()) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " out of range");
        }
    }

    /** {@return the CIDR}, or empty unless the text is {@code <ip>/<prefix>}. */
    public static Optional<Cidr> tryParse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        int slash = text.indexOf('/');
        if (slash < 0) {
            return Optional.empty();
        }
        Optional<IpAddress> ip = IpAddress.tryParse(text.substring(0, slash));
        if (ip.isEmpty()) {
            return Optional.empty();
        }
        int prefix = parsePrefix(text.substring(slash + 1));
        if (prefix < 0 || prefix > ip.get().bits()) {
            return Optional.empty();
        }
        return Optional.of(new Cidr(ip.get(), prefix));
    }

    /** Like {@link #tryParse} but a bare address is accepted as a full-length prefix (/32, /128). */
    public static Optional<Cidr> tryParseCidrOrIp(String text) {
        if (text != null && text.indexOf('/') < 0) {
            return IpAddress.tryParse(text).map(ip -> new Cidr(ip, ip.bits()));
        }
        return tryParse(text);
    }

    /** @throws IllegalArgumentException when the text is not a CIDR */
    public static Cidr parse(String text) {
        return tryParse(text).orElseThrow(() -> new IllegalArgumentException("\"" + text + "\" is not a valid CIDR"));
    }

    public int version() {
        return address.version();
    }

    /** {@return the network: the address with host bits cleared} */
    public Cidr network() {
        return new Cidr(address.mask(prefixLength), prefixLength);
    }

    /** {@return whether no host bits are set, as Calico requires of pools and rule nets} */
    public boolean isStrictlyMasked() {
        return address.mask(prefixLength).equals(address);
    }

    public boolean contains(IpAddress ip) {
        return ip.version() == version() && ip.mask(prefixLength).equals(address.mask(prefixLength));
    }

    /** {@return whether the two networks share at least one address} */
    public boolean overlaps(Cidr other) {
        if (other.version() != version()) {
            return false;
        }
        int p = Math.min(prefixLength, other.prefixLength);
        return address.mask(p).equals(other.address.mask(p));
    }

    @Override
    public String toString() {
        return address + "/" + prefixLength;
    }

    private static int parsePrefix(String s) {
        if (s.isEmpty() || s.length() > 3 || (s.length() > 1 && s.charAt(0) == '0')) {
            return -1;
        }
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }
}
