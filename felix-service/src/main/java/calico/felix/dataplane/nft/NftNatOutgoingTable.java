package calico.felix.dataplane.nft;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.TableRef;
import calico.felix.calc.DataplaneUpdate.HostMetadataUpdate;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.MarkBits;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.RuleSettings;
import calico.felix.dataplane.rules.Ruleset;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

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

    private final NftDesiredState desired;
    /** What the last rendering read from the model (null: none yet, or the table was not needed). */
    private Inputs renderedFrom;
    /** The transaction rendered from {@link #renderedFrom}, and its JSON (what {@link #applied} is compared with). */
    private NftBatch renderedBatch;
    private String rendered;
    /** The transaction last applied (null: the table is absent, or not known to be). */
    private String applied;
    /** The kernel's listing of the table right after that transaction, without handles and counts. */
    private JsonNode listed;

    public NftNatOutgoingTable() {
        this(m -> RuleRenderer.renderNatOutgoing(m, BOTH, m.settings().forNftables()));
    }

    /** @param renderer the model's natOutgoing ruleset (tests count its calls) */
    NftNatOutgoingTable(Function<DataplaneModel, Ruleset> renderer) {
        desired = new NftDesiredState(renderer, null);
    }

    /**
     * What the rendering reads from the model ({@link RuleRenderer#renderNatOutgoing}): the pools (their CIDRs
     * and natOutgoing), the settings (natOutgoing's exclusions and ports among them), the marks and interface
     * prefixes the renderer is made with and, with {@code natOutgoingExclusions: IPPoolsAndHostIPs}, the
     * hosts' addresses and {@code externalNodesList}. Equal inputs render the same table.
     */
    private record Inputs(Map<String, IpPoolUpdate> pools, RuleSettings settings, MarkBits marks,
                          List<String> interfacePrefixes, Map<String, HostMetadataUpdate> hosts,
                          List<String> externalNodes) {

        static Inputs of(DataplaneModel m) {
            boolean hosts = m.settings().natOutgoing().excludeHosts();
            return new Inputs(Map.copyOf(m.pools()), m.settings(), m.marks(), m.interfacePrefixes(),
                    hosts ? Map.copyOf(m.hosts()) : Map.of(), hosts ? m.config().externalNodesCidrs() : List.of());
        }

        /** Compared in place, without copying the model's maps. */
        boolean same(DataplaneModel m) {
            boolean hostsToo = m.settings().natOutgoing().excludeHosts();
            return settings.equals(m.settings()) && marks.equals(m.marks()) && interfacePrefixes.equals(m.interfacePrefixes())
                    && pools.equals(m.pools()) && (hostsToo ? hosts.equals(m.hosts())
                    && externalNodes.equals(m.config().externalNodesCidrs()) : hosts.isEmpty());
        }
    }

    /**
     * Brings the table to {@code model}: replaced when what it should hold changed, or always when
     * {@code full} (a resync: a stranger may have changed it); removed when no pool has natOutgoing.
     * Rendered again only when its inputs ({@link Inputs}) changed: most applies change none.
     */
    public void sync(DataplaneModel model, boolean full) {
        if (!needed(model)) {
            renderedFrom = null;
            renderedBatch = null;
            rendered = null;
            if (full || applied != null) {
                remove();
            }
            return;
        }
        if (renderedFrom == null || !renderedFrom.same(model)) {
            NftBatch b = new NftBatch();
            NftChangePlanner.fullBatch(desired.render(model)).commands().forEach(c -> b.raw(retabled(c)));
            renderedFrom = Inputs.of(model);
            renderedBatch = b;
            rendered = b.toJson();
        }
        if (full || !rendered.equals(applied)) {
            applied = null;
            listed = null;
            try (Nftables nft = Nftables.open()) {
                nft.apply(renderedBatch);
                listed = listing(nft);
            }
            applied = rendered;
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
