package calico.felix.dataplane.rules;

import calico.api.model.Action;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.NflogPrefix.Verdict;
import calico.felix.dataplane.rules.RuleHit.Owner;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Every NFLOG prefix the renderer emits for one {@link DataplaneModel}, mapped back to its hit;
 * published by {@link RuleRenderer#hitTable}. Built with the same {@link NflogPrefix} functions the
 * renderer calls, so a hashed prefix decodes exactly; immutable, so the collector's thread reads
 * it while the next one is built.
 */
public final class HitTable {

    private final Map<String, RuleHit> hits;

    private HitTable(Map<String, RuleHit> hits) {
        this.hits = Map.copyOf(hits);
    }

    public static final HitTable EMPTY = new HitTable(Map.of());

    /** The table for what the renderer programs from {@code model} (see {@link RuleRenderer#hitTable}). */
    static HitTable of(DataplaneModel model) {
        Map<String, RuleHit> out = new HashMap<>();
        for (boolean in : new boolean[] {true, false}) {
            out.put(NflogPrefix.noProfileMatched(in), new RuleHit(Verdict.DENY, in, Owner.NO_PROFILE, null, null,
                    null, -1));
        }
        model.policies().forEach((id, p) -> {
            if (!id.staged()) {
                rules(out, p, (v, in, i) -> NflogPrefix.policyRule(v, in, i, id),
                        (v, in, i) -> new RuleHit(v, in, Owner.POLICY_RULE, id, null, id.tier(), i));
            }
        });
        model.profiles().forEach((name, p) -> rules(out, p, (v, in, i) -> NflogPrefix.profileRule(v, in, i, name),
                (v, in, i) -> new RuleHit(v, in, Owner.PROFILE_RULE, null, name, null, i)));
        Stream.concat(model.workloads().values().stream().flatMap(w -> Stream.of(w.ingress(), w.egress())),
                model.hostEndpoints().values().stream().flatMap(h -> Stream.of(h.ingress(), h.egress(),
                        h.forwardIngress(), h.forwardEgress()))).flatMap(List::stream).forEach(t -> tier(out, t, model));
        return new HitTable(out);
    }

    /** Something made of a rule's verdict, direction and index: its prefix, its hit. */
    private interface PerRule<T> {
        T of(Verdict v, boolean inbound, int ruleIndex);
    }

    /** The hits of every rule with a verdict of a policy's or profile's two directions. */
    private static void rules(Map<String, RuleHit> out, CompiledPolicy p, PerRule<String> prefix, PerRule<RuleHit> hit) {
        for (boolean in : new boolean[] {true, false}) {
            List<CompiledRule> rules = in ? p.inbound() : p.outbound();
            for (int i = 0; i < rules.size(); i++) {
                Verdict v = verdict(rules.get(i).action());
                if (v != null) {
                    out.put(prefix.of(v, in, i), hit.of(v, in, i));
                }
            }
        }
    }

    private static void tier(Map<String, RuleHit> out, TierPolicies t, DataplaneModel model) {
        for (boolean in : new boolean[] {true, false}) {
            for (Verdict v : new Verdict[] {Verdict.DENY, Verdict.PASS}) {
                out.put(NflogPrefix.endOfTier(v, in, t.tier()), new RuleHit(v, in, Owner.END_OF_TIER, null, null,
                        t.tier(), -1));
            }
            for (PolicyId p : t.policies()) {
                if (!p.staged() && !model.policies().containsKey(p)) {
                    out.put(NflogPrefix.missingPolicy(in, p), new RuleHit(Verdict.DENY, in, Owner.MISSING_POLICY, p,
                            null, p.tier(), -1));
                }
            }
        }
    }

    /** The verdict an NFLOG rule records for a rule action; null for Log (no NFLOG rule). */
    public static Verdict verdict(Action a) {
        return switch (a) {
            case Allow -> Verdict.ALLOW;
            case Deny -> Verdict.DENY;
            case Pass -> Verdict.PASS;
            default -> null;
        };
    }

    /** {@return the hit a prefix stands for}, or null for a prefix this table never rendered */
    public RuleHit decode(String prefix) {
        return hits.get(prefix);
    }

    public int size() {
        return hits.size();
    }
}
