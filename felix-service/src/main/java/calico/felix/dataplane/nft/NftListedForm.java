package calico.felix.dataplane.nft;

import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Compares the rules we sent with the rules libnftables lists back, without a listing taken
 * right after each write (which costs a whole-table cache fill in libnftables 1.0.6, ~0.4 s at
 * 2,000 policies). libnftables prints some of what we send in other words; both sides are put
 * into one form first, undoing exactly those rewrites and nothing else:
 *
 * <ul>
 *   <li>{@code meta l4proto 6} lists as {@code tcp}: known names become numbers;
 *   <li>{@code meta l4proto tcp ... th dport} lists as {@code ... tcp dport}: the protocol match is
 *       folded into the port payloads that follow it (as libnftables does);
 *   <li>{@code meta nfproto} is dropped when an IPv4/IPv6 header match already implies it;
 *   <li>a one-state {@code ct state in [x]} lists as {@code in x};
 *   <li>anonymous set elements are listed sorted; integers are compared by value;
 *   <li>ICMP and ICMPv6 types and codes are listed by name: known names become numbers.
 * </ul>
 *
 * A rule that still differs is not proof of tampering: the driver then rewrites the chain and
 * remembers the listing instead.
 */
final class NftListedForm {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final Map<String, Integer> PROTOCOLS = Map.of("icmp", 1, "tcp", 6, "udp", 17, "gre", 47,
            "esp", 50, "ah", 51, "ipv6-icmp", 58, "sctp", 132, "udplite", 136, "dccp", 33);
    private static final Map<Integer, String> TRANSPORT = Map.of(6, "tcp", 17, "udp", 132, "sctp", 136, "udplite",
            33, "dccp");
    private static final Set<String> FAMILY_HEADERS = Set.of("ip", "ip6", "icmp", "icmpv6");
    /** The names libnftables prints for ICMP and ICMPv6 types and codes (nftables' datatype tables). */
    private static final Map<String, Map<String, Integer>> ICMP_NAMES = Map.of(
            "icmp/type", Map.ofEntries(Map.entry("echo-reply", 0), Map.entry("destination-unreachable", 3),
                    Map.entry("source-quench", 4), Map.entry("redirect", 5), Map.entry("echo-request", 8),
                    Map.entry("router-advertisement", 9), Map.entry("router-solicitation", 10),
                    Map.entry("time-exceeded", 11), Map.entry("parameter-problem", 12),
                    Map.entry("timestamp-request", 13), Map.entry("timestamp-reply", 14),
                    Map.entry("info-request", 15), Map.entry("info-reply", 16),
                    Map.entry("address-mask-request", 17), Map.entry("address-mask-reply", 18)),
            "icmp/code", Map.of("net-unreachable", 0, "host-unreachable", 1, "prot-unreachable", 2,
                    "port-unreachable", 3, "frag-needed", 4, "net-prohibited", 9, "host-prohibited", 10,
                    "admin-prohibited", 13),
            "icmpv6/type", Map.ofEntries(Map.entry("destination-unreachable", 1), Map.entry("packet-too-big", 2),
                    Map.entry("time-exceeded", 3), Map.entry("parameter-problem", 4), Map.entry("echo-request", 128),
                    Map.entry("echo-reply", 129), Map.entry("mld-listener-query", 130),
                    Map.entry("mld-listener-report", 131), Map.entry("mld-listener-done", 132),
                    Map.entry("nd-router-solicit", 133), Map.entry("nd-router-advert", 134),
                    Map.entry("nd-neighbor-solicit", 135), Map.entry("nd-neighbor-advert", 136),
                    Map.entry("nd-redirect", 137), Map.entry("router-renumbering", 138),
                    Map.entry("ind-neighbor-solicit", 141), Map.entry("ind-neighbor-advert", 142),
                    Map.entry("mld2-listener-report", 143)),
            "icmpv6/code", Map.of("no-route", 0, "admin-prohibited", 1, "addr-unreachable", 3,
                    "port-unreachable", 4, "policy-fail", 5, "reject-route", 6));

    private NftListedForm() {
    }

    /** {@return our rules as a listing would hold them: [{expr, comment?}, ...], in the compared form} */
    static ArrayNode sent(List<NftRule> rules) {
        ArrayNode out = JSON.arrayNode();
        for (NftRule r : rules) {
            ObjectNode o = out.addObject();
            ArrayNode e = o.putArray("expr");
            r.expr().forEach(e::add);
            if (r.comment() != null) {
                o.put("comment", r.comment());
            }
        }
        return normalise(reparse(out));
    }

    /** {@return a listing's rules in the compared form} */
    static ArrayNode listed(ArrayNode rules) {
        return normalise(rules.deepCopy());
    }

    /** Integers built as long and parsed as int differ as Jackson nodes: take both through text. */
    private static ArrayNode reparse(ArrayNode a) {
        try {
            return (ArrayNode) MAPPER.readTree(a.toString());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot re-read our own JSON", e);
        }
    }

    private static ArrayNode normalise(ArrayNode rules) {
        for (JsonNode rule : rules) {
            ArrayNode expr = (ArrayNode) rule.get("expr");
            boolean familyImplied = false;
            for (JsonNode stmt : expr) {
                familyImplied |= mentionsHeader(stmt, FAMILY_HEADERS);
            }
            for (Iterator<JsonNode> it = expr.iterator(); it.hasNext(); ) {
                JsonNode stmt = it.next();
                if (familyImplied && isNfproto(stmt)) {
                    it.remove();
                } else {
                    rewrite(stmt);
                }
            }
            foldProtocol(expr);
            dropImpliedIcmpProtocol(expr);
        }
        return rules;
    }

