package calico.api.k8s;

import java.util.Locale;

/**
 * Parses and prints IP addresses and CIDRs in the canonical text form Calico produces (Go's
 * {@code net} package): IPv4 dotted quads, IPv6 in RFC 5952 form. Never resolves host names.
 */
final class Cidrs {

    private Cidrs() {
    }

    /** A parsed address with its prefix length; {@code bytes} is 4 or 16 long. */
    record Cidr(byte[] bytes, int prefix) {

        boolean isV4() {
            return bytes.length == 4;
        }

        /** {@return this CIDR with the host bits cleared}, as Go's {@code ParseCIDR} returns the network. */
        Cidr masked() {
            byte[] out = bytes.clone();
            for (int bit = prefix; bit < out.length * 8; bit++) {
                out[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
            }
            return new Cidr(out, prefix);
        }

        @Override
        public String toString() {
            return format(bytes) + "/" + prefix;
        }
    }

    /**
     * Parses {@code "addr/len"}; the host bits are cleared, as Kubernetes ipBlock CIDRs are
     * interpreted by Calico.
     */
    static Cidr parseNetwork(String text) {
        int slash = text == null ? -1 : text.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("\"" + text + "\" is not a CIDR (expected address/prefix-length)");
        }
        return parseWithPrefix(text, slash).masked();
    }

    /** Parses an address ({@code /32} or {@code /128} implied) or {@code "addr/len"}, keeping the host bits. */
    static Cidr parseAddressOrCidr(String text) {
        String t = text == null ? "" : text.trim();
        int slash = t.indexOf('/');
        if (slash >= 0) {
            return parseWithPrefix(t, slash);
        }
        byte[] addr = parseAddress(t);
        return new Cidr(addr, addr.length * 8);
    }

    private static Cidr parseWithPrefix(String text, int slash) {
        byte[] addr = parseAddress(text.substring(0, slash));
        String len = text.substring(slash + 1);
        if (len.isEmpty() || len.length() > 3 || !len.chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("\"" + text + "\" has an invalid prefix length");
        }
        int prefix = Integer.parseInt(len);
        if (prefix > addr.length * 8) {
            throw new IllegalArgumentException("\"" + text + "\" has a prefix length over " + addr.length * 8);
        }
        return new Cidr(addr, prefix);
    }

    static byte[] parseAddress(String text) {
        if (text.indexOf(':') >= 0) {
            return parseV6(text);
        }
        return parseV4(text, text);
    }

    private static byte[] parseV4(String text, String whole) {
        String[] parts = text.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("\"" + whole + "\" is not an IP address");
        }
        byte[] out = new byte[4];
        for (int i = 0; i < 4; i++) {
            String p = parts[i];
            // Go rejects leading zeros (ambiguous octal) and so do we.
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit)
                    || (p.length() > 1 && p.charAt(0) == '0') || Integer.parseInt(p) > 255) {
                throw new IllegalArgumentException("\"" + whole + "\" is not an IP address");
            }
            out[i] = (byte) Integer.parseInt(p);
        }
        return out;
    }

    private static byte[] parseV6(String text) {
        String bad = "\"" + text + "\" is not an IP address";
        int dc = text.indexOf("::");
        if (dc >= 0 && text.indexOf("::", dc + 1) >= 0) {
            throw new IllegalArgumentException(bad);
        }
        String head = dc >= 0 ? text.substring(0, dc) : text;
        String tail = dc >= 0 ? text.substring(dc + 2) : "";
        int[] h = groups(head, text, bad);
        int[] t = groups(tail, text, bad);
        int total = h.length + t.length;
        if ((dc < 0 && total != 8) || (dc >= 0 && total > 7)) {
            throw new IllegalArgumentException(bad);
        }
        int[] all = new int[8];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(t, 0, all, 8 - t.length, t.length);
        byte[] out = new byte[16];
        for (int i = 0; i < 8; i++) {
            out[2 * i] = (byte) (all[i] >>> 8);
            out[2 * i + 1] = (byte) all[i];
        }
        return out;
    }

    /** Parses colon-separated hex groups; an embedded IPv4 tail counts as two groups. */
    private static int[] groups(String s, String whole, String bad) {
        if (s.isEmpty()) {
            return new int[0];
        }
        String[] parts = s.split(":", -1);
        int n = parts.length;
        boolean v4Tail = parts[n - 1].indexOf('.') >= 0;
        int[] out = new int[v4Tail ? n + 1 : n];
        for (int i = 0; i < n; i++) {
            String p = parts[i];
            if (i == n - 1 && v4Tail) {
                byte[] v4 = parseV4(p, whole);
                out[i] = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
                out[i + 1] = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
                continue;
            }
            if (p.isEmpty() || p.length() > 4 || !p.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
                throw new IllegalArgumentException(bad);
            }
            out[i] = Integer.parseInt(p, 16);
        }
        return out;
    }

    /** Formats an address as Go does: dotted quad, or RFC 5952 (longest zero run of 2+ groups as "::"). */
    static String format(byte[] addr) {
        if (addr.length == 4) {
            return (addr[0] & 0xff) + "." + (addr[1] & 0xff) + "." + (addr[2] & 0xff) + "." + (addr[3] & 0xff);
        }
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((addr[2 * i] & 0xff) << 8) | (addr[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 0;
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
        if (bestLen < 2) {
            bestStart = -1;
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
            sb.append(Integer.toHexString(g[i]).toLowerCase(Locale.ROOT));
        }
        return sb.toString();
    }
}
