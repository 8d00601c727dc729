package calico.felix.dataplane.nft;

import static calico.felix.dataplane.nft.NftCommands.addBase;
import static calico.felix.dataplane.nft.NftCommands.addJumps;
import static calico.felix.dataplane.nft.NftCommands.addSet;
import static calico.felix.dataplane.nft.NftCommands.declare;
import static calico.felix.dataplane.nft.NftCommands.mapEntries;
import static calico.felix.dataplane.nft.NftCommands.writeRules;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.NftElem;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.nft.TableRef;
import calico.felix.dataplane.nft.NftRuleFormatter.DispatchMap;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import calico.felix.dataplane.rules.Ruleset;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Desired state against what is programmed -> the change to make: one batch, ordered so every
 * reference exists when it is made and is gone before its target is deleted
 * (nftables-dataplane.md invariant 4). Pure: nothing here touches the kernel or keeps state.
 */
final class NftChangePlanner {

    private static final TableRef TABLE = NftNames.TABLE;
    /** Up to this many members, a set losing members is flushed and refilled rather than edited. */
    static final int REFILL_LIMIT = 10_000;
    /** Name prefixes of workload endpoint chains, the ones an apply with more coming may hold back. */
    private static final String TO_WORKLOAD = NftNames.chain(Ruleset.Table.FILTER, Names.toWorkload(""));
    private static final String FROM_WORKLOAD = NftNames.chain(Ruleset.Table.FILTER, Names.fromWorkload(""));
    /** How an anonymous set starts in a rule's JSON ({@code JsonText}: no spaces). */
    private static final String ANONYMOUS_SET = "{\"set\":[";

    private NftChangePlanner() {
    }

    /** What turns the programmed table into the desired one. */
    sealed interface Change permits Resync, Edit {
    }

    /** No edit can do it: set {@code set} changes shape (a set a rule names cannot be deleted), so the table is rewritten. */
    record Resync(String set) implements Change {
    }

    /**
     * One transaction of edits.
     *
     * @param written     chains and base chains written (new, or flushed and refilled)
     * @param setsWritten sets created or edited, and dispatch maps whose elements changed
     */
    record Edit(NftBatch batch, List<String> written, List<String> goneChains, List<String> goneBases,
                List<String> goneSets, int setsWritten) implements Change {

        ApplyStats stats() {
            return new ApplyStats(false, written.size(), goneChains.size() + goneBases.size(), setsWritten,
                    goneSets.size());
        }

        /** {@return every chain name this edit wrote or removed} (their read-back listings are out of date) */
        List<String> touched() {
            List<String> out = new ArrayList<>(written);
            out.addAll(goneChains);
            out.addAll(goneBases);
            return out;
        }
    }

    /** {@code desired} with endpoint chains kept as programmed, and which ones. */
    record Holding(NftTable table, Set<String> held) {
    }

    /** {@return the one transaction that replaces our table with {@code d}}: delete and recreate it */
    static NftBatch fullBatch(NftTable d) {
        NftBatch b = new NftBatch().addTable(TABLE).deleteTable(TABLE).addTable(TABLE);
        d.sets().values().forEach(s -> addSet(b, s));
        d.chains().values().forEach(c -> declare(b, c));
        anonymousSetsFirst(d.chains().values(), c -> bindsAnonymousSet(c)).forEach(c -> writeRules(b, c));
        d.chains().values().forEach(c -> {
            if (c.map() != null && !c.map().targets().isEmpty()) {
                b.addMapElements(TABLE, c.map().name(), mapEntries(c.map().targets()));
            }
        });
        d.bases().forEach((name, base) -> addBase(b, name, base));
        return b;
    }

    /** {@return the transaction that deletes our table} (and with it every chain, set and map of ours) */
    static NftBatch dropTable() {
        return new NftBatch().addTable(TABLE).deleteTable(TABLE);
    }

    /**
     * {@code chains} with those {@code early} picks first, each part in its given order. The
     * kernel (6.18) walks the whole transaction so far each time a rule binds or unbinds an
     * anonymous set ({@code tcp dport { 80, 443 }}, several nets): the cost of a batch grows with
     * (anonymous sets) x (commands before them). Writing the chains that hold them first, while the
     * transaction is short, cut a refill of the 2,000-policy table (1,500 anonymous sets, 67,000
     * rules) from 2.9-6.6 s to 1.4-1.5 s of kernel time, the same commands in another order
     * (bench/RESULTS.md, 2026-12-05). A chain's rules only need the chains they jump to declared,
     * which step 2 does before any chain is filled, so the order of the fills is free.
     */
    static List<NftChain> anonymousSetsFirst(Collection<NftChain> chains, Predicate<NftChain> early) {
        List<NftChain> first = new ArrayList<>();
        List<NftChain> rest = new ArrayList<>();
        for (NftChain c : chains) {
            (early.test(c) ? first : rest).add(c);
        }
        first.addAll(rest);
        return first;
    }