    /**
     * {@code meta l4proto == 1 / 58} with an {@code icmp} / {@code icmpv6} header match after it:
     * libnftables drops the protocol match as implied by the header, so the compared form does too.
     */
    private static void dropImpliedIcmpProtocol(ArrayNode expr) {
        for (int i = 0; i < expr.size(); i++) {
            int proto = l4proto(expr.get(i));
            String header = proto == 1 ? "icmp" : proto == 58 ? "icmpv6" : null;
            for (int j = i + 1; header != null && j < expr.size(); j++) {
                if (mentionsHeader(expr.get(j), Set.of(header))) {
                    expr.remove(i);
                    return;
                }
            }
        }
    }

    /** {@return N of a statement {@code meta l4proto == N}} (numbers, as {@link #rewrite} leaves them), else -1 */
    private static int l4proto(JsonNode stmt) {
        JsonNode m = stmt.get("match");
        if (m == null || !m.path("op").asText().equals("==")
                || !"l4proto".equals(m.path("left").path("meta").path("key").asText(null)) || !m.path("right").isInt()) {
            return -1;
        }
        return m.get("right").asInt();
    }

    /** {@return whether {@code n} matches on a header of one of {@code protocols}} (a payload expression) */
    private static boolean mentionsHeader(JsonNode n, Set<String> protocols) {
        if (n.isObject() && n.has("payload") && protocols.contains(n.get("payload").path("protocol").asText())) {
            return true;
        }
        for (JsonNode c : n) {
            if (mentionsHeader(c, protocols)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isNfproto(JsonNode stmt) {
        JsonNode m = stmt.get("match");
        return m != null && "nfproto".equals(m.path("left").path("meta").path("key").asText(null));
    }

    /** {@code meta l4proto == N} followed by {@code th} ports: drop the match, name the protocol in the ports. */
    private static void foldProtocol(ArrayNode expr) {
        for (int i = 0; i < expr.size(); i++) {
            String name = TRANSPORT.get(l4proto(expr.get(i)));
            if (name == null) {
                continue;
            }
            boolean folded = false;
            for (int j = i + 1; j < expr.size(); j++) {
                folded |= renameThPorts(expr.get(j), name);
            }
            if (folded) {
                expr.remove(i);
            }
            return;
        }
    }

    private static boolean renameThPorts(JsonNode n, String protocol) {
        boolean any = false;
        if (n.isObject() && n.get("payload") instanceof ObjectNode p && p.path("protocol").asText().equals("th")
                && (p.path("field").asText().equals("sport") || p.path("field").asText().equals("dport"))) {
            p.put("protocol", protocol);
            any = true;
        }
        for (JsonNode c : n) {
            any |= renameThPorts(c, protocol);
        }
        return any;
    }

    /** ICMP types and codes named on the right of a match (or in a concatenated set) become numbers. */
    private static void icmpNumbers(ObjectNode m) {
        JsonNode left = m.get("left");
        List<String> keys = new ArrayList<>();
        if (left.has("payload")) {
            keys.add(icmpKey(left));
        } else if (left.has("concat")) {
            left.get("concat").forEach(part -> keys.add(icmpKey(part)));
        }
        if (keys.stream().allMatch(java.util.Objects::isNull)) {
            return;
        }
        if (keys.size() == 1) {
            m.set("right", number(m.get("right"), keys.get(0)));
            return;
        }
        JsonNode right = m.get("right");
        JsonNode elems = right.has("set") ? right.get("set") : JSON.arrayNode().add(right);
        for (JsonNode e : elems) {
            if (e.get("concat") instanceof ArrayNode parts) {
                for (int i = 0; i < parts.size() && i < keys.size(); i++) {
                    parts.set(i, number(parts.get(i), keys.get(i)));
                }
            }
        }
    }

    private static String icmpKey(JsonNode expr) {
        JsonNode p = expr.get("payload");
        if (p == null) {
            return null;
        }
        String key = p.path("protocol").asText() + "/" + p.path("field").asText();
        return ICMP_NAMES.containsKey(key) ? key : null;
    }

    private static JsonNode number(JsonNode v, String key) {
        if (key != null && v.isTextual()) {
            Integer n = ICMP_NAMES.get(key).get(v.asText());
            if (n != null) {
                return JSON.numberNode(n);
            }
        }
        return v;
    }

    /** Rewrites in place, recursively. */
    private static void rewrite(JsonNode n) {
        if (n.isObject()) {
            ObjectNode o = (ObjectNode) n;
            JsonNode match = o.get("match");
            if (match instanceof ObjectNode m) {
                icmpNumbers(m);
                String key = m.path("left").path("meta").path("key").asText("");
                JsonNode right = m.get("right");
                if (key.equals("l4proto") && right.isTextual() && PROTOCOLS.containsKey(right.asText())) {
                    m.put("right", PROTOCOLS.get(right.asText()));
                }
                if (m.path("left").has("ct") && right.isArray() && right.size() == 1) {
                    m.set("right", right.get(0));
                }
            }
            JsonNode reject = o.get("reject");
            if (reject != null && reject.path("type").asText("").equals("icmpx")
                    && reject.path("expr").asText("").equals("port-unreachable") && reject.size() == 2) {
                o.putNull("reject"); // a bare reject in an inet table lists as its default, icmpx port-unreachable
            }
            JsonNode set = o.get("set");
            if (set instanceof ArrayNode elems) {
                List<JsonNode> sorted = new ArrayList<>();
                elems.forEach(sorted::add);
                sorted.sort(Comparator.comparing(JsonNode::toString));
                elems.removeAll();
                sorted.forEach(elems::add);
            }
        }
        for (JsonNode c : n) {
            rewrite(c);
        }
    }
}
