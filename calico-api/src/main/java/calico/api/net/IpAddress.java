package calico.api.net;

import java.util.Optional;

/**
 * An IPv4 or IPv6 address parsed from its literal form only: never a host name, never a DNS
 * lookup. IPv4 is held in the low 32 bits of {@code low}; IPv6 in {@code high}:{@code low}.
 *
 * <p>Parsing follows Go's {@code net.ParseIP} (Calico's parser): dotted-quad IPv4 without
 * leading zeros; IPv6 with at most one {@code ::}, 1-4 hex digits a group, an optional
 * dotted-quad tail, no zone. An IPv4-mapped address ({@code ::ffff:1.2.3.4}) stays IPv6.
 *
 * <p>Ordering: every IPv4 address before every IPv6 address, then by unsigned value.
 */
public record IpAddress(int version, long high, long low) implements Comparable<IpAddress> {

    public IpAddress {
        if (version != 4 && version != 6) {
            throw new IllegalArgumentException("IP version must be 4 or 6");
        }
        if (version == 4 && (high != 0 || (low >>> 32) != 0)) {
            throw new IllegalArgumentException("IPv4 address must fit in 32 bits");
        }
    }

    /** {@return the address}, or empty when the text is not an IPv4 or IPv6 literal. */
    public static Optional<IpAddress> tryParse(String text) {
        return Optional.ofNullable(parseOrNull(text));
    }

    /** @throws IllegalArgumentException naming the text when it is not an IP literal */
    public static IpAddress parse(String text) {
        IpAddress ip = parseOrNull(text);
        if (ip == null) {
            throw new IllegalArgumentException("\"" + text + "\" is not an IP address");
        }
        return ip;
    }