    /** {@return whether a rule of {@code c} (null: none) holds an anonymous set} (a {@code {"set": [...]}} operand) */
    static boolean bindsAnonymousSet(NftChain c) {
        if (c == null) {
            return false;
        }
        for (NftRule r : c.rules()) {
            if (r.text().json().contains(ANONYMOUS_SET)) {
                return true;
            }
        }
        return false;
    }

    /** {@return the transaction that flushes and refills {@code chains}} (the policy-rules-only path) */
    static NftBatch rewrite(Collection<NftChain> chains) {
        NftBatch b = new NftBatch();
        chains.forEach(c -> {
            b.flushChain(TABLE, c.name());
            writeRules(b, c);
        });
        return b;
    }

    /** {@return the change that turns {@code old} (programmed) into {@code d}} */
    static Change change(NftTable d, NftTable old) {
        for (NftSet s : d.sets().values()) {
            NftSet o = old.sets().get(s.name());
            if (o != null && !o.sameShape(s)) {
                return new Resync(s.name());
            }
        }
        NftBatch b = new NftBatch();
        int setsWritten = 0;
        // 1. New sets, and member edits of changed ones.
        for (NftSet s : d.sets().values()) {
            NftSet o = old.sets().get(s.name());
            if (o == null) {
                addSet(b, s);
                setsWritten++;
            } else if (!o.members().equals(s.members())) {
                editSet(b, s, o);
                setsWritten++;
            }
        }
        // 2. New chains and maps declared, then changed chains flushed and refilled.
        List<String> written = new ArrayList<>();
        for (NftChain c : d.chains().values()) {
            NftChain o = old.chains().get(c.name());
            if (o == null) {
                declare(b, c);
            } else if (c.map() != null && (o.map() == null || !o.map().name().equals(c.map().name()))) {
                b.addVerdictMap(TABLE, c.map().name(), SetSpec.of("ifname"));
            }
        }
        // Only the changed chains are ordered (their rules scanned for anonymous sets): not the whole table.
        List<NftChain> changed = new ArrayList<>();
        for (NftChain c : d.chains().values()) {
            NftChain o = old.chains().get(c.name());
            if (o == null || !o.rules().equals(c.rules())) {
                changed.add(c);
            }
        }
        for (NftChain c : anonymousSetsFirst(changed,
                c -> bindsAnonymousSet(c) || bindsAnonymousSet(old.chains().get(c.name())))) {
            if (old.chains().containsKey(c.name())) {
                b.flushChain(TABLE, c.name());
            }
            writeRules(b, c);
            written.add(c.name());
        }
        // 3. Dispatch-map elements (they name chains), then base chains (they jump to ours).
        for (NftChain c : d.chains().values()) {
            if (c.map() != null && editMap(b, c.map(), mapOf(old.chains().get(c.name())))) {
                setsWritten++;
            }
        }
        d.bases().forEach((name, base) -> {
            NftTable.Base o = old.bases().get(name);
            if (o == null) {
                addBase(b, name, base);
                written.add(name);
            } else if (!o.spec().equals(base.spec())) {
                b.flushChain(TABLE, name);
                b.deleteChain(TABLE, name);
                addBase(b, name, base);
                written.add(name);
            } else if (!o.jumps().equals(base.jumps())) {
                b.flushChain(TABLE, name);
                addJumps(b, name, base);
                written.add(name);
            }
        });
        // 4. What went: base chains, chains emptied, their maps, the chains, then sets.
        List<String> goneBases = old.bases().keySet().stream().filter(n -> !d.bases().containsKey(n)).toList();
        goneBases.forEach(n -> b.flushChain(TABLE, n).deleteChain(TABLE, n));
        List<String> goneChains = old.chains().keySet().stream().filter(n -> !d.chains().containsKey(n)).toList();
        goneChains.forEach(n -> b.flushChain(TABLE, n));
        old.chains().forEach((n, c) -> {
            DispatchMap now = mapOf(d.chains().get(n));
            if (c.map() != null && (now == null || !now.name().equals(c.map().name()))) {
                b.deleteMap(TABLE, c.map().name());
            }
        });
        goneChains.forEach(n -> b.deleteChain(TABLE, n));
        List<String> goneSets = old.sets().keySet().stream().filter(n -> !d.sets().containsKey(n)).toList();
        goneSets.forEach(n -> b.deleteSet(TABLE, n));
        return new Edit(b, written, goneChains, goneBases, goneSets, setsWritten);
    }

