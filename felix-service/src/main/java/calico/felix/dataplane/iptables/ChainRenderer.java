package calico.felix.dataplane.iptables;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.dataplane.rules.Ruleset;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The iptables view of a model: {@link RuleRenderer}'s neutral ruleset for IPv4, formatted by
 * {@link IptablesFormatter} into filter-table chains, plus the net sets the formatting needed.
 */
public final class ChainRenderer {

    /** Chains by name, the driver-made net sets (name -> members), and the neutral ruleset they came from. */
    public record Rendered(Map<String, Chain> chains, Map<String, Set<String>> netSets, Ruleset ruleset) {
    }

    private ChainRenderer() {
    }

    public static Rendered render(DataplaneModel model) {
        Ruleset rs = RuleRenderer.render(model, Set.of(IpFamily.V4));
        IptablesFormatter fmt = new IptablesFormatter(IpFamily.V4);
        Map<String, Chain> chains = new TreeMap<>();
        Map<String, Set<String>> netSets = new TreeMap<>();
        rs.chains(Ruleset.Table.FILTER).forEach((name, c) -> chains.put(name, fmt.chain(c, netSets)));
        return new Rendered(chains, netSets, rs);
    }
}
