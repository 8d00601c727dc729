package calico.dataplane.nft;

import calico.dataplane.netlink.NftablesSocket;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Package-private: a batch's commands as nf_tables netlink messages, the bytes libnftables 1.0.6
 * would send for them (checked against its own encoding through listings, {@code
 * NftNetlinkTest}), so a batch can reach the kernel without libnftables parsing it and
 * re-reading its cache. Covers what a policy chain's rewrite and a catch-up's batch need: {@code
 * flush chain}, {@code add rule} and {@code delete rule} by handle, with the expressions of meta,
 * payload (IPv4/IPv6 addresses, transport ports), comparisons, prefixes, port ranges, named-set
 * lookups (addresses, address . protocol . port), anonymous sets of ports or nets, mark tests and
 * edits, conntrack state tests, log and the verdicts; {@code add chain} and {@code delete chain}
 * (regular chains); {@code add set} with its elements (addresses, interval or not, and named-port
 * concatenations), {@code add map} ({@code ifname : verdict}), {@code add element} to a set or map
 * the batch declares, {@code flush} and {@code delete} of sets and maps. {@link #encode} gives null
 * for a batch holding anything else (a base chain, elements of a set declared in an earlier batch,
 * whose shape only libnftables' cache knows), which then goes through libnftables.
 */
final class NftNetlink {
    // nf_tables message types (NFT_MSG_*)
    static final int NEWCHAIN = 3;
    static final int DELCHAIN = 5;
    static final int NEWRULE = 6;
    static final int DELRULE = 8;
    static final int NEWSET = 9;
    static final int DELSET = 11;
    static final int NEWSETELEM = 12;
    static final int DELSETELEM = 14;

    private static final int NLA_F_NESTED = 0x8000;
    private static final int NFTA_LIST_ELEM = 1;
    // chain
    private static final int NFTA_CHAIN_TABLE = 1;
    private static final int NFTA_CHAIN_NAME = 3;
    // rule
    private static final int NFTA_RULE_TABLE = 1;
    private static final int NFTA_RULE_CHAIN = 2;
    private static final int NFTA_RULE_HANDLE = 3;
    private static final int NFTA_RULE_EXPRESSIONS = 4;
    private static final int NFTA_RULE_USERDATA = 7;
    private static final int NFTA_EXPR_NAME = 1;
    private static final int NFTA_EXPR_DATA = 2;
    private static final int NFTA_DATA_VALUE = 1;
    private static final int NFTA_DATA_VERDICT = 2;
    private static final int NFTA_VERDICT_CODE = 1;
    private static final int NFTA_VERDICT_CHAIN = 2;
    // set
    private static final int NFTA_SET_TABLE = 1;
    private static final int NFTA_SET_NAME = 2;
    private static final int NFTA_SET_FLAGS = 3;
    private static final int NFTA_SET_KEY_TYPE = 4;
    private static final int NFTA_SET_KEY_LEN = 5;
    private static final int NFTA_SET_DATA_TYPE = 6;
    private static final int NFTA_SET_DATA_LEN = 7;
    private static final int NFTA_SET_DESC = 9;
    private static final int NFTA_SET_DESC_SIZE = 1;
    private static final int NFTA_SET_ID = 10;
    private static final int NFTA_SET_USERDATA = 13;
    private static final int NFT_SET_ANONYMOUS = 1;
    private static final int NFT_SET_CONSTANT = 2;
    private static final int NFT_SET_INTERVAL = 4;
    private static final int NFT_SET_MAP = 8;
    private static final int NFTA_SET_ELEM_LIST_TABLE = 1;
    private static final int NFTA_SET_ELEM_LIST_SET = 2;
    private static final int NFTA_SET_ELEM_LIST_ELEMENTS = 3;
    private static final int NFTA_SET_ELEM_LIST_SET_ID = 4;
    private static final int NFTA_SET_ELEM_KEY = 1;
    private static final int NFTA_SET_ELEM_DATA = 2;
    private static final int NFTA_SET_ELEM_FLAGS = 3;
    private static final int NFTA_SET_ELEM_USERDATA = 6;
    /** nftnl element user data: its flags (type 1), of which 1 is "interval open" */
    private static final int NFTNL_UDATA_SET_ELEM_FLAGS = 1;
    private static final int NFT_SET_ELEM_INTERVAL_END = 1;
    // nft's datatype ids, for a set's key type
    private static final int TYPE_IPADDR = 7;
    private static final int TYPE_IP6ADDR = 8;
    private static final int TYPE_INET_PROTO = 12;
    private static final int TYPE_INET_SERVICE = 13;
    private static final int TYPE_IFNAME = 41;
    /** nft's verdict datatype as a map's data type ({@code NFT_DATA_VERDICT}) */
    private static final int TYPE_VERDICT = 0xffffff00;
    /** nft's id of a concatenated type: each part's id shifted in, 6 bits apiece */
    private static final int CONCAT_TYPE_BITS = 6;
    // expressions
    private static final int REG_VERDICT = 0;
    private static final int REG_1 = 1;
    private static final int REG32_00 = 8;
    private static final int NFT_META_MARK = 3;
    private static final int NFT_META_IIFNAME = 6;
    private static final int NFT_META_OIFNAME = 7;
    private static final int NFT_META_NFPROTO = 15;
    private static final int NFT_META_L4PROTO = 16;
    private static final int BASE_NETWORK = 1;
    private static final int BASE_TRANSPORT = 2;
    private static final int CMP_EQ = 0;
    private static final int CMP_NEQ = 1;
    private static final int CMP_LTE = 3;
    private static final int CMP_GTE = 5;
    private static final int NFT_RANGE_NEQ = 1;
    private static final int NFT_LOOKUP_F_INV = 1;
    private static final int NF_DROP = 0;
    private static final int NF_ACCEPT = 1;
    private static final int NFT_JUMP = -3;
    private static final int NFT_GOTO = -4;
    private static final int NFT_RETURN = -5;
    private static final int NFPROTO_INET = 1;
    private static final int NFPROTO_IPV4 = 2;
    private static final int NFPROTO_IPV6 = 10;
    private static final int IFNAMSIZ = 16;
    private static final Map<String, Integer> FAMILIES = Map.of("inet", NFPROTO_INET, "ip", NFPROTO_IPV4, "ip6", NFPROTO_IPV6);
    private static final Map<String, Integer> L4 = Map.of("tcp", 6, "udp", 17, "sctp", 132, "icmp", 1, "ipv6-icmp", 58,
            "udplite", 136, "gre", 47, "esp", 50, "ah", 51);
    private static final int NFT_CT_STATE = 0;
    /** Conntrack state bits (the kernel's {@code NF_CT_STATE_*}), as nft's {@code ct_state} type has them. */
    private static final Map<String, Integer> CT_STATES = Map.of("invalid", 1, "established", 2, "related", 4, "new", 8,
            "untracked", 64);
    private static final Map<String, Integer> LOG_LEVELS = Map.of("emerg", 0, "alert", 1, "crit", 2, "err", 3,
            "warn", 4, "notice", 5, "info", 6, "debug", 7);

    private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER = new com.fasterxml.jackson.databind.ObjectMapper();

    private NftNetlink() {
    }

    /** No netlink form: the batch goes through libnftables. */
    private static final class Unsupported extends RuntimeException {
        Unsupported() {
            super(null, null, false, false);
        }
    }

    /** {@return {@code batch}'s commands as netlink messages}, or null (read up to the first command without that form) */
    static List<NftablesSocket.Message> encode(NftBatch batch) {
        if (batch.editsElementsOfOtherSets()) {
            return null; // known before encoding anything (a catch-up's batch puts its map edits last)
        }
        Batch b = new Batch();
        try {
            for (int i = 0; i < batch.size(); i++) {
                NftBatch.RuleCommand r = batch.ruleCommand(i);
                if (r != null) {
                    b.rule(r);
                } else {
                    b.command(NftBatch.parse(batch.text(i)));
                }
            }
        } catch (Unsupported | IllegalArgumentException e) {
            return null;
        }
        return b.messages;
    }

    private static final byte[] NO_BYTES = {};

    private static Unsupported unsupported() {
        return new Unsupported();
    }

    /** The messages of one batch; anonymous sets get ids unique within it. */
    private static final class Batch {
        final List<NftablesSocket.Message> messages = new ArrayList<>();
        int nextSetId = 1;
        /**
         * Anonymous sets' names: {@code __s<this batch's random 48 bits>_<id>}, unique in their table
         * with overwhelming odds. libnftables sends the template {@code __set%d}, which makes the
         * kernel scan every set of the table, each through sscanf, for a free number, and then find
         * the set (for its elements and for the rule's lookup) by id in the transaction's list,
         * scanning that too: quadratic in a catch-up's thousands of anonymous sets. A name of our
         * own is found by name. The kernel knows anonymous sets by their flag, not their names.
         */
        final String anonymousPrefix = "__s" + Long.toHexString(
                java.util.concurrent.ThreadLocalRandom.current().nextLong(1L << 44, 1L << 48)) + "_";
        /**
         * Rules' encoded expressions by family and statements, reused within the batch: a catch-up
         * rewrites ~1,000 endpoint chains whose rules repeat (conntrack, marks, the same policies'
         * jumps), and parsing and encoding each was most of the batch's time. Not kept for rules with
         * anonymous sets (their messages carry batch-unique set ids).
         */
        final Map<ExprKey, byte[]> encoded = new java.util.HashMap<>();
        /** Named sets and maps this batch declares ({@code add set}/{@code add map}), by {@link #setKey}: their shape encodes their elements. */
        final Map<String, NamedSet> declared = new java.util.HashMap<>();

        /** The nfgenmsg header and table and chain attributes of the last rule's chain (a chain's rules come together). */
        private byte[] head;
        private int headFamily = -1;
        private String headTable;
        private String headChain;

        /** An {@code add rule} from its parts, its expressions encoded once per batch, in one array. */
        void rule(NftBatch.RuleCommand c) {
            int family = FAMILIES.getOrDefault(c.table().family(), -1);
            if (family < 0) {
                throw unsupported();
            }
            ExprKey key = new ExprKey(family, c.expr().json());
            byte[] exprs = encoded.get(key); // the expressions attribute, header and padding included
            if (exprs == null) {
                int before = messages.size();
                Rule r = new Rule(this, family, c.table().name());
                JsonNode expr;
                try {
                    expr = MAPPER.readTree(c.expr().json());
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw unsupported();
                }
                expr.forEach(r::statement);
                exprs = new Attrs().nested(NFTA_RULE_EXPRESSIONS, r.exprs).bytes();
                if (messages.size() == before) {
                    encoded.put(key, exprs);
                }
            }
            if (family != headFamily || !c.chain().equals(headChain) || !c.table().name().equals(headTable)) {
                headFamily = family;
                headChain = c.chain();
                headTable = c.table().name();
                head = concat(new byte[] {(byte) family, 0, 0, 0}, new Attrs().string(NFTA_RULE_TABLE, headTable)
                        .string(NFTA_RULE_CHAIN, headChain).bytes());
            }
            byte[] userdata = NO_BYTES;
            if (c.comment() != null) {
                Attrs a = new Attrs();
                comment(a, c.comment());
                userdata = a.bytes();
            }
            byte[] payload = Arrays.copyOf(head, head.length + exprs.length + userdata.length);
            System.arraycopy(exprs, 0, payload, head.length, exprs.length);
            System.arraycopy(userdata, 0, payload, head.length + exprs.length, userdata.length);
            messages.add(new NftablesSocket.Message(NEWRULE, NftablesSocket.NLM_F_CREATE | NftablesSocket.NLM_F_APPEND,
                    payload));
        }

        /** nftnl rule user data: TLV of the comment (type 0), NUL-terminated; none for null. */
        void comment(Attrs a, String comment) {
            if (comment == null) {
                return;
            }
            byte[] s = comment.getBytes(StandardCharsets.UTF_8);
            if (s.length + 1 > 255) {
                throw unsupported();
            }
            byte[] tlv = new byte[s.length + 3];
            tlv[0] = 0;
            tlv[1] = (byte) (s.length + 1);
            System.arraycopy(s, 0, tlv, 2, s.length);
            a.bytes(NFTA_RULE_USERDATA, tlv);
        }

        void command(ObjectNode c) {
            if (c.size() != 1) {
                throw unsupported();
            }
            String verb = c.fieldNames().next();
            JsonNode body = c.get(verb);
            if (body.size() != 1) {
                throw unsupported();
            }
            String kind = body.fieldNames().next();
            JsonNode o = body.get(kind);
            switch (verb + " " + kind) {
                case "flush chain" -> {
                    Attrs a = new Attrs().string(NFTA_RULE_TABLE, text(o, "table")).string(NFTA_RULE_CHAIN, text(o, "name"));
                    add(DELRULE, 0, family(o), a);
                }
                case "delete rule" -> {
                    Attrs a = new Attrs().string(NFTA_RULE_TABLE, text(o, "table")).string(NFTA_RULE_CHAIN, text(o, "chain"))
                            .u64(NFTA_RULE_HANDLE, o.path("handle").asLong());
                    add(DELRULE, 0, family(o), a);
                }
                case "add rule" -> rule(o);
                case "add chain" -> {
                    only(o, "family", "table", "name"); // a base chain's hook, type and policy: left to libnftables
                    add(NEWCHAIN, NftablesSocket.NLM_F_CREATE, family(o),
                            new Attrs().string(NFTA_CHAIN_TABLE, text(o, "table")).string(NFTA_CHAIN_NAME, text(o, "name")));
                }
                case "delete chain" -> {
                    only(o, "family", "table", "name");
                    add(DELCHAIN, 0, family(o),
                            new Attrs().string(NFTA_CHAIN_TABLE, text(o, "table")).string(NFTA_CHAIN_NAME, text(o, "name")));
                }
                case "add set" -> declare(o, false);
                case "add map" -> declare(o, true);
                case "add element" -> {
                    only(o, "family", "table", "name", "elem");
                    NamedSet set = declared.get(setKey(family(o), text(o, "table"), text(o, "name")));
                    if (set == null) {
                        throw unsupported(); // a set from an earlier batch: its shape is libnftables' to look up
                    }
                    elements(set, o.get("elem"));
                }
                case "flush set", "flush map" -> {
                    only(o, "family", "table", "name");
                    add(DELSETELEM, 0, family(o), new Attrs().string(NFTA_SET_ELEM_LIST_TABLE, text(o, "table"))
                            .string(NFTA_SET_ELEM_LIST_SET, text(o, "name")));
                }
                case "delete set", "delete map" -> {
                    only(o, "family", "table", "name");
                    add(DELSET, 0, family(o),
                            new Attrs().string(NFTA_SET_TABLE, text(o, "table")).string(NFTA_SET_NAME, text(o, "name")));
                }
                default -> throw unsupported();
            }
        }

        /**
         * {@code add set} / {@code add map} (creates it, or adds to the set of that name) and its
         * elements, as libnftables sends them: the set, then its elements naming it by name and by
         * the batch's set id.
         */
        void declare(JsonNode o, boolean map) {
            only(o, "family", "table", "name", "type", "flags", "elem", "map");
            int family = family(o);
            String table = text(o, "table");
            String name = text(o, "name");
            boolean interval = false;
            JsonNode flags = o.get("flags");
            if (flags != null) {
                for (JsonNode f : flags.isArray() ? flags : List.of(flags)) {
                    if (!"interval".equals(f.asText())) {
                        throw unsupported(); // timeouts, constants, dynamic sets
                    }
                    interval = true;
                }
            }
            SetShape shape = SetShape.of(o.get("type"), map ? o.get("map") : null);
            if (interval && !shape.intervals()) {
                throw unsupported();
            }
            NamedSet set = new NamedSet(family, table, name, nextSetId++, shape, interval);
            Attrs a = new Attrs().string(NFTA_SET_TABLE, table).string(NFTA_SET_NAME, name)
                    .u32be(NFTA_SET_FLAGS, (interval ? NFT_SET_INTERVAL : 0) | (map ? NFT_SET_MAP : 0))
                    .u32be(NFTA_SET_KEY_TYPE, shape.keyType()).u32be(NFTA_SET_KEY_LEN, shape.keyLen());
            if (map) {
                a.u32be(NFTA_SET_DATA_TYPE, TYPE_VERDICT).u32be(NFTA_SET_DATA_LEN, 0);
            }
            a.u32be(NFTA_SET_ID, set.id).bytes(NFTA_SET_USERDATA, shape.userdata());
            add(NEWSET, NftablesSocket.NLM_F_CREATE, family, a);
            declared.put(setKey(family, table, name), set);
            JsonNode elem = o.get("elem");
            if (elem != null) {
                elements(set, elem);
            }
        }

        /**
         * Adds {@code elem} to {@code set}. An interval set's members go as libnftables 1.0.6 sends a
         * named set's (no merging): each start, then its end + 1 flagged as an interval end (none
         * past the top of the key space), sorted, led by an end at 0 for the set's first elements in
         * the batch when the lowest does not start at 0. Overlaps go to libnftables, which refuses them.
         */
        void elements(NamedSet set, JsonNode elem) {
            if (elem == null || !elem.isArray() || elem.isEmpty()) {
                throw unsupported();
            }
            Attrs list = new Attrs();
            if (set.interval) {
                int len = set.shape.keyLen();
                List<BigInteger[]> intervals = new ArrayList<>();
                for (JsonNode e : elem) {
                    intervals.add(prefix(e, len).interval(len));
                }
                sortDisjoint(intervals, true); // overlapping: libnftables names the conflict
                intervalElements(intervals, len, !set.filled).forEach(e -> list.nested(NFTA_LIST_ELEM, e));
            } else {
                for (JsonNode e : elem) {
                    list.nested(NFTA_LIST_ELEM, set.shape.element(e));
                }
            }
            set.filled = true;
            add(NEWSETELEM, NftablesSocket.NLM_F_CREATE, set.family, new Attrs().string(NFTA_SET_ELEM_LIST_TABLE, set.table)
                    .string(NFTA_SET_ELEM_LIST_SET, set.name).u32be(NFTA_SET_ELEM_LIST_SET_ID, set.id)
                    .nested(NFTA_SET_ELEM_LIST_ELEMENTS, list));
        }

        void add(int type, int flags, int family, Attrs attrs) {
            byte[] header = {(byte) family, 0, 0, 0}; // nfgenmsg: family, version 0, res_id 0
            messages.add(new NftablesSocket.Message(type, flags, concat(header, attrs.bytes())));
        }

        void rule(JsonNode o) {
            only(o, "family", "table", "chain", "expr", "comment"); // handle, index, position: not an append
            int family = family(o);
            String table = text(o, "table");
            Rule r = new Rule(this, family, table);
            JsonNode expr = o.get("expr");
            if (expr == null || !expr.isArray() || expr.isEmpty()) {
                throw unsupported();
            }
            expr.forEach(r::statement);
            Attrs a = new Attrs().string(NFTA_RULE_TABLE, table).string(NFTA_RULE_CHAIN, text(o, "chain"))
                    .nested(NFTA_RULE_EXPRESSIONS, r.exprs);
            JsonNode comment = o.get("comment");
            comment(a, comment == null || comment.isNull() ? null : comment.asText());
            add(NEWRULE, NftablesSocket.NLM_F_CREATE | NftablesSocket.NLM_F_APPEND, family, a);
        }
    }

    /** One rule's expressions, and the nfproto its matches have checked so far (nft adds that check once). */
    private static final class Rule {
        final Batch batch;
        final int family;
        final String table;
        final Attrs exprs = new Attrs();
        int nfproto;

        Rule(Batch batch, int family, String table) {
            this.batch = batch;
            this.family = family;
            this.table = table;
        }

        void statement(JsonNode s) {
            if (s.size() != 1) {
                throw unsupported();
            }
            String kind = s.fieldNames().next();
            JsonNode v = s.get(kind);
            switch (kind) {
                case "match" -> match(v);
                case "accept", "drop", "return", "jump", "goto" -> expr("immediate", new Attrs().u32be(1, REG_VERDICT)
                        .nested(2, new Attrs().nested(NFTA_DATA_VERDICT, verdict(kind, v))));
                case "mangle" -> mangle(v);
                case "log" -> log(v);
                default -> throw unsupported();
            }
        }

        void match(JsonNode m) {
            String op = text(m, "op");
            if (op.equals("in") && m.path("left").has("ct")) {
                ctState(m.get("left").get("ct"), m.get("right"));
                return;
            }
            if (!op.equals("==") && !op.equals("!=")) {
                throw unsupported(); // flag tests ("in", "!") and orderings
            }
            boolean neg = op.equals("!=");
            JsonNode left = m.get("left");
            JsonNode right = m.get("right");
            if (right.isTextual() && right.asText().startsWith("@")) {
                key(left);
                expr("lookup", new Attrs().string(1, right.asText().substring(1)).u32be(2, REG_1)
                        .u32beIf(5, neg ? NFT_LOOKUP_F_INV : 0));
                return;
            }
            if (left.has("&")) {
                mark(left.get("&"), right, neg);
                return;
            }
            if (left.has("meta")) {
                meta(text(left.get("meta"), "key"), right, neg);
                return;
            }
            if (left.has("payload")) {
                payload(left.get("payload"), right, neg);
                return;
            }
            throw unsupported();
        }

        /** {@code meta mark & mask ==|!= value} */
        void mark(JsonNode and, JsonNode right, boolean neg) {
            if (and.size() != 2 || !isMeta(and.get(0), "mark") || !and.get(1).isIntegralNumber() || !right.isIntegralNumber()) {
                throw unsupported();
            }
            metaLoad(NFT_META_MARK);
            bitwise(host32(and.get(1).asLong()), new byte[4]);
            cmp(neg ? CMP_NEQ : CMP_EQ, host32(right.asLong()));
        }

        /** {@code ct state established,related}: a flag test, the state's bits masked and compared with zero, as nft sends it */
        void ctState(JsonNode ct, JsonNode right) {
            if (ct.size() != 1 || !"state".equals(ct.path("key").asText())) {
                throw unsupported(); // ct status, directions: left to libnftables
            }
            long bits = 0;
            for (JsonNode s : right.isArray() ? right : List.of(right)) {
                Integer bit = CT_STATES.get(s.asText());
                if (bit == null || !s.isTextual()) {
                    throw unsupported();
                }
                bits |= bit;
            }
            if (bits == 0) {
                throw unsupported();
            }
            expr("ct", new Attrs().u32be(1, REG_1).u32be(2, NFT_CT_STATE)); // dreg, key
            bitwise(host32(bits), new byte[4]);
            cmp(CMP_NEQ, new byte[4]);
        }

        void meta(String key, JsonNode right, boolean neg) {
            switch (key) {
                case "nfproto" -> {
                    int p = switch (right.asText()) {
                        case "ipv4" -> NFPROTO_IPV4;
                        case "ipv6" -> NFPROTO_IPV6;
                        default -> throw unsupported();
                    };
                    metaLoad(NFT_META_NFPROTO);
                    cmp(neg ? CMP_NEQ : CMP_EQ, new byte[] {(byte) p});
                    if (!neg) {
                        nfproto = p;
                    }
                }
                case "l4proto" -> {
                    metaLoad(NFT_META_L4PROTO);
                    cmp(neg ? CMP_NEQ : CMP_EQ, new byte[] {(byte) protocol(right)});
                }
                case "iifname", "oifname" -> {
                    if (!right.isTextual()) {
                        throw unsupported();
                    }
                    String name = right.asText();
                    byte[] value;
                    if (name.endsWith("*") && !name.endsWith("\\*")) {
                        value = name.substring(0, name.length() - 1).getBytes(StandardCharsets.UTF_8);
                        if (value.length == 0) {
                            throw unsupported(); // "*" alone: nft matches any name another way
                        }
                    } else {
                        value = Arrays.copyOf(name.getBytes(StandardCharsets.UTF_8), IFNAMSIZ);
                    }
                    if (name.contains("\\") || value.length > IFNAMSIZ) {
                        throw unsupported();
                    }
                    metaLoad(key.equals("iifname") ? NFT_META_IIFNAME : NFT_META_OIFNAME);
                    cmp(neg ? CMP_NEQ : CMP_EQ, value);
                }
                case "mark" -> {
                    if (!right.isIntegralNumber()) {
                        throw unsupported();
                    }
                    metaLoad(NFT_META_MARK);
                    cmp(neg ? CMP_NEQ : CMP_EQ, host32(right.asLong()));
                }
                default -> throw unsupported();
            }
        }

        void payload(JsonNode p, JsonNode right, boolean neg) {
            String proto = text(p, "protocol");
            String field = text(p, "field");
            if (proto.equals("th") && (field.equals("sport") || field.equals("dport"))) {
                ports(field.equals("sport") ? 0 : 2, right, neg);
            } else if ((proto.equals("ip") || proto.equals("ip6")) && (field.equals("saddr") || field.equals("daddr"))) {
                address(proto.equals("ip") ? 4 : 16, field.equals("saddr"), right, neg);
            } else {
                throw unsupported();
            }
        }

        void ports(int offset, JsonNode right, boolean neg) {
            if (right.isIntegralNumber()) {
                payloadLoad(BASE_TRANSPORT, offset, 2, REG_1);
                cmp(neg ? CMP_NEQ : CMP_EQ, be16(port(right)));
            } else if (right.has("range")) {
                int[] r = portRange(right);
                payloadLoad(BASE_TRANSPORT, offset, 2, REG_1);
                if (neg) {
                    expr("range", new Attrs().u32be(1, REG_1).u32be(2, NFT_RANGE_NEQ)
                            .nested(3, data(be16(r[0]))).nested(4, data(be16(r[1]))));
                } else {
                    cmp(CMP_GTE, be16(r[0]));
                    cmp(CMP_LTE, be16(r[1]));
                }
            } else if (right.has("set")) {
                List<BigInteger[]> intervals = new ArrayList<>();
                boolean ranges = false;
                for (JsonNode e : right.get("set")) {
                    int[] r = e.isIntegralNumber() ? new int[] {port(e), port(e)} : portRange(e);
                    ranges |= r[0] != r[1];
                    intervals.add(new BigInteger[] {BigInteger.valueOf(r[0]), BigInteger.valueOf(r[1])});
                }
                int id = anonymousSet(TYPE_INET_SERVICE, 2, intervals, ranges);
                payloadLoad(BASE_TRANSPORT, offset, 2, REG_1);
                lookupAnonymous(id, neg);
            } else {
                throw unsupported();
            }
        }

        void address(int len, boolean source, JsonNode right, boolean neg) {
            int offset = len == 4 ? (source ? 12 : 16) : (source ? 8 : 24);
            if (right.has("set")) {
                List<BigInteger[]> intervals = new ArrayList<>();
                boolean ranges = false;
                for (JsonNode e : right.get("set")) {
                    Prefix p = prefix(e, len);
                    ranges |= p.bits != len * 8;
                    intervals.add(p.interval(len));
                }
                int id = anonymousSet(len == 4 ? TYPE_IPADDR : TYPE_IP6ADDR, len, intervals, ranges);
                dependency(len);
                payloadLoad(BASE_NETWORK, offset, len, REG_1);
                lookupAnonymous(id, neg);
                return;
            }
            Prefix p = prefix(right, len);
            dependency(len);
            if (p.bits % 8 == 0) {
                // nft loads only the prefix's whole bytes
                int bytes = p.bits / 8;
                if (bytes == 0) {
                    throw unsupported();
                }
                payloadLoad(BASE_NETWORK, offset, bytes, REG_1);
                cmp(neg ? CMP_NEQ : CMP_EQ, Arrays.copyOf(p.address, bytes));
            } else {
                payloadLoad(BASE_NETWORK, offset, len, REG_1);
                bitwise(p.mask(len), new byte[len]);
                cmp(neg ? CMP_NEQ : CMP_EQ, p.address);
            }
        }

        /** What a lookup's left side loads, and the key length (a concatenation's registers as nft lays them out). */
        Key key(JsonNode left) {
            if (left.has("payload")) {
                JsonNode p = left.get("payload");
                String proto = text(p, "protocol");
                String field = text(p, "field");
                if ((proto.equals("ip") || proto.equals("ip6")) && (field.equals("saddr") || field.equals("daddr"))) {
                    int len = proto.equals("ip") ? 4 : 16;
                    dependency(len);
                    payloadLoad(BASE_NETWORK, len == 4 ? (field.equals("saddr") ? 12 : 16) : (field.equals("saddr") ? 8 : 24),
                            len, REG_1);
                    return new Key(len);
                }
                throw unsupported();
            }
            if (left.has("concat")) {
                JsonNode parts = left.get("concat");
                if (parts.size() != 3 || !parts.get(0).has("payload") || !isMeta(parts.get(1), "l4proto")
                        || !parts.get(2).has("payload")) {
                    throw unsupported();
                }
                JsonNode port = parts.get(2).get("payload");
                if (!text(port, "protocol").equals("th")) {
                    throw unsupported();
                }
                Key addr = key(parts.get(0));
                int words = addr.len / 4;
                metaLoad(NFT_META_L4PROTO, REG32_00 + words);
                String f = text(port, "field");
                if (!f.equals("sport") && !f.equals("dport")) {
                    throw unsupported();
                }
                payloadLoad(BASE_TRANSPORT, f.equals("sport") ? 0 : 2, 2, REG32_00 + words + 1);
                return new Key(addr.len + 8);
            }
            throw unsupported();
        }

        /** {@code meta nfproto} check nft puts before an IPv4/IPv6 header match in an inet table, once per rule. */
        void dependency(int addressLength) {
            int p = addressLength == 4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
            if (family != NFPROTO_INET || nfproto == p) {
                if (family != NFPROTO_INET && family != p) {
                    throw unsupported();
                }
                return;
            }
            if (nfproto != 0) {
                throw unsupported(); // both families: nft refuses it
            }
            metaLoad(NFT_META_NFPROTO);
            cmp(CMP_EQ, new byte[] {(byte) p});
            nfproto = p;
        }

        /** An anonymous constant set of {@code intervals} (inclusive), added to the batch before the rule; {@return its id} */
        int anonymousSet(int keyType, int keyLen, List<BigInteger[]> intervals, boolean interval) {
            sortDisjoint(intervals, false); // touching or overlapping: nft merges an anonymous set's its own way
            int id = batch.nextSetId++;
            List<Attrs> elems = interval ? intervalElements(intervals, keyLen, true)
                    : intervals.stream().map(r -> setElement(unsigned(r[0], keyLen), false)).toList();
            int flags = NFT_SET_ANONYMOUS | NFT_SET_CONSTANT | (interval ? NFT_SET_INTERVAL : 0);
            // nftnl set user data: key byte order big endian (type 0); for intervals, merge elements (type 2)
            ByteArrayOutputStream udata = new ByteArrayOutputStream();
            udata.writeBytes(new byte[] {0, 4});
            udata.writeBytes(host32(2));
            if (interval) {
                udata.writeBytes(new byte[] {2, 4});
                udata.writeBytes(host32(1));
            }
            String name = batch.anonymousPrefix + id;
            Attrs set = new Attrs().string(NFTA_SET_TABLE, table).string(NFTA_SET_NAME, name)
                    .u32be(NFTA_SET_FLAGS, flags).u32be(NFTA_SET_KEY_TYPE, keyType).u32be(NFTA_SET_KEY_LEN, keyLen)
                    .u32be(NFTA_SET_ID, id).nested(NFTA_SET_DESC, new Attrs().u32be(NFTA_SET_DESC_SIZE, elems.size()))
                    .bytes(NFTA_SET_USERDATA, udata.toByteArray());
            batch.add(NEWSET, NftablesSocket.NLM_F_CREATE, family, set);
            Attrs list = new Attrs();
            elems.forEach(e -> list.nested(NFTA_LIST_ELEM, e));
            Attrs el = new Attrs().string(NFTA_SET_ELEM_LIST_TABLE, table).string(NFTA_SET_ELEM_LIST_SET, name)
                    .nested(NFTA_SET_ELEM_LIST_ELEMENTS, list).u32be(NFTA_SET_ELEM_LIST_SET_ID, id);
            batch.add(NEWSETELEM, NftablesSocket.NLM_F_CREATE, family, el);
            return id;
        }

        void lookupAnonymous(int id, boolean neg) {
            expr("lookup", new Attrs().string(1, batch.anonymousPrefix + id).u32be(2, REG_1).u32be(4, id)
                    .u32beIf(5, neg ? NFT_LOOKUP_F_INV : 0));
        }

        void mangle(JsonNode v) {
            if (!isMeta(v.get("key"), "mark")) {
                throw unsupported();
            }
            JsonNode value = v.get("value");
            JsonNode or = value.get("|");
            JsonNode and = value.get("&");
            byte[] mask;
            byte[] xor;
            if (or != null && or.size() == 2 && isMeta(or.get(0), "mark") && or.get(1).isIntegralNumber()) {
                long bits = or.get(1).asLong();
                mask = host32(~bits & 0xffffffffL);
                xor = host32(bits);
            } else if (and != null && and.size() == 2 && isMeta(and.get(0), "mark") && and.get(1).isIntegralNumber()) {
                mask = host32(and.get(1).asLong());
                xor = new byte[4];
            } else {
                throw unsupported();
            }
            metaLoad(NFT_META_MARK);
            bitwise(mask, xor);
            expr("meta", new Attrs().u32be(2, NFT_META_MARK).u32be(3, REG_1)); // key, sreg
        }

        void log(JsonNode v) {
            Attrs a = new Attrs();
            for (String f : iterable(v.fieldNames())) {
                if (!List.of("prefix", "group", "level").contains(f)) {
                    throw unsupported();
                }
            }
            if (v.has("group")) {
                a.u16be(1, v.get("group").asInt());
            }
            if (v.has("prefix")) {
                a.string(2, v.get("prefix").asText());
            }
            if (v.has("level")) {
                Integer level = LOG_LEVELS.get(v.get("level").asText());
                if (level == null || v.has("group")) {
                    throw unsupported();
                }
                a.u32be(5, level);
            }
            expr("log", a);
        }

        void metaLoad(int key) {
            metaLoad(key, REG_1);
        }

        void metaLoad(int key, int reg) {
            expr("meta", new Attrs().u32be(1, reg).u32be(2, key)); // dreg, key
        }

        void payloadLoad(int base, int offset, int len, int reg) {
            expr("payload", new Attrs().u32be(1, reg).u32be(2, base).u32be(3, offset).u32be(4, len));
        }

        void cmp(int op, byte[] value) {
            expr("cmp", new Attrs().u32be(1, REG_1).u32be(2, op).nested(3, data(value)));
        }

        void bitwise(byte[] mask, byte[] xor) {
            expr("bitwise", new Attrs().u32be(1, REG_1).u32be(2, REG_1).u32be(3, mask.length)
                    .nested(4, data(mask)).nested(5, data(xor)));
        }

        void expr(String name, Attrs data) {
            exprs.nested(NFTA_LIST_ELEM, new Attrs().string(NFTA_EXPR_NAME, name).nested(NFTA_EXPR_DATA, data));
        }
    }

    private record Key(int len) {
    }

    /** A named set or map declared in the batch; {@code filled}: elements of it were sent in the batch already. */
    private static final class NamedSet {
        final int family;
        final String table;
        final String name;
        final int id;
        final SetShape shape;
        final boolean interval;
        boolean filled;

        NamedSet(int family, String table, String name, int id, SetShape shape, boolean interval) {
            this.family = family;
            this.table = table;
            this.name = name;
            this.id = id;
            this.shape = shape;
            this.interval = interval;
        }
    }

    /**
     * The named-set and map keys the encoder knows, with the key type, length and the nftnl user
     * data libnftables 1.0.6 sends for them (key byte order; for a concatenation its type info;
     * for a verdict map the data's byte order and that it holds no intervals).
     */
    private enum SetShape {
        ADDR4(TYPE_IPADDR, 4, true, udata(0, 4, 2, 0, 0, 0)),
        ADDR6(TYPE_IP6ADDR, 16, true, udata(0, 4, 2, 0, 0, 0)),
        PORTS4(concatType(TYPE_IPADDR), 12, false, udata(0, 4, 0, 0, 0, 0, 3, 8, 0, 4, 13, 0, 0, 0, 1, 0)),
        PORTS6(concatType(TYPE_IP6ADDR), 24, false, udata(0, 4, 0, 0, 0, 0, 3, 8, 0, 4, 13, 0, 0, 0, 1, 0)),
        IFNAME_VERDICT(TYPE_IFNAME, IFNAMSIZ, false, udata(0, 4, 1, 0, 0, 0, 1, 4, 0, 0, 0, 0, 6, 4, 0, 0, 0, 0));

        private final int keyType;
        private final int keyLen;
        private final boolean intervals;
        private final byte[] userdata;

        SetShape(int keyType, int keyLen, boolean intervals, byte[] userdata) {
            this.keyType = keyType;
            this.keyLen = keyLen;
            this.intervals = intervals;
            this.userdata = userdata;
        }

        int keyType() {
            return keyType;
        }

        int keyLen() {
            return keyLen;
        }

        boolean intervals() {
            return intervals;
        }

        byte[] userdata() {
            return userdata.clone();
        }

        /** {@return the shape of a set of {@code type}} (a map's: {@code data}, else null); unsupported for any other */
        static SetShape of(JsonNode type, JsonNode data) {
            if (data != null) {
                if (type != null && "ifname".equals(type.asText()) && "verdict".equals(data.asText())) {
                    return IFNAME_VERDICT;
                }
                throw unsupported();
            }
            if (type != null && type.isTextual()) {
                return switch (type.asText()) {
                    case "ipv4_addr" -> ADDR4;
                    case "ipv6_addr" -> ADDR6;
                    default -> throw unsupported();
                };
            }
            if (type != null && type.isArray() && type.size() == 3 && "inet_proto".equals(type.get(1).asText())
                    && "inet_service".equals(type.get(2).asText())) {
                return switch (type.get(0).asText()) {
                    case "ipv4_addr" -> PORTS4;
                    case "ipv6_addr" -> PORTS6;
                    default -> throw unsupported();
                };
            }
            throw unsupported();
        }

        /** {@return one element of a set of this shape without intervals} */
        Attrs element(JsonNode e) {
            return switch (this) {
                case ADDR4, ADDR6 -> {
                    Prefix p = prefix(e, keyLen);
                    if (p.bits != keyLen * 8) {
                        throw unsupported(); // a prefix needs an interval set
                    }
                    yield setElement(p.address, false);
                }
                case PORTS4, PORTS6 -> {
                    JsonNode c = e.get("concat");
                    if (c == null || c.size() != 3 || !c.get(0).isTextual()) {
                        throw unsupported();
                    }
                    int addrLen = keyLen - 8;
                    Prefix addr = prefix(c.get(0), addrLen);
                    if (addr.bits != addrLen * 8) {
                        throw unsupported();
                    }
                    // registers are 4 bytes: the protocol's byte and the port's two each padded to 4
                    byte[] key = Arrays.copyOf(addr.address, keyLen);
                    key[addrLen] = (byte) protocol(c.get(1));
                    byte[] port = be16(port(c.get(2)));
                    key[addrLen + 4] = port[0];
                    key[addrLen + 5] = port[1];
                    yield setElement(key, false);
                }
                case IFNAME_VERDICT -> {
                    if (!e.isArray() || e.size() != 2 || !e.get(0).isTextual()) {
                        throw unsupported();
                    }
                    byte[] name = e.get(0).asText().getBytes(StandardCharsets.UTF_8);
                    if (name.length == 0 || name.length >= IFNAMSIZ || e.get(0).asText().contains("*")) {
                        throw unsupported();
                    }
                    yield setElement(Arrays.copyOf(name, IFNAMSIZ), false)
                            .nested(NFTA_SET_ELEM_DATA, new Attrs().nested(NFTA_DATA_VERDICT, verdict(e.get(1))));
                }
            };
        }
    }

    /** Sorts {@code intervals} (inclusive); unsupported when two overlap or, unless {@code touching} may, touch. */
    private static void sortDisjoint(List<BigInteger[]> intervals, boolean touching) {
        intervals.sort(Comparator.comparing(i -> i[0]));
        for (int i = 1; i < intervals.size(); i++) {
            BigInteger lastTaken = touching ? intervals.get(i - 1)[1] : intervals.get(i - 1)[1].add(BigInteger.ONE);
            if (intervals.get(i)[0].compareTo(lastTaken) <= 0) {
                throw unsupported();
            }
        }
    }

    /**
     * Elements of an interval set as libnftables 1.0.6 sends them, for sorted, non-overlapping,
     * inclusive {@code intervals}: each start, then its end + 1 flagged as an interval end; an
     * interval reaching the top of the key space gets no end, its start nftnl's element user data
     * "interval open"; led by an end at 0 when {@code leadingEnd} and the lowest does not start at 0.
     */
    private static List<Attrs> intervalElements(List<BigInteger[]> intervals, int len, boolean leadingEnd) {
        List<Attrs> out = new ArrayList<>();
        if (leadingEnd && intervals.get(0)[0].signum() != 0) {
            out.add(setElement(new byte[len], true));
        }
        BigInteger max = BigInteger.ONE.shiftLeft(len * 8);
        for (BigInteger[] r : intervals) {
            BigInteger end = r[1].add(BigInteger.ONE);
            if (end.compareTo(max) < 0) {
                out.add(setElement(unsigned(r[0], len), false));
                out.add(setElement(unsigned(end, len), true));
            } else {
                out.add(setElement(unsigned(r[0], len), false)
                        .bytes(NFTA_SET_ELEM_USERDATA, udata(NFTNL_UDATA_SET_ELEM_FLAGS, 4, 1, 0, 0, 0)));
            }
        }
        return out;
    }

    /** A set element with {@code key}, flagged as an interval's end or not. */
    private static Attrs setElement(byte[] key, boolean intervalEnd) {
        Attrs elem = new Attrs();
        if (intervalEnd) {
            elem.bytes(NFTA_SET_ELEM_FLAGS, be32(NFT_SET_ELEM_INTERVAL_END));
        }
        return elem.nested(NFTA_SET_ELEM_KEY, data(key));
    }

    /** A verdict as a map's data: {@code {"goto":{"target":...}}}, {@code {"accept":null}}, ... */
    private static Attrs verdict(JsonNode v) {
        if (v == null || !v.isObject() || v.size() != 1) {
            throw unsupported();
        }
        String kind = v.fieldNames().next();
        return verdict(kind, v.get(kind));
    }

    /** The verdict {@code kind} ({@code accept}, {@code drop}, {@code return}, {@code jump}, {@code goto}), {@code target} naming a jump's or goto's chain. */
    private static Attrs verdict(String kind, JsonNode target) {
        Attrs verdict = new Attrs();
        switch (kind) {
            case "accept" -> verdict.u32be(NFTA_VERDICT_CODE, NF_ACCEPT);
            case "drop" -> verdict.u32be(NFTA_VERDICT_CODE, NF_DROP);
            case "return" -> verdict.u32be(NFTA_VERDICT_CODE, NFT_RETURN);
            case "jump", "goto" -> verdict.u32be(NFTA_VERDICT_CODE, kind.equals("jump") ? NFT_JUMP : NFT_GOTO)
                    .string(NFTA_VERDICT_CHAIN, text(target, "target"));
            default -> throw unsupported();
        }
        return verdict;
    }

    private static int concatType(int addrType) {
        return (((addrType << CONCAT_TYPE_BITS) | TYPE_INET_PROTO) << CONCAT_TYPE_BITS) | TYPE_INET_SERVICE;
    }

    private static byte[] udata(int... bytes) {
        byte[] out = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            out[i] = (byte) bytes[i];
        }
        return out;
    }

    private static String setKey(int family, String table, String name) {
        return family + " " + table + " " + name;
    }

    /** Unsupported unless {@code o} has only {@code fields} (a handle, an index, a position: other forms). */
    private static void only(JsonNode o, String... fields) {
        List<String> allowed = List.of(fields);
        for (String f : iterable(o.fieldNames())) {
            if (!allowed.contains(f)) {
                throw unsupported();
            }
        }
    }

    /** A rule's statements (JSON text) in a table of one family. */
    private record ExprKey(int family, String json) {
    }

    /** An address and prefix length, the address already masked as nft sends it. */
    private record Prefix(byte[] address, int bits) {
        byte[] mask(int len) {
            byte[] m = new byte[len];
            for (int i = 0; i < bits; i++) {
                m[i / 8] |= (byte) (0x80 >>> (i % 8));
            }
            return m;
        }

        BigInteger[] interval(int len) {
            BigInteger start = new BigInteger(1, address);
            BigInteger hostBits = BigInteger.ONE.shiftLeft(len * 8 - bits).subtract(BigInteger.ONE);
            return new BigInteger[] {start, start.or(hostBits)};
        }
    }

    private static Prefix prefix(JsonNode n, int len) {
        String addr;
        int bits;
        if (n.isTextual()) {
            addr = n.asText();
            bits = len * 8;
        } else if (n.has("prefix")) {
            addr = text(n.get("prefix"), "addr");
            bits = n.get("prefix").path("len").asInt(-1);
        } else {
            throw unsupported();
        }
        if (bits < 0 || bits > len * 8 || addr.isEmpty() || !(addr.indexOf(':') >= 0 || Character.isDigit(addr.charAt(0)))) {
            throw unsupported(); // only literals: never a name to resolve
        }
        byte[] b;
        try {
            b = InetAddress.getByName(addr).getAddress();
        } catch (UnknownHostException e) {
            throw unsupported();
        }
        if (b.length != len) {
            throw unsupported();
        }
        Prefix unmasked = new Prefix(b, bits);
        byte[] m = unmasked.mask(len);
        for (int i = 0; i < len; i++) {
            b[i] &= m[i];
        }
        return new Prefix(b, bits);
    }

    private static boolean isMeta(JsonNode n, String key) {
        return n != null && n.has("meta") && key.equals(n.get("meta").path("key").asText());
    }

    private static int protocol(JsonNode n) {
        if (n.isIntegralNumber() && n.asInt() >= 0 && n.asInt() <= 255) {
            return n.asInt();
        }
        Integer p = n.isTextual() ? L4.get(n.asText()) : null;
        if (p == null) {
            throw unsupported();
        }
        return p;
    }

    private static int port(JsonNode n) {
        if (!n.isIntegralNumber() || n.asInt() < 0 || n.asInt() > 65535) {
            throw unsupported();
        }
        return n.asInt();
    }

    private static int[] portRange(JsonNode n) {
        JsonNode r = n.get("range");
        if (r == null || r.size() != 2) {
            throw unsupported();
        }
        int[] out = {port(r.get(0)), port(r.get(1))};
        if (out[0] > out[1]) {
            throw unsupported();
        }
        return out;
    }

    private static int family(JsonNode o) {
        Integer f = FAMILIES.get(text(o, "family"));
        if (f == null) {
            throw unsupported();
        }
        return f;
    }

    private static String text(JsonNode o, String field) {
        JsonNode v = o == null ? null : o.get(field);
        if (v == null || !v.isTextual()) {
            throw unsupported();
        }
        return v.asText();
    }

    private static <T> Iterable<T> iterable(java.util.Iterator<T> it) {
        return () -> it;
    }

    private static Attrs data(byte[] value) {
        return new Attrs().bytes(NFTA_DATA_VALUE, value);
    }

    private static byte[] be16(int v) {
        return new byte[] {(byte) (v >>> 8), (byte) v};
    }

    private static byte[] be32(int v) {
        return ByteBuffer.allocate(4).putInt(v).array();
    }

    private static byte[] host32(long v) {
        return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt((int) v).array();
    }

    private static byte[] unsigned(BigInteger v, int len) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[len];
        int n = Math.min(raw.length, len);
        System.arraycopy(raw, raw.length - n, out, len - n, n);
        return out;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Netlink attributes (nftables values are big-endian), nested ones flagged {@code NLA_F_NESTED} as libmnl does. */
    private static final class Attrs {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Attrs bytes(int type, byte[] value) {
            int len = 4 + value.length;
            out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putShort((short) len).putShort((short) type)
                    .array());
            out.writeBytes(value);
            for (int pad = (4 - (len & 3)) & 3; pad > 0; pad--) {
                out.write(0);
            }
            return this;
        }

        Attrs string(int type, String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            return bytes(type, Arrays.copyOf(b, b.length + 1));
        }

        Attrs u32be(int type, int v) {
            return bytes(type, be32(v));
        }

        Attrs u32beIf(int type, int v) {
            return v == 0 ? this : u32be(type, v);
        }

        Attrs u16be(int type, int v) {
            return bytes(type, be16(v));
        }

        Attrs u64(int type, long v) {
            return bytes(type, ByteBuffer.allocate(8).putLong(v).array());
        }

        Attrs nested(int type, Attrs inner) {
            return bytes(type | NLA_F_NESTED, inner.bytes());
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }
}
