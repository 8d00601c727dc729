package calico.dataplane.nft;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Set;

/**
 * Typed builders for the rule statements felix needs, as libnftables JSON trees. Anything else
 * can be written as a JSON tree directly and mixed in.
 */
public final class NftExpr {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final Set<String> CT_STATES = Set.of("invalid", "established", "related", "new", "untracked");
    private static final Set<String> L4 = Set.of("tcp", "udp", "sctp", "th");

    private NftExpr() {
    }

    // --- left-hand sides ---

    public static ObjectNode meta(String key) {
        ObjectNode n = JSON.objectNode();
        n.putObject("meta").put("key", key);
        return n;
    }

    public static ObjectNode payload(String protocol, String field) {
        ObjectNode n = JSON.objectNode();
        n.putObject("payload").put("protocol", protocol).put("field", field);
        return n;
    }

    /** {@code a . b . c}: the key of a concatenated set lookup. */
    public static ObjectNode concat(JsonNode... parts) {
        ObjectNode n = JSON.objectNode();
        ArrayNode a = n.putArray("concat");
        for (JsonNode p : parts) {
            a.add(p.deepCopy());
        }
        return n;
    }

    /** {@return a reference to a named set or map, {@code @name}} */
    public static JsonNode setRef(String set) {
        NftBatch.requireName("set name", set);
        return JSON.textNode("@" + set);
    }

    // --- matches ---

    /** {@code left op right}; op is {@code ==}, {@code !=}, {@code in}, {@code <}, ... */
    public static ObjectNode match(String op, JsonNode left, JsonNode right) {
        ObjectNode n = JSON.objectNode();
        n.putObject("match").put("op", op).<ObjectNode>set("left", left.deepCopy()).set("right", right.deepCopy());
        return n;
    }

    public static ObjectNode iifname(String name) {
        return match("==", meta("iifname"), JSON.textNode(requireIfname(name)));
    }

    public static ObjectNode oifname(String name) {
        return match("==", meta("oifname"), JSON.textNode(requireIfname(name)));
    }

    /** {@code ip saddr @set} (ipVersion 4) or {@code ip6 saddr @set} (6). */
    public static ObjectNode saddrInSet(int ipVersion, String set) {
        return match("==", payload(ipProto(ipVersion), "saddr"), setRef(set));
    }

    /** {@code ip daddr @set} (ipVersion 4) or {@code ip6 daddr @set} (6). */
    public static ObjectNode daddrInSet(int ipVersion, String set) {
        return match("==", payload(ipProto(ipVersion), "daddr"), setRef(set));
    }

    /** {@code ip saddr != @set}. */
    public static ObjectNode saddrNotInSet(int ipVersion, String set) {
        return match("!=", payload(ipProto(ipVersion), "saddr"), setRef(set));
    }

    /** {@code meta l4proto tcp} (by protocol name). */
    public static ObjectNode l4proto(String protocol) {
        return match("==", meta("l4proto"), JSON.textNode(protocol));
    }

    /** {@code <proto> dport { ports and ranges }}; proto is tcp, udp, sctp or th. */
    public static ObjectNode dportIn(String protocol, List<PortRange> ports) {
        return portMatch(protocol, "dport", ports);
    }

    /** {@code <proto> sport { ports and ranges }}. */
    public static ObjectNode sportIn(String protocol, List<PortRange> ports) {
        return portMatch(protocol, "sport", ports);
    }

    /** {@code <proto> dport @set} for a named set of {@code inet_service}. */
    public static ObjectNode dportInSet(String protocol, String set) {
        requireL4(protocol);
        return match("==", payload(protocol, "dport"), setRef(set));
    }

    /** {@code ip daddr . meta l4proto . th dport @set}: named-port membership (see {@link SetSpec#namedPorts}). */
    public static ObjectNode daddrProtoDportInSet(int ipVersion, String set) {
        return match("==", concat(payload(ipProto(ipVersion), "daddr"), meta("l4proto"), payload("th", "dport")), setRef(set));
    }

    /** {@code ip saddr . meta l4proto . th dport @set}: named ports on the source side of a rule. */
    public static ObjectNode saddrProtoDportInSet(int ipVersion, String set) {
        return match("==", concat(payload(ipProto(ipVersion), "saddr"), meta("l4proto"), payload("th", "dport")), setRef(set));
    }

    /** {@code ct state { states }}. */
    public static ObjectNode ctState(String... states) {
        ArrayNode a = JSON.arrayNode();
        for (String s : states) {
            if (!CT_STATES.contains(s)) {
                throw new IllegalArgumentException("ct state: must be one of " + CT_STATES + ", was " + s);
            }
            a.add(s);
        }
        ObjectNode ct = JSON.objectNode();
        ct.putObject("ct").put("key", "state");
        return match("in", ct, a);
    }

    /** {@code meta mark & mask == value}: tests mark bits (value must lie within mask). */
    public static ObjectNode markMatches(long mask, long value) {
        requireMark("mark mask", mask);
        requireMark("mark value", value);
        if ((value & ~mask) != 0) {
            throw new IllegalArgumentException("mark value: 0x" + Long.toHexString(value) + " has bits outside mask 0x" + Long.toHexString(mask));
        }
        return match("==", binop("&", meta("mark"), JSON.numberNode(mask)), JSON.numberNode(value));
    }