    /** Member edits turning set {@code o} into {@code s} (same name and shape). */
    private static void editSet(NftBatch b, NftSet s, NftSet o) {
        TreeSet<String> gone = new TreeSet<>(o.members());
        gone.removeAll(s.members());
        TreeSet<String> added = new TreeSet<>(s.members());
        added.removeAll(o.members());
        if (!gone.isEmpty() && s.members().size() <= REFILL_LIMIT) {
            // flush + refill in one transaction: libnftables 1.0.6 needs no element cache for
            // it, while "delete element" fetches every set's elements first (~0.5 s at 40,000)
            b.flushSet(TABLE, s.name());
            addSet(b, s, s.members());
            return;
        }
        if (!gone.isEmpty()) {
            b.deleteElements(TABLE, s.name(), s.elements(gone));
        }
        if (!added.isEmpty()) {
            addSet(b, s, added);
        }
    }

    /** Element edits turning map {@code old} (null: new map) into {@code now}; {@return whether any} */
    private static boolean editMap(NftBatch b, DispatchMap now, DispatchMap old) {
        Map<String, String> before = old == null || !old.name().equals(now.name()) ? Map.of() : old.targets();
        List<JsonNode> gone = new ArrayList<>();
        Map<String, String> added = new TreeMap<>();
        before.forEach((iface, target) -> {
            if (!target.equals(now.targets().get(iface))) {
                gone.add(NftElem.ifname(iface));
            }
        });
        now.targets().forEach((iface, target) -> {
            if (!target.equals(before.get(iface))) {
                added.put(iface, target);
            }
        });
        if (!gone.isEmpty()) {
            b.deleteMapElements(TABLE, now.name(), gone);
        }
        if (!added.isEmpty()) {
            b.addMapElements(TABLE, now.name(), mapEntries(added));
        }
        return !gone.isEmpty() || !added.isEmpty();
    }

    private static DispatchMap mapOf(NftChain c) {
        return c == null ? null : c.map();
    }

    /**
     * {@code d} with the workload endpoint chains that changed since {@code old} kept as they are
     * programmed, for an apply with more updates right behind it (invariant 4b). While policies
     * stream in, each apply would rewrite every endpoint chain (each gains the policies that
     * arrived): with 2,000 policies over 1,000 endpoint chains that is ~45,000 rules, ~70 % of the
     * table, per apply, and the last two applies of a catch-up both did it. Holding them back
     * writes them once, when the stream stops. The kernel stays consistent: a held chain keeps
     * jumping only to chains and naming only sets {@code d} still has (else it is written), so an
     * endpoint sees the policies it had, each as it is now; new policy chains are written and wait.
     */
    static Holding holdingEndpointChains(NftTable d, NftTable old) {
        SortedMap<String, NftChain> chains = null;
        Set<String> held = new HashSet<>();
        for (NftChain c : d.chains().values()) {
            if (!c.name().startsWith(TO_WORKLOAD) && !c.name().startsWith(FROM_WORKLOAD)) {
                continue;
            }
            NftChain o = old.chains().get(c.name());
            if (o == null || o.rules().equals(c.rules()) || !referencesExist(o, d)) {
                continue;
            }
            if (chains == null) {
                chains = new TreeMap<>(d.chains());
            }
            chains.put(o.name(), o);
            held.add(o.name());
        }
        return new Holding(chains == null ? d : new NftTable(chains, d.bases(), d.sets()), held);
    }

    /** {@return whether every chain {@code c} jumps to and every set it names is in {@code d}} */
    private static boolean referencesExist(NftChain c, NftTable d) {
        for (NftRule r : c.rules()) {
            if (!d.sets().keySet().containsAll(r.refers().sets()) || !d.chains().keySet().containsAll(r.refers().chains())) {
                return false;
            }
        }
        return true;
    }
}
