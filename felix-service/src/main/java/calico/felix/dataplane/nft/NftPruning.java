package calico.felix.dataplane.nft;

import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import calico.felix.dataplane.rules.GenericChain;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.Match;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;

/**
 * Drops the rules that can never match (nftables-dataplane.md invariant 6): those with a positive
 * match on a set that is empty and never had members (the empty IPv6 twin of an IPv4 set, a
 * selector that has selected nothing yet, a set the graph has not sent). Dropping them keeps the
 * semantics (a rule that does not match has no effect) and keeps those sets, and the rules naming
 * them, out of the kernel, where every commit's validation walk and libnftables' cache pay for
 * each. Pure.
 */
final class NftPruning {

    private NftPruning() {
    }

    /**
     * A chain without its rules that can never match.
     *
     * @param source    the chain as rendered
     * @param refs      the kernel names of every set its rules name, in order of appearance
     * @param empty     those of {@code refs} that were empty and unpopulated when {@code result} was made
     * @param result    the chain as programmed
     * @param keptEmpty empty sets that kept rules still name (negated matches): they stay programmed
     */
    record Pruned(GenericChain source, List<String> refs, Set<String> empty, GenericChain result,
                  Set<String> keptEmpty) {
    }

    /**
     * {@return {@code source} pruned against {@code planned} sets}, {@code last} reused when the
     * chain and the emptiness of the sets it names did not change
     *
     * @param last      the chain's previous pruning, or null
     * @param planned   every planned set by kernel name
     * @param populated kernel names of planned sets that have had members since they entered the plan
     * @param setNames  the kernel names of graph sets
     */
    static Pruned pruned(Pruned last, GenericChain source, SortedMap<String, NftSet> planned, Set<String> populated,
                         SetNames setNames) {
        boolean sameSource = last != null && (last.source() == source || last.source().equals(source));
        List<String> refs = sameSource ? last.refs() : setRefs(source, setNames);
        Set<String> empty = new HashSet<>();
        for (String ref : refs) {
            NftSet s = planned.get(ref);
            if (s == null || (s.members().isEmpty() && !populated.contains(ref))) {
                empty.add(ref);
            }
        }
        if (sameSource && last.empty().equals(empty)) {
            return last;
        }
        if (empty.isEmpty() || !(source instanceof GenericChain.Rules rules)) {
            return new Pruned(source, refs, empty, source, Set.of());
        }
        List<GenericRule> kept = new ArrayList<>(rules.rules().size());
        Set<String> keptEmpty = new HashSet<>();
        for (GenericRule rule : rules.rules()) {
            boolean never = false;
            Set<String> negatedEmpty = new HashSet<>();
            for (Match m : rule.matches()) {
                String ref = setRef(m, setNames);
                if (ref != null && empty.contains(ref)) {
                    if (negated(m)) {
                        negatedEmpty.add(ref);
                    } else {
                        never = true;
                    }
                }
            }
            if (!never) {
                kept.add(rule);
                keptEmpty.addAll(negatedEmpty);
            }
        }
        GenericChain result = kept.size() == rules.rules().size() ? source : new GenericChain.Rules(rules.name(), kept);
        return new Pruned(source, refs, empty, result, Set.copyOf(keptEmpty));
    }

    private static List<String> setRefs(GenericChain c, SetNames setNames) {
        if (!(c instanceof GenericChain.Rules rules)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (GenericRule rule : rules.rules()) {
            for (Match m : rule.matches()) {
                String ref = setRef(m, setNames);
                if (ref != null) {
                    out.add(ref);
                }
            }
        }
        return List.copyOf(out);
    }

    /** {@return the kernel name of the set {@code m} names, or null} */
    private static String setRef(Match m, SetNames setNames) {
        if (m instanceof Match.InSet s) {
            return setNames.apply(s.family(), s.setId());
        } else if (m instanceof Match.NamedPortSet s) {
            return setNames.apply(s.family(), s.setId());
        }
        return null;
    }

    private static boolean negated(Match m) {
        return m instanceof Match.InSet s ? s.negated() : ((Match.NamedPortSet) m).negated();
    }
}
