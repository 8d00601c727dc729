package calico.felix.dataplane.nft;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.NftElem;
import calico.dataplane.nft.NftExpr;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.nft.TableRef;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The commands that write our objects into a batch, in our table only: what the planner's
 * changes and the verifier's repairs are made of. Pure (they only add to the batch given).
 */
final class NftCommands {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final TableRef TABLE = NftNames.TABLE;

    private NftCommands() {
    }

    /** Creates set {@code s} with all its members. */
    static void addSet(NftBatch b, NftSet s) {
        addSet(b, s, s.members());
    }

    /**
     * {@code add set} with {@code members} as its elements: creates the set, or adds to the
     * existing one. libnftables 1.0.6 needs no element cache for this form (an {@code add
     * element} command fetches every set's elements first: ~0.5 s at 40,000 members, against
     * ~10 ms). Our members never overlap (see {@link NftSetPlan}), and the kernel still refuses
     * overlapping intervals.
     */
    static void addSet(NftBatch b, NftSet s, Collection<String> members) {
        ObjectNode set = JSON.objectNode().put("family", TABLE.family()).put("table", TABLE.name()).put("name", s.name());
        SetSpec spec = s.spec();
        if (spec.type().size() == 1) {
            set.put("type", spec.type().get(0));
        } else {
            ArrayNode types = set.putArray("type");
            spec.type().forEach(types::add);
        }
        if (spec.interval()) {
            set.putArray("flags").add("interval");
        }
        if (!members.isEmpty()) {
            ArrayNode elem = set.putArray("elem");
            s.elements(members).forEach(elem::add);
        }
        ObjectNode cmd = JSON.objectNode();
        cmd.putObject("add").set("set", set);
        b.raw(cmd); // serialised at once: the elements are not copied
    }

    /** Declares chain {@code c} (and its verdict map, for a dispatch chain), without rules. */
    static void declare(NftBatch b, NftChain c) {
        b.addChain(TABLE, c.name());
        if (c.map() != null) {
            b.addVerdictMap(TABLE, c.map().name(), SetSpec.of("ifname"));
        }
    }

    /** Appends {@code c}'s rules to the chain of that name. */
    static void writeRules(NftBatch b, NftChain c) {
        for (NftRule r : c.rules()) {
            b.addRule(TABLE, c.name(), r.text(), r.comment());
        }
    }

    /** Creates base chain {@code name} with its hook and jumps. */
    static void addBase(NftBatch b, String name, NftTable.Base base) {
        b.addChain(TABLE, name, base.spec());
        addJumps(b, name, base);
    }

    /** Appends {@code base}'s jumps to base chain {@code name}. */
    static void addJumps(NftBatch b, String name, NftTable.Base base) {
        base.jumps().forEach(j -> b.addRule(TABLE, name, List.of(NftExpr.jump(j))));
    }

    /** {@return verdict-map elements {@code "<iface>" : goto <chain>}}, sorted by interface */
    static Map<JsonNode, JsonNode> mapEntries(Map<String, String> targets) {
        Map<JsonNode, JsonNode> out = new LinkedHashMap<>();
        new TreeMap<>(targets).forEach((iface, chain) -> out.put(NftElem.ifname(iface), NftExpr.goTo(chain)));
        return out;
    }
}
