package calico.felix.dataplane.nft;

import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.Ruleset;
import java.util.HashMap;
import java.util.Map;

/**
 * Formatted rules by table and neutral rule. While policies stream in, every apply re-renders
 * every endpoint chain (each gains the policies that arrived), yet nearly all of their rules (the
 * jump to a policy and the return after it, the tier markers) were formatted for some chain
 * before: they are looked up, not formatted again. Formatting is pure, so an entry never goes
 * stale; the cache is emptied when it holds more than twice the rules programmed.
 */
final class FormattedRules {

    private record Key(Ruleset.Table table, GenericRule rule) {
    }

    private final Map<Key, NftRule> rules = new HashMap<>();
    private final SetNames setNames;

    FormattedRules(SetNames setNames) {
        this.setNames = setNames;
    }

    /** {@return {@code rule} of a chain of {@code table}, formatted} (what {@link NftRuleFormatter#rule} gives) */
    NftRule format(Ruleset.Table table, GenericRule rule) {
        Key k = new Key(table, rule);
        NftRule r = rules.get(k);
        if (r == null) {
            r = NftRuleFormatter.rule(table, rule, setNames);
            rules.put(k, r);
        }
        return r;
    }

    /** Empties the cache if it holds more than twice {@code programmedRules} (rules no chain has any more). */
    void trim(int programmedRules) {
        if (rules.size() > 2 * programmedRules + 1_024) {
            rules.clear();
        }
    }
}