    /** {@return the address held in 4 (IPv4) or 16 (IPv6) network-order bytes} */
    public static IpAddress of(byte[] bytes) {
        if (bytes.length != 4 && bytes.length != 16) {
            throw new IllegalArgumentException("an IP address has 4 or 16 bytes, not " + bytes.length);
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes.length == 16 && i < 8) {
                hi = (hi << 8) | (bytes[i] & 0xFF);
            } else {
                lo = (lo << 8) | (bytes[i] & 0xFF);
            }
        }
        return new IpAddress(bytes.length == 4 ? 4 : 6, hi, lo);
    }

    /** {@return the address as 4 or 16 network-order bytes} */
    public byte[] toBytes() {
        byte[] out = new byte[bits() / 8];
        for (int i = 0; i < out.length; i++) {
            int fromEnd = out.length - 1 - i;
            long word = fromEnd < 8 ? low : high;
            out[i] = (byte) (word >>> (8 * (fromEnd % 8)));
        }
        return out;
    }

    /** {@return 32 or 128} */
    public int bits() {
        return version == 4 ? 32 : 128;
    }

    /** {@return this address with all bits after the first {@code prefixLength} cleared} */
    public IpAddress mask(int prefixLength) {
        if (prefixLength < 0 || prefixLength > bits()) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " out of range for IPv" + version);
        }
        if (version == 4) {
            long m = prefixLength == 0 ? 0 : (0xFFFF_FFFFL << (32 - prefixLength)) & 0xFFFF_FFFFL;
            return new IpAddress(4, 0, low & m);
        }
        long hm;
        long lm;
        if (prefixLength <= 64) {
            hm = prefixLength == 0 ? 0 : -1L << (64 - prefixLength);
            lm = 0;
        } else {
            hm = -1L;
            lm = -1L << (128 - prefixLength);
        }
        return new IpAddress(6, high & hm, low & lm);
    }

    @Override
    public int compareTo(IpAddress o) {
        int c = Integer.compare(version, o.version);
        if (c == 0) {
            c = Long.compareUnsigned(high, o.high);
        }
        return c != 0 ? c : Long.compareUnsigned(low, o.low);
    }

    /**
     * Dotted quad for IPv4; RFC 5952 for IPv6 (lower case, no leading zeros, the longest run of
     * two or more zero groups, the first on a tie, as {@code ::}), as Go prints them.
     */
    @Override
    public String toString() {
        if (version == 4) {
            return ((low >>> 24) & 0xFF) + "." + ((low >>> 16) & 0xFF) + "." + ((low >>> 8) & 0xFF) + "." + (low & 0xFF);
        }
        int[] g = new int[8];
        for (int i = 0; i < 4; i++) {
            g[i] = (int) ((high >>> (48 - 16 * i)) & 0xFFFF);
            g[i + 4] = (int) ((low >>> (48 - 16 * i)) & 0xFFFF);
        }
        int bestStart = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }

    /** The parser proper; null on any malformation so that {@link #tryParse} never throws. */
    static IpAddress parseOrNull(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        if (text.indexOf(':') >= 0) {
            return parseV6(text);
        }
        long v4 = parseV4(text);
        return v4 < 0 ? null : new IpAddress(4, 0, v4);
    }

    /** {@return the 32-bit value, or -1 when not a strict dotted quad} */
    private static long parseV4(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return -1;
        }
        long v = 0;
        for (String p : parts) {
            // Go rejects leading zeros: they could be read as octal elsewhere.
            int n = p.length() > 1 && p.charAt(0) == '0' ? -1 : decimal(p, 255);
            if (n < 0) {
                return -1;
            }
            v = (v << 8) | n;
        }
        return v;
    }

    private static IpAddress parseV6(String s) {
        int ellipsis = s.indexOf("::");
        if (ellipsis >= 0 && s.indexOf("::", ellipsis + 1) >= 0) {
            return null;
        }
        String head = ellipsis >= 0 ? s.substring(0, ellipsis) : s;
        String tail = ellipsis >= 0 ? s.substring(ellipsis + 2) : "";
        // A dotted-quad tail must end the address, so the head may hold one only without "::".
        int[] headGroups = groups(head, ellipsis < 0);
        int[] tailGroups = groups(tail, true);
        if (headGroups == null || tailGroups == null) {
            return null;
        }
        int total = headGroups.length + tailGroups.length;
        if (ellipsis >= 0 ? total > 7 : total != 8) {
            return null;
        }
        int[] g = new int[8];
        System.arraycopy(headGroups, 0, g, 0, headGroups.length);
        System.arraycopy(tailGroups, 0, g, 8 - tailGroups.length, tailGroups.length);
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 4; i++) {
            hi = (hi << 16) | g[i];
            lo = (lo << 16) | g[i + 4];
        }
        return new IpAddress(6, hi, lo);
    }

    /**
     * Parses colon-separated 16-bit groups; the last may be a dotted quad (two groups) when
     * {@code mayEndWithV4}. {@return the groups, or null when malformed}
     */
    private static int[] groups(String s, boolean mayEndWithV4) {
        if (s.isEmpty()) {
            return new int[0];
        }
        String[] parts = s.split(":", -1);
        int[] out = new int[parts.length + 1];
        int n = 0;
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (p.indexOf('.') >= 0) {
                if (i != parts.length - 1 || !mayEndWithV4) {
                    return null;
                }
                long v4 = parseV4(p);
                if (v4 < 0) {
                    return null;
                }
                out[n++] = (int) (v4 >>> 16);
                out[n++] = (int) (v4 & 0xFFFF);
                continue;
            }
            if (p.isEmpty() || p.length() > 4) {
                return null;
            }
            int v = 0;
            for (int k = 0; k < p.length(); k++) {
                int d = hexDigit(p.charAt(k));
                if (d < 0) {
                    return null;
                }
                v = (v << 4) | d;
            }
            out[n++] = v;
        }
        return java.util.Arrays.copyOf(out, n);
    }

    /** {@return the ASCII decimal value of the whole text}, or -1 when empty, not all digits, or over {@code max} */
    static int decimal(String s, int max) {
        if (s.isEmpty()) {
            return -1;
        }
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
            if (n > max) {
                return -1;
            }
        }
        return n;
    }

    /** ASCII only: {@code Character.digit} would also take other scripts' digits, which Go rejects. */
    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
