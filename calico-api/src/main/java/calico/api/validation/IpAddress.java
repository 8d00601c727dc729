package calico.api.validation;

import java.util.Optional;

/**
 * An IPv4 or IPv6 address parsed from its literal form only (never a host name, never a DNS
 * lookup). IPv4 is held in the low 32 bits of {@code low}; IPv6 in {@code high}:{@code low}.
 *
 * <p>Parsing follows Go's {@code net.ParseIP}, which Calico uses: dotted-quad IPv4 without
 * leading zeros, IPv6 with at most one {@code ::} and an optional dotted-quad tail, no zone.
 */
public record IpAddress(int version, long high, long low) {

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
        if (text == null || text.isEmpty()) {
            return Optional.empty();
        }
        if (text.indexOf(':') >= 0) {
            return parseV6(text);
        }
        long v4 = parseV4(text);
        return v4 < 0 ? Optional.empty() : Optional.of(new IpAddress(4, 0, v4));
    }

    /** @throws IllegalArgumentException when the text is not an IP literal */
    public static IpAddress parse(String text) {
        return tryParse(text).orElseThrow(
                () -> new IllegalArgumentException("\"" + text + "\" is not an IPv4 or IPv6 address"));
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

    /** Dotted quad for IPv4; RFC 5952 form (lowercase, longest zero run as {@code ::}) for IPv6. */
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
        StringBuilder sb = new StringBuilder();
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

    /** {@return the 32-bit value, or -1 when not a strict dotted quad} */
    private static long parseV4(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return -1;
        }
        long v = 0;
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || (p.length() > 1 && p.charAt(0) == '0')) {
                return -1;
            }
            int n = 0;
            for (int i = 0; i < p.length(); i++) {
                char c = p.charAt(i);
                if (c < '0' || c > '9') {
                    return -1;
                }
                n = n * 10 + (c - '0');
            }
            if (n > 255) {
                return -1;
            }
            v = (v << 8) | n;
        }
        return v;
    }

    private static Optional<IpAddress> parseV6(String s) {
        int ellipsis = s.indexOf("::");
        if (ellipsis >= 0 && s.indexOf("::", ellipsis + 1) >= 0) {
            return Optional.empty();
        }
        String head = ellipsis >= 0 ? s.substring(0, ellipsis) : s;
        String tail = ellipsis >= 0 ? s.substring(ellipsis + 2) : "";
        int[] headGroups = groups(head, ellipsis < 0);
        int[] tailGroups = groups(tail, true);
        if (headGroups == null || tailGroups == null) {
            return Optional.empty();
        }
        int total = headGroups.length + tailGroups.length;
        if (ellipsis >= 0 ? total > 7 : total != 8) {
            return Optional.empty();
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
        return Optional.of(new IpAddress(6, hi, lo));
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
                int d = Character.digit(p.charAt(k), 16);
                if (d < 0) {
                    return null;
                }
                v = (v << 4) | d;
            }
            out[n++] = v;
        }
        return java.util.Arrays.copyOf(out, n);
    }
}
