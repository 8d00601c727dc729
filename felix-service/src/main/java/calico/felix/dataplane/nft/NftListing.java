package calico.felix.dataplane.nft;

import calico.dataplane.nft.BaseChain;
import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.NftablesException;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.nft.TableRef;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Our table as libnftables listed it: chains' rules without handles, base chains' hooks, set and
 * map elements. Only our table is ever listed; objects of other tables in a listing are ignored.
 * The verifier compares it with what was programmed ({@link NftListedForm} puts its rules and
 * ours into one form).
 */
final class NftListing {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final TableRef TABLE = NftNames.TABLE;

    boolean tableExists;
    /** Rules by chain name (base chains too), each {@code {"expr": [...], "comment": ...}}. */
    final Map<String, ListedChain> chains = new TreeMap<>();
    final Map<String, BaseChain> bases = new TreeMap<>();
    final Map<String, List<JsonNode>> sets = new TreeMap<>();
    final Map<String, SetSpec> setSpecs = new TreeMap<>();
    final Map<String, List<JsonNode>> maps = new TreeMap<>();

    /** {@return our table as listed}; not existing when the table is gone (other tables are never read) */
    static NftListing read(Nftables nft) {
        NftListing k = new NftListing();
        return orGone(nft, TABLE, () -> {
            nft.listTable(TABLE, k::add);
            return k;
        }) == null ? new NftListing() : k;
    }

    /** {@return {@code table} as libnftables lists it, or null when it does not exist} */
    static JsonNode listTable(Nftables nft, TableRef table) {
        return orGone(nft, table, () -> nft.listTable(table));
    }

    /** {@return what {@code listing} of {@code table} gives, or null when the table does not exist} */
    private static <T> T orGone(Nftables nft, TableRef table, Supplier<T> listing) {
        try {
            return listing.get();
        } catch (NftablesException e) {
            if (!nft.check(new NftBatch().flushTable(table))) {
                return null; // a dry-run flush fails too: the table is gone
            }
            throw e;
        }
    }

    /** {@return our objects in a libnftables JSON listing} */
    static NftListing parse(JsonNode listing) {
        NftListing k = new NftListing();
        listing.path("nftables").forEach(k::add);
        return k;
    }

    /** Takes one element of a listing's {@code nftables} array. */
    private void add(JsonNode item) {
        if (item.has("table") && ours(item.get("table"), "name")) {
            tableExists = true;
        } else if (item.has("chain") && ours(item.get("chain"), "table")) {
            JsonNode c = item.get("chain");
            chains.putIfAbsent(c.get("name").asText(), new ListedChain());
            if (c.has("hook")) {
                bases.put(c.get("name").asText(), new BaseChain(c.path("type").asText(),
                        c.get("hook").asText(), c.path("prio").asInt(), c.path("policy").asText()));
            }
        } else if (item.has("rule") && ours(item.get("rule"), "table")) {
            JsonNode r = item.get("rule");
            ObjectNode rule = JSON.objectNode();
            rule.set("expr", r.get("expr"));
            if (r.has("comment")) {
                rule.set("comment", r.get("comment"));
            }
            chains.computeIfAbsent(r.get("chain").asText(), n -> new ListedChain()).add(rule);
        } else if (item.has("set") && ours(item.get("set"), "table")) {
            JsonNode s = item.get("set");
            List<JsonNode> elems = new ArrayList<>();
            s.path("elem").forEach(elems::add);
            sets.put(s.get("name").asText(), elems);
            JsonNode type = s.get("type");
            List<String> types = new ArrayList<>();
            if (type.isArray()) {
                type.forEach(t -> types.add(t.asText()));
            } else {
                types.add(type.asText());
            }
            boolean interval = false;
            for (JsonNode f : s.path("flags")) {
                interval |= f.asText().equals("interval");
            }
            setSpecs.put(s.get("name").asText(), new SetSpec(types, interval));
        } else if (item.has("map") && ours(item.get("map"), "table")) {
            JsonNode m = item.get("map");
            List<JsonNode> elems = new ArrayList<>();
            m.path("elem").forEach(elems::add);
            maps.put(m.get("name").asText(), elems);
        }
    }

    private static boolean ours(JsonNode obj, String tableField) {
        return TABLE.family().equals(obj.path("family").asText()) && TABLE.name().equals(obj.path(tableField).asText());
    }
}
