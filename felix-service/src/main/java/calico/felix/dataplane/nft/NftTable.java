package calico.felix.dataplane.nft;

import calico.dataplane.nft.BaseChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import calico.felix.dataplane.rules.PolicyDriver;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything in our table, in kernel names: what the model renders to ({@link NftDesiredState})
 * or what was last programmed ({@link NftCommitter}). Immutable once made; the planner compares
 * two of them.
 *
 * @param chains regular chains by kernel name (dispatch chains carry their verdict map)
 * @param bases  base chains by kernel name ({@code filter-FORWARD}, ...)
 * @param sets   named sets by kernel name
 */
record NftTable(SortedMap<String, NftChain> chains, SortedMap<String, Base> bases, SortedMap<String, NftSet> sets) {

    /** An empty table: what is programmed before the first apply and after {@code removeAll}. */
    static NftTable empty() {
        return new NftTable(new TreeMap<>(), new TreeMap<>(), new TreeMap<>());
    }

    /** A base chain: its hook and the entry chains it jumps to, in order. */
    record Base(BaseChain spec, List<String> jumps) {
        Base {
            jumps = List.copyOf(jumps);
        }
    }

    /** {@return the sizes of this table} (chains and base chains, their rules and jumps, sets and members) */
    PolicyDriver.Programmed counts() {
        int chainCount = chains.size() + bases.size();
        int rules = chains.values().stream().mapToInt(c -> c.rules().size()).sum()
                + bases.values().stream().mapToInt(b -> b.jumps().size()).sum();
        int members = sets.values().stream().mapToInt(s -> s.members().size()).sum();
        return new PolicyDriver.Programmed(chainCount, rules, sets.size(), members);
    }
}
