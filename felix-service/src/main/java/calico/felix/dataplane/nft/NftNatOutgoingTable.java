package calico.felix.dataplane.nft;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.TableRef;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RuleRenderer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * natOutgoing for the eBPF driver: the nftables driver's {@code cali-nat-outgoing} (the same
 * rendering, {@link RuleRenderer#renderNatOutgoing}, and the same commands) in a table of its
 * own, {@value #NAME}, so that a switch between eBPF and nftables (make before break: the new
 * driver's table first, then the old one's removed) never removes the other's. The table exists
 * only while a pool has natOutgoing; each change replaces it whole in one transaction (a rule and
 * a few sets: the kernel's conntrack keeps the bindings of connections already masqueraded).
 * Changes are rare (pools, settings), so each opens a libnftables context on the calling thread
 * (in its namespace) and closes it: nothing is held between them, and no thread owns this object.
 * A refresh ({@link #repair}) lists the table and compares it with its listing right after our last
 * write: a stranger's edit, or the table removed, is undone.
 */
public final class NftNatOutgoingTable {

    /** Our table's name (no {@code calico}: that is the nftables driver's table). */
    public static final String NAME = "cali-bpf-nat";
    private static final TableRef TABLE = TableRef.inet(NAME);
    private static final Set<IpFamily> BOTH = EnumSet.allOf(IpFamily.class);

    private final NftDesiredState desired = new NftDesiredState(
            m -> RuleRenderer.renderNatOutgoing(m, BOTH, m.settings().forNftables()), null);
    /** The transaction last applied (null: the table is absent, or not known to be). */
    private String applied;
    /** The kernel's listing of the table right after that transaction, without handles and counts. */
    private JsonNode listed;

    /**
     * Brings the table to {@code model}: replaced when what it should hold changed, or always when
     * {@code full} (a resync: a stranger may have changed it); removed when no pool has natOutgoing.
     */
    public void sync(DataplaneModel model, boolean full) {
        if (!needed(model)) {
            if (full || applied != null) {
                remove();
            }
            return;
        }
        NftBatch b = new NftBatch();
        NftChangePlanner.fullBatch(desired.render(model)).commands().forEach(c -> b.raw(retabled(c)));
        String json = b.toJson();
        if (full || !json.equals(applied)) {
            applied = null;
            listed = null;
            try (Nftables nft = Nftables.open()) {
                nft.apply(b);
                listed = listing(nft);
            }
            applied = json;
        }
    }

    /**
     * At a refresh: the table as the kernel lists it against its listing after our last write.
     * {@return whether a stranger's change (an edit, the table removed, or the table present while
     * no pool needs it) was undone}
     */
    public boolean repair(DataplaneModel model) {
        JsonNode now;
        try (Nftables nft = Nftables.open()) {
            now = listing(nft);
        }
        if (!needed(model)) {
            if (now == null) {
                return false;
            }
            remove();
            return true;
        }
        if (now != null && now.equals(listed)) {
            return false;
        }
        sync(model, true);
        return true;
    }

    /** Removes the table (present or not). */
    public void remove() {
        applied = null;
        listed = null;
        try (Nftables nft = Nftables.open()) {
            nft.apply(new NftBatch().addTable(TABLE).deleteTable(TABLE));
        }
    }

    private static boolean needed(DataplaneModel model) {
        return model.pools().values().stream().anyMatch(p -> p.natOutgoing());
    }

    /**
     * {@return the table as listed, without what changes by itself (rule handles, counters' counts);
     * null when it does not exist}
     */
    private static JsonNode listing(Nftables nft) {
        JsonNode listed = NftListing.listTable(nft, TABLE);
        if (listed == null) {
            return null;
        }
        JsonNode items = listed.path("nftables");
        items.forEach(NftNatOutgoingTable::withoutVolatile);
        return items;
    }

    private static void withoutVolatile(JsonNode node) {
        if (node instanceof ObjectNode o) {
            o.remove(List.of("handle", "packets", "bytes"));
        }
        node.forEach(NftNatOutgoingTable::withoutVolatile);
    }

    /** {@code command} (the nftables driver's, for its table) for ours: the table's name replaced. */
    private static ObjectNode retabled(ObjectNode command) {
        ObjectNode verb = (ObjectNode) command.elements().next();
        String kind = verb.fieldNames().next();
        ObjectNode object = (ObjectNode) verb.get(kind);
        object.put(kind.equals("table") ? "name" : "table", NAME);
        return command;
    }
}
