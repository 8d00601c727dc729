package calico.dataplane.nft;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * An ordered list of nftables commands in libnftables' JSON schema (libnftables-json(5)).
 * {@link Nftables#apply} sends them as one document, which the kernel applies as one
 * transaction: all or nothing.
 *
 * <p>A builder, not thread-safe. Each command is serialised to JSON text when it is added, so
 * nothing a caller changes afterwards reaches the batch, a batch that has been applied can still
 * be extended and applied again, and no tree is copied: at 60,000 commands (a whole 2,000-policy
 * table) the deep copies and the second walk to print them cost as much as libnftables itself.
 * Expressions for rules come from {@link NftExpr} (or as {@link Exprs}, serialised once and
 * reused), set elements from {@link NftElem}, or any JSON tree of the schema.
 */
public final class NftBatch {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    // nft object names: identifier-like, bounded by NFT_NAME_MAXLEN (256 incl. NUL).
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_./:-]{0,254}");

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * Each command as JSON text, in order, or as a {@link RuleCommand} whose JSON is made only
     * when asked for: a batch that goes as nft syntax never needs it unless it fails.
     */
    private final List<Object> commands = new ArrayList<>();
    /** Each command in nft syntax, in order, while every command has that form ({@link NftText}). */
    private final List<String> lines = new ArrayList<>();
    /** In {@link #lines}: the line of the {@link RuleCommand} at that index, made when {@link #toNft} asks. */
    private static final String RULE_LINE = new String("add rule");
    private boolean allLines = true;
    /** Sets and maps this batch adds ({@code family/table/name}), and whether it edits elements of any other, or deletes any. */
    private final java.util.Set<String> declaredSets = new java.util.HashSet<>();
    private boolean elementsOfOtherSets;
    /** The chain and table {@link #addRule(TableRef, String, Exprs, String)} checked last, and whether nft syntax can name them. */
    private String lastRuleChain;
    private TableRef lastRuleTable;
    private boolean lastRuleChainIsWord;

    /** An {@code add rule} of expressions already serialised. */
    /** An {@code add rule} made from text expressions ({@link #addRule(TableRef, String, Exprs, String)}). */
    record RuleCommand(TableRef table, String chain, Exprs expr, String comment) {
        String json() {
            StringBuilder c = new StringBuilder(expr.json().length() + 128)
                    .append("{\"add\":{\"rule\":{\"family\":").append(quoted(table.family()))
                    .append(",\"table\":").append(quoted(table.name()))
                    .append(",\"chain\":").append(quoted(chain))
                    .append(",\"expr\":").append(expr.json());
            if (comment != null) {
                c.append(",\"comment\":").append(quoted(comment));
            }
            return c.append("}}}").toString();
        }
    }

    /**
     * A rule's expression list as JSON text, serialised once: a driver that keeps its formatted
     * rules can append them to any number of batches without walking the trees again.
     *
     * @param json a JSON array of at least one expression object
     */
    public record Exprs(String json, String nft) {

        /** @param nft the same statements in nft syntax, or null where {@link NftText} has no form for them */
        public Exprs {
            if (json == null || !json.startsWith("[{") || !json.endsWith("}]")) {
                throw new IllegalArgumentException("rule expr: at least one expression is required, was " + json);
            }
        }

        /** Statements with no nft-syntax form: batches carrying them go as JSON. */
        public Exprs(String json) {
            this(json, null);
        }

        /** {@return {@code expr} serialised} */
        public static Exprs of(List<? extends JsonNode> expr) {
            if (expr == null || expr.isEmpty()) {
                throw new IllegalArgumentException("rule expr: at least one expression is required");
            }
            StringBuilder out = new StringBuilder(64 * expr.size()).append('[');
            for (int i = 0; i < expr.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                JsonText.write(expr.get(i), out);
            }
            return new Exprs(out.append(']').toString(), NftText.exprs(expr));
        }
    }

    // --- tables ---

    public NftBatch addTable(TableRef table) {
        return command("add", "table", tableObject(table));
    }

    public NftBatch deleteTable(TableRef table) {
        return command("delete", "table", tableObject(table));
    }

    /**
     * Removes every rule of every chain of the table. Chains, sets and maps stay, and (as of
     * libnftables 1.0.6) so do set and map elements: flush those with {@link #flushSet}.
     */
    public NftBatch flushTable(TableRef table) {
        return command("flush", "table", tableObject(table));
    }

    // --- chains ---

    /** A regular chain: entered only by jump/goto/vmap. */
    public NftBatch addChain(TableRef table, String chain) {
        return command("add", "chain", chainObject(table, chain));
    }

    /** A base chain the kernel calls from a hook. */
    public NftBatch addChain(TableRef table, String chain, BaseChain base) {
        ObjectNode c = chainObject(table, chain);
        c.put("type", base.type()).put("hook", base.hook()).put("prio", base.priority()).put("policy", base.policy());
        return command("add", "chain", c);
    }

    /** Deletes an empty chain nothing jumps to (flush it and its referrers first). */
    public NftBatch deleteChain(TableRef table, String chain) {
        return command("delete", "chain", chainObject(table, chain));
    }

    public NftBatch flushChain(TableRef table, String chain) {
        return command("flush", "chain", chainObject(table, chain));
    }

    // --- rules ---

    /** Appends a rule to {@code chain}; {@code expr} is evaluated left to right. */
    public NftBatch addRule(TableRef table, String chain, List<? extends JsonNode> expr) {
        return command("add", "rule", ruleObject(table, chain, expr, null));
    }

    /** Appends a rule with a comment (shown by {@code nft list}, handy to find felix's rules). */
    public NftBatch addRule(TableRef table, String chain, List<? extends JsonNode> expr, String comment) {
        return command("add", "rule", ruleObject(table, chain, expr, comment));
    }

    /**
     * Appends a rule whose expressions are already text; the command equals what {@link
     * #addRule(TableRef, String, List, String)} makes from the same expressions.
     *
     * @param comment null for none
     */
    public NftBatch addRule(TableRef table, String chain, Exprs expr, String comment) {
        if (!chain.equals(lastRuleChain) || !table.equals(lastRuleTable)) { // a chain's rules come one after another
            requireName("chain name", chain);
            lastRuleChain = chain;
            lastRuleTable = table;
            lastRuleChainIsWord = NftText.isWord(chain) && NftText.isWord(table.name()) && NftText.isWord(table.family());
        }
        commands.add(new RuleCommand(table, chain, expr, comment == null ? null : checkedComment(comment)));
        // Its nft-syntax line is made only if the batch goes as text (most go as netlink messages).
        line(allLines && lastRuleChainIsWord && expr.nft() != null && (comment == null || NftText.isQuotable(comment))
                ? RULE_LINE : null);
        return this;
    }

    /** Deletes the rule with kernel {@code handle} (from a listing) in {@code chain}. */
    public NftBatch deleteRule(TableRef table, String chain, long handle) {
        if (handle <= 0) {
            throw new IllegalArgumentException("rule handle: must be positive, was " + handle);
        }
        ObjectNode r = chainRef(table, chain);
        r.put("handle", handle);
        return command("delete", "rule", r);
    }

    // --- sets and maps ---

    public NftBatch addSet(TableRef table, String set, SetSpec spec) {
        ObjectNode s = setObject(table, set);
        putKeyType(s, spec);
        return command("add", "set", s);
    }

    public NftBatch deleteSet(TableRef table, String set) {
        return command("delete", "set", setObject(table, set));
    }

    public NftBatch flushSet(TableRef table, String set) {
        return command("flush", "set", setObject(table, set));
    }

    /** A verdict map ({@code type <key> : verdict}), e.g. {@code ifname : verdict} for per-interface dispatch. */
    public NftBatch addVerdictMap(TableRef table, String map, SetSpec key) {
        return addMap(table, map, key, "verdict");
    }

    /** A data map from {@code key} to values of type {@code valueType} (e.g. {@code mark}). */
    public NftBatch addMap(TableRef table, String map, SetSpec key, String valueType) {
        requireName("map value type", valueType);
        ObjectNode m = setObject(table, map);
        putKeyType(m, key);
        m.put("map", valueType);
        return command("add", "map", m);
    }

    public NftBatch deleteMap(TableRef table, String map) {
        return command("delete", "map", setObject(table, map));
    }

    public NftBatch flushMap(TableRef table, String map) {
        return command("flush", "map", setObject(table, map));
    }

    /** Adds elements (from {@link NftElem}) to a set. Adding an existing element is not an error. */
    public NftBatch addElements(TableRef table, String set, List<? extends JsonNode> elements) {
        return command("add", "element", elementObject(table, set, elements));
    }

    /** Deletes elements; deleting a missing element fails the whole batch. */
    public NftBatch deleteElements(TableRef table, String set, List<? extends JsonNode> elements) {
        return command("delete", "element", elementObject(table, set, elements));
    }

    /** Adds {@code key -> value} entries to a map (value: a verdict from {@link NftExpr} or data). */
    public NftBatch addMapElements(TableRef table, String map, Map<? extends JsonNode, ? extends JsonNode> entries) {
        List<JsonNode> pairs = new ArrayList<>();
        entries.forEach((k, v) -> pairs.add(JSON.arrayNode().add(k).add(v)));
        return command("add", "element", elementObject(table, map, pairs));
    }

    /** Deletes map entries by key. */
    public NftBatch deleteMapElements(TableRef table, String map, List<? extends JsonNode> keys) {
        return deleteElements(table, map, keys);
    }

    /** Appends any command of the schema, e.g. {@code {"replace":{"rule":{...}}}}; for what has no helper. */
    public NftBatch raw(ObjectNode command) {
        if (command.size() != 1) {
            throw new IllegalArgumentException("command: must have exactly one verb key, was " + command);
        }
        String verb = command.fieldNames().next();
        JsonNode body = command.get(verb);
        if (body.isObject() && body.size() == 1) {
            String kind = body.fieldNames().next();
            noteSets(verb, kind, body.get(kind));
        } else {
            elementsOfOtherSets = true; // not a command shape we can read: assume the worst
        }
        commands.add(JsonText.of(command));
        line(allLines ? NftText.command(command) : null);
        return this;
    }

    private void noteSets(String verb, String kind, JsonNode body) {
        String key = body.path("family").asText() + "/" + body.path("table").asText() + "/" + body.path("name").asText();
        if (verb.equals("add") && (kind.equals("set") || kind.equals("map"))) {
            declaredSets.add(key);
        } else if (kind.equals("element") && (!verb.equals("add") || !declaredSets.contains(key))) {
            elementsOfOtherSets = true;
        }
    }

    /**
     * {@return whether the batch deletes elements, or adds elements to a set or map it does not
     * add itself} (one made by an earlier batch: its shape is known only to the kernel and libnftables)
     */
    boolean editsElementsOfOtherSets() {
        return elementsOfOtherSets;
    }

    private void line(String nft) {
        if (nft == null) {
            allLines = false;
            lines.clear();
        } else if (allLines) {
            lines.add(nft);
        }
    }

    // --- output ---

    public int size() {
        return commands.size();
    }

    public boolean isEmpty() {
        return commands.isEmpty();
    }

    /** {@return the commands, in order, parsed afresh (changing them does not change the batch)} */
    public List<ObjectNode> commands() {
        return texts().stream().map(NftBatch::parse).toList();
    }

    /** {@return the commands as JSON text, in order} (for bisection: no parsing) */
    List<String> texts() {
        List<String> out = new ArrayList<>(commands.size());
        for (int i = 0; i < commands.size(); i++) {
            out.add(text(i));
        }
        return out;
    }

    /** {@return command {@code i} as JSON text}: made on demand, so a reader that stops early pays for no more */
    /** {@return command {@code i} when it is an {@code add rule} made from text expressions}, else null (the netlink encoder reads its parts) */
    RuleCommand ruleCommand(int i) {
        return commands.get(i) instanceof RuleCommand r ? r : null;
    }

    String text(int i) {
        Object c = commands.get(i);
        return c instanceof RuleCommand r ? r.json() : (String) c;
    }

    /** {@return the document {@code {"nftables":[...]}} with every command} */
    public ObjectNode toDocument() {
        return document(commands());
    }

    static ObjectNode document(List<? extends JsonNode> commands) {
        ObjectNode doc = JSON.objectNode();
        ArrayNode list = doc.putArray("nftables");
        commands.forEach(list::add);
        return doc;
    }

    /**
     * {@return the batch in nft syntax, one command per line}, or null when a command has no such
     * form (see {@link NftText}); {@link Nftables#apply} sends this when it can: libnftables takes
     * ~60 % of the time for text that it takes for the same batch as JSON.
     */
    public String toNft() {
        if (!allLines) {
            return null;
        }
        List<String> all = new ArrayList<>(lines.size());
        int size = 16;
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l == RULE_LINE) {
                RuleCommand r = (RuleCommand) commands.get(i);
                l = NftText.addRule(r.table(), r.chain(), r.expr().nft(), r.comment());
            }
            all.add(l);
            size += l.length() + 1;
        }
        StringBuilder out = new StringBuilder(size);
        for (String l : all) {
            out.append(l).append('\n');
        }
        return out.toString();
    }

    /** {@return the document as JSON text}, joined from the commands' text */
    public String toJson() {
        return joined(texts());
    }

    /** {@code {"nftables":[...]}} around commands given as trees. */
    static String json(List<? extends JsonNode> commands) {
        return joined(commands.stream().map(JsonNode::toString).toList());
    }

    /** {@code {"nftables":[...]}} around commands given as text. */
    static String joined(List<String> commands) {
        int size = 16;
        for (String c : commands) {
            size += c.length() + 1;
        }
        StringBuilder out = new StringBuilder(size).append("{\"nftables\":[");
        for (int i = 0; i < commands.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            out.append(commands.get(i));
        }
        return out.append("]}").toString();
    }

    static ObjectNode parse(String command) {
        try {
            return (ObjectNode) MAPPER.readTree(command);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a command of our own is not JSON: " + command, e);
        }
    }

    private static String quoted(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2);
        JsonText.quote(s, out);
        return out.toString();
    }

    private static String checkedComment(String comment) {
        if (comment.length() > 128) {
            throw new IllegalArgumentException("rule comment: at most 128 characters, was " + comment.length());
        }
        return comment;
    }

    @Override
    public String toString() {
        return toJson();
    }

    /** {@code NAME} without a regular expression: every rule of a catch-up's batch names its chain. */
    private static boolean isName(String value) {
        if (value == null || value.isEmpty() || value.length() > 255) {
            return false;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            boolean letter = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_';
            if (!letter && (i == 0 || !(c >= '0' && c <= '9' || c == '.' || c == '/' || c == ':' || c == '-'))) {
                return false;
            }
        }
        return true;
    }

    static void requireName(String field, String value) {
        if (!isName(value)) {
            throw new IllegalArgumentException(field + ": must match " + NAME.pattern() + ", was " + value);
        }
    }

    private NftBatch command(String verb, String kind, ObjectNode body) {
        ObjectNode c = JSON.objectNode();
        c.putObject(verb).set(kind, body);
        noteSets(verb, kind, body);
        commands.add(JsonText.of(c));
        line(allLines ? NftText.command(c) : null);
        return this;
    }

    private static ObjectNode tableObject(TableRef t) {
        return JSON.objectNode().put("family", t.family()).put("name", t.name());
    }

    private static ObjectNode chainObject(TableRef t, String chain) {
        requireName("chain name", chain);
        return JSON.objectNode().put("family", t.family()).put("table", t.name()).put("name", chain);
    }

    private static ObjectNode chainRef(TableRef t, String chain) {
        requireName("chain name", chain);
        return JSON.objectNode().put("family", t.family()).put("table", t.name()).put("chain", chain);
    }

    private static ObjectNode ruleObject(TableRef t, String chain, List<? extends JsonNode> expr, String comment) {
        if (expr == null || expr.isEmpty()) {
            throw new IllegalArgumentException("rule expr: at least one expression is required");
        }
        ObjectNode r = chainRef(t, chain);
        ArrayNode list = r.putArray("expr");
        expr.forEach(list::add);
        if (comment != null) {
            r.put("comment", checkedComment(comment));
        }
        return r;
    }

    private static ObjectNode setObject(TableRef t, String set) {
        requireName("set name", set);
        return JSON.objectNode().put("family", t.family()).put("table", t.name()).put("name", set);
    }

    private static void putKeyType(ObjectNode s, SetSpec spec) {
        if (spec.type().size() == 1) {
            s.put("type", spec.type().get(0));
        } else {
            ArrayNode types = s.putArray("type");
            spec.type().forEach(types::add);
        }
        if (spec.interval()) {
            s.putArray("flags").add("interval");
        }
    }

    private static ObjectNode elementObject(TableRef t, String set, List<? extends JsonNode> elements) {
        if (elements == null || elements.isEmpty()) {
            throw new IllegalArgumentException("elements: at least one element is required");
        }
        ObjectNode e = setObject(t, set);
        ArrayNode list = e.putArray("elem");
        elements.forEach(list::add);
        return e;
    }
}
