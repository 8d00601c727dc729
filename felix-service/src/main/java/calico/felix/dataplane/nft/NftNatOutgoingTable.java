package calico.felix.dataplane.nft;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.TableRef;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RuleRenderer;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.EnumSet;
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

    /**
     * Brings the table to {@code model}: replaced when what it should hold changed, or always when
     * {@code full} (a resync: a stranger may have changed it); removed when no pool has natOutgoing.
     */
    public void sync(DataplaneModel model, boolean full) {
        if (model.pools().values().stream().noneMatch(p -> p.natOutgoing())) {
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
            apply(b);
            applied = json;
        }
    }

    /** Removes the table (present or not). */
    public void remove() {
        applied = null;
        apply(new NftBatch().addTable(TABLE).deleteTable(TABLE));
    }

    private static void apply(NftBatch b) {
        try (Nftables nft = Nftables.open()) {
            nft.apply(b);
        }
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
