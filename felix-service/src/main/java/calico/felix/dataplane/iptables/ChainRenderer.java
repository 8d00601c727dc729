package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.Table;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Ruleset;
import java.util.EnumMap;
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

    static Table kernelTable(Ruleset.Table t) {
        return switch (t) {
            case FILTER -> Table.FILTER;
            case NAT -> Table.NAT;
            case MANGLE -> Table.MANGLE;
            case RAW -> Table.RAW;
        };
    }
}
