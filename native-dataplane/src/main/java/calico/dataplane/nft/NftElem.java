package calico.dataplane.nft;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** Set and map elements as libnftables JSON trees. */
public final class NftElem {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private NftElem() {
    }

    /**
     * A CIDR such as {@code 10.0.0.0/8}, or a bare address. A full-length prefix becomes a plain
     * address (how nft lists it back). The set needs {@code flags interval} for real prefixes.
     */
    public static JsonNode cidr(String cidr) {
        if (cidr == null) {
            throw new IllegalArgumentException("cidr: required");
        }
        int slash = cidr.indexOf('/');
        String addr = slash < 0 ? cidr : cidr.substring(0, slash);
        byte[] bytes = parseLiteral(addr, cidr);
        int max = bytes.length * 8;
        int len;
        try {
            len = slash < 0 ? max : Integer.parseInt(cidr.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("cidr: bad prefix length in " + cidr);
        }
        if (len < 0 || len > max) {
            throw new IllegalArgumentException("cidr: prefix length must be 0.." + max + " in " + cidr);
        }
        if (len == max) {
            return JSON.textNode(addr);
        }
        ObjectNode n = JSON.objectNode();
        n.putObject("prefix").put("addr", addr).put("len", len);
        return n;
    }

    /** A port, or a range {@code first-last} (needs an interval set). */
    public static JsonNode port(PortRange p) {
        if (p.single()) {
            return JSON.numberNode(p.first());
        }
        ObjectNode n = JSON.objectNode();
        n.putArray("range").add(p.first()).add(p.last());
        return n;
    }

    /** An interface name, the key of an {@code ifname} map. */
    public static JsonNode ifname(String name) {
        if (name == null || name.isEmpty() || name.length() > 15) {
            throw new IllegalArgumentException("interface name: 1..15 characters, was " + name);
        }
        return JSON.textNode(name);
    }

    /** {@code addr . proto . port}: an element of a {@link SetSpec#namedPorts} set. */
    public static JsonNode namedPort(String addr, String protocol, int port) {
        parseLiteral(addr, addr);
        if (!protocol.equals("tcp") && !protocol.equals("udp") && !protocol.equals("sctp")) {
            throw new IllegalArgumentException("protocol: must be tcp, udp or sctp, was " + protocol);
        }
        PortRange.of(port);
        ObjectNode n = JSON.objectNode();
        ArrayNode a = n.putArray("concat");
        a.add(addr).add(protocol).add(port);
        return n;
    }

    private static byte[] parseLiteral(String addr, String whole) {
        if (addr.indexOf(':') < 0) {
            // IPv4 as nft reads it (inet_pton): four decimal parts. Not InetAddress, which takes
            // "10.1" or "167772161" too and looks anything else up in DNS (as "999.1.1.1" was).
            byte[] v4 = dottedQuad(addr);
            if (v4 == null) {
                throw new IllegalArgumentException("address: not an IP literal: " + whole);
            }
            return v4;
        }
        try {
            return InetAddress.getByName(addr).getAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("address: not an IP literal: " + whole);
        }
    }

    /** {@return {@code s} as four bytes if it is a plain dotted quad (each part 0-255, at most 3 digits)}, else null */
    private static byte[] dottedQuad(String s) {
        byte[] out = new byte[4];
        int part = 0;
        int value = 0;
        int digits = 0;
        for (int i = 0; i <= s.length(); i++) {
            char c = i < s.length() ? s.charAt(i) : '.';
            if (c >= '0' && c <= '9' && digits < 3) {
                value = value * 10 + (c - '0');
                digits++;
            } else if (c == '.' && digits > 0 && value <= 255 && part < 4) {
                out[part++] = (byte) value;
                value = 0;
                digits = 0;
            } else {
                return null;
            }
        }
        return part == 4 ? out : null;
    }
}
