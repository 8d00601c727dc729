package calico.felix.dataplane.nft;

import calico.dataplane.nft.BaseChain;
import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.NftablesException;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.nft.TableRef;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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
    final Map<String, ArrayNode> chains = new TreeMap<>();
    final Map<String, BaseChain> bases = new TreeMap<>();
    final Map<String, List<JsonNode>> sets = new TreeMap<>();
    final Map<String, SetSpec> setSpecs = new TreeMap<>();
    final Map<String, List<JsonNode>> maps = new TreeMap<>();

    /** {@return our table as listed}; not existing when the table is gone (other tables are never read) */
    static NftListing read(Nftables nft) {
        JsonNode listing = listTable(nft, TABLE);
        return listing == null ? new NftListing() : parse(listing);
    }

    /** {@return {@code table} as libnftables lists it, or null when it does not exist} */
    static JsonNode listTable(Nftables nft, TableRef table) {
        try {
            return nft.listTable(table);
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
        for (JsonNode item : listing.path("nftables")) {
            if (item.has("table") && ours(item.get("table"), "name")) {
                k.tableExists = true;
            } else if (item.has("chain") && ours(item.get("chain"), "table")) {
                JsonNode c = item.get("chain");
                k.chains.putIfAbsent(c.get("name").asText(), JSON.arrayNode());
                if (c.has("hook")) {
                    k.bases.put(c.get("name").asText(), new BaseChain(c.path("type").asText(),
                            c.get("hook").asText(), c.path("prio").asInt(), c.path("policy").asText()));
                }
            } else if (item.has("rule") && ours(item.get("rule"), "table")) {
                JsonNode r = item.get("rule");
                ObjectNode rule = JSON.objectNode();
                rule.set("expr", r.get("expr"));
                if (r.has("comment")) {
                    rule.set("comment", r.get("comment"));
                }
                k.chains.computeIfAbsent(r.get("chain").asText(), n -> JSON.arrayNode()).add(rule);
            } else if (item.has("set") && ours(item.get("set"), "table")) {
                JsonNode s = item.get("set");
                List<JsonNode> elems = new ArrayList<>();
                s.path("elem").forEach(elems::add);
                k.sets.put(s.get("name").asText(), elems);
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
                k.setSpecs.put(s.get("name").asText(), new SetSpec(types, interval));
            } else if (item.has("map") && ours(item.get("map"), "table")) {
                JsonNode m = item.get("map");
                List<JsonNode> elems = new ArrayList<>();
                m.path("elem").forEach(elems::add);
                k.maps.put(m.get("name").asText(), elems);
            }
        }
        return k;
    }

    private static boolean ours(JsonNode obj, String tableField) {
        return TABLE.family().equals(obj.path("family").asText()) && TABLE.name().equals(obj.path(tableField).asText());
    }
}
