package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.Table;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.GenericChain;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RenderCache;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Ruleset;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The iptables view of a model in one family: {@link RuleRenderer}'s neutral ruleset for that
 * family, formatted by {@link IptablesFormatter} into per-table chains, plus the net sets the
 * formatting needed.
 */
public final class ChainRenderer {

    /** Chains by table and name, the driver-made net sets (name -> members), and the neutral ruleset they came from. */
    public record Rendered(IpFamily family, Map<Table, Map<String, Chain>> tables, Map<String, Set<String>> netSets,
                           Ruleset ruleset) {

        /** {@return the filter table's chains} */
        public Map<String, Chain> chains() {
            return tables.getOrDefault(Table.FILTER, Map.of());
        }

        public Map<String, Chain> chains(Table table) {
            return tables.getOrDefault(table, Map.of());
        }
    }

    private ChainRenderer() {
    }

    /** The IPv4 view. */
    public static Rendered render(DataplaneModel model) {
        return render(model, IpFamily.V4);
    }

    public static Rendered render(DataplaneModel model, IpFamily family) {
        Ruleset rs = RuleRenderer.render(model, Set.of(family));
        IptablesFormatter fmt = new IptablesFormatter(family);
        Map<Table, Map<String, Chain>> tables = new EnumMap<>(Table.class);
        Map<String, Set<String>> netSets = new TreeMap<>();
        rs.chains().forEach((t, chains) -> {
            Map<String, Chain> out = new TreeMap<>();
            chains.forEach((name, c) -> out.put(name, fmt.chain(c, netSets)));
            tables.put(kernelTable(t), out);
        });
        return new Rendered(family, tables, netSets, rs);
    }

    /**
     * Renders like {@link #render(DataplaneModel, IpFamily)} but incrementally: a {@link RenderCache}
     * per family reuses unchanged neutral chains, and a chain reused by identity reuses its
     * formatted form (and the net sets it needed), so unchanged chains come back as the same
     * {@link Chain} instances. One per driver; not thread-safe.
     */
    public static final class Incremental {

        private record Formatted(Chain chain, Map<String, Set<String>> netSets) {
        }

        private final Map<IpFamily, RenderCache> caches = new EnumMap<>(IpFamily.class);
        private final Map<IpFamily, Map<GenericChain, Formatted>> formatted = new EnumMap<>(IpFamily.class);

        public Rendered render(DataplaneModel model, IpFamily family) {
            Ruleset rs = RuleRenderer.render(model, Set.of(family),
                    caches.computeIfAbsent(family, f -> new RenderCache()));
            IptablesFormatter fmt = new IptablesFormatter(family);
            Map<GenericChain, Formatted> old = formatted.getOrDefault(family, Map.of());
            Map<GenericChain, Formatted> kept = new IdentityHashMap<>();
            Map<Table, Map<String, Chain>> tables = new EnumMap<>(Table.class);
            Map<String, Set<String>> netSets = new TreeMap<>();
            rs.chains().forEach((t, chains) -> {
                Map<String, Chain> out = new java.util.LinkedHashMap<>(); // in name order: chains is sorted
                chains.forEach((name, c) -> {
                    Formatted f = old.get(c);
                    if (f == null) {
                        Map<String, Set<String>> own = new TreeMap<>();
                        f = new Formatted(fmt.chain(c, own), own);
                    }
                    kept.put(c, f);
                    out.put(name, f.chain());
                    netSets.putAll(f.netSets());
                });
                tables.put(kernelTable(t), out);
            });
            formatted.put(family, kept);
            return new Rendered(family, tables, netSets, rs);
        }

        /** Forgets everything (e.g. after a failure, so the next render starts clean). */
        public void clear() {
            caches.clear();
            formatted.clear();
        }
    }

    static Table kernelTable(Ruleset.Table t) {
        return switch (t) {
            case FILTER -> Table.FILTER;
            case NAT -> Table.NAT;
            case MANGLE -> Table.MANGLE;
            case RAW -> Table.RAW;
        };
    }
}