    /** {@code meta mark & bits != 0}: any of {@code bits} set. */
    public static ObjectNode markAnySet(long bits) {
        requireMark("mark bits", bits);
        return match("!=", binop("&", meta("mark"), JSON.numberNode(bits)), JSON.numberNode(0));
    }

    // --- statements ---

    /** {@code meta mark set meta mark | bits}: sets bits, keeps the others. */
    public static ObjectNode setMarkBits(long bits) {
        requireMark("mark bits", bits);
        return mangleMark(binop("|", meta("mark"), JSON.numberNode(bits)));
    }

    /** {@code meta mark set meta mark & ~bits}: clears bits, keeps the others. */
    public static ObjectNode clearMarkBits(long bits) {
        requireMark("mark bits", bits);
        return mangleMark(binop("&", meta("mark"), JSON.numberNode(~bits & 0xffffffffL)));
    }

    public static ObjectNode counter() {
        return JSON.objectNode().set("counter", NullNode.instance);
    }

    /** {@code log prefix "..." [group n]}; group null logs to the kernel log, else to nflog group. */
    public static ObjectNode log(String prefix, Integer group) {
        if (prefix == null || prefix.length() > 127) {
            throw new IllegalArgumentException("log prefix: required, at most 127 characters");
        }
        ObjectNode n = JSON.objectNode();
        ObjectNode l = n.putObject("log").put("prefix", prefix);
        if (group != null) {
            if (group < 0 || group > 65535) {
                throw new IllegalArgumentException("log group: must be 0..65535, was " + group);
            }
            l.put("group", group);
        }
        return n;
    }

    // --- verdicts ---

    public static ObjectNode accept() {
        return JSON.objectNode().set("accept", NullNode.instance);
    }

    public static ObjectNode drop() {
        return JSON.objectNode().set("drop", NullNode.instance);
    }

    /** {@code return}: back to the chain that jumped here. */
    public static ObjectNode returnVerdict() {
        return JSON.objectNode().set("return", NullNode.instance);
    }

    public static ObjectNode jump(String chain) {
        return chainVerdict("jump", chain);
    }

    /** {@code goto}: like jump, but a return from the target returns past this chain. */
    public static ObjectNode goTo(String chain) {
        return chainVerdict("goto", chain);
    }

    /** {@code <key> vmap @map}: dispatch on the map's verdict for key. */
    public static ObjectNode vmap(JsonNode key, String map) {
        ObjectNode n = JSON.objectNode();
        n.putObject("vmap").<ObjectNode>set("key", key.deepCopy()).set("data", setRef(map));
        return n;
    }

    /** {@code iifname vmap @map}: per-interface dispatch on the incoming interface. */
    public static ObjectNode iifnameVmap(String map) {
        return vmap(meta("iifname"), map);
    }

    /** {@code oifname vmap @map}: per-interface dispatch on the outgoing interface. */
    public static ObjectNode oifnameVmap(String map) {
        return vmap(meta("oifname"), map);
    }

    // --- helpers ---

    private static ObjectNode chainVerdict(String verb, String chain) {
        NftBatch.requireName("chain name", chain);
        ObjectNode n = JSON.objectNode();
        n.putObject(verb).put("target", chain);
        return n;
    }

    private static ObjectNode binop(String op, JsonNode a, JsonNode b) {
        ObjectNode n = JSON.objectNode();
        n.putArray(op).add(a).add(b);
        return n;
    }

    private static ObjectNode mangleMark(JsonNode value) {
        ObjectNode n = JSON.objectNode();
        n.putObject("mangle").<ObjectNode>set("key", meta("mark")).set("value", value);
        return n;
    }

    private static ObjectNode portMatch(String protocol, String field, List<PortRange> ports) {
        requireL4(protocol);
        if (ports == null || ports.isEmpty()) {
            throw new IllegalArgumentException("ports: at least one port or range is required");
        }
        JsonNode right;
        if (ports.size() == 1 && ports.get(0).single()) {
            right = JSON.numberNode(ports.get(0).first());
        } else {
            ObjectNode set = JSON.objectNode();
            ArrayNode a = set.putArray("set");
            ports.forEach(p -> a.add(NftElem.port(p)));
            right = set;
        }
        return match("==", payload(protocol, field), right);
    }

    static String ipProto(int ipVersion) {
        return switch (ipVersion) {
            case 4 -> "ip";
            case 6 -> "ip6";
            default -> throw new IllegalArgumentException("ipVersion: must be 4 or 6, was " + ipVersion);
        };
    }

    private static void requireL4(String protocol) {
        if (!L4.contains(protocol)) {
            throw new IllegalArgumentException("protocol: must be one of " + L4 + ", was " + protocol);
        }
    }

    private static void requireMark(String field, long v) {
        if (v < 0 || v > 0xffffffffL) {
            throw new IllegalArgumentException(field + ": must fit in 32 bits, was " + v);
        }
    }

    private static String requireIfname(String name) {
        // IFNAMSIZ is 16 including NUL; a trailing '*' is nft's prefix wildcard.
        if (name == null || name.isEmpty() || name.length() > 15) {
            throw new IllegalArgumentException("interface name: 1..15 characters, was " + name);
        }
        return name;
    }
}
