package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetTransaction;
import calico.dataplane.iptables.RestoreTransaction;
import calico.dataplane.iptables.Rule;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.felix.dataplane.iptables.IptablesSetPlan.DesiredSet;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import calico.felix.dataplane.rules.Ruleset;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Desired chains and sets against what is programmed (or, for a resync, what {@code -save}
 * lists) -> the change to make (iptables-dataplane.md invariants 3 and 5): one {@code ipset
 * restore} creating and filling sets, per family the restore transactions of the tables that
 * changed, then one {@code ipset restore} destroying sets no rule names any more. Pure: nothing
 * here runs a tool or keeps state.
 */
final class IptablesChangePlanner {

    static final List<Table> TABLES = List.of(Table.RAW, Table.MANGLE, Table.FILTER, Table.NAT);

    private IptablesChangePlanner() {
    }

    /**
     * One apply's writes, in the order they go.
     *
     * @param before    sets created, replaced or edited (before any rule names them)
     * @param restores  per family, one transaction per table that changed
     * @param after     sets destroyed (after the last rule naming them went)
     * @param rewritten per family and table, the chains written or deleted: their saved forms no longer hold
     */
    record Change(IpsetTransaction before, Map<IpFamily, List<RestoreTransaction>> restores, IpsetTransaction after,
                  Map<IpFamily, Map<Table, List<String>>> rewritten, ApplyStats stats) {
    }

    /**
     * {@return the incremental change from {@code programmed} (chains per family and table) and
     * {@code programmedSets} to {@code rendered} and {@code sets}}; families are the same in both
     */
    static Change delta(Map<IpFamily, ChainRenderer.Rendered> rendered,
                        Map<IpFamily, Map<Table, Map<String, Chain>>> programmed, Map<String, DesiredSet> sets,
                        Map<String, DesiredSet> programmedSets, int maxSize) {
        IpsetTransaction before = IpsetTransaction.create();
        int setsWritten = 0;
        for (Map.Entry<String, DesiredSet> e : sets.entrySet()) {
            DesiredSet old = programmedSets.get(e.getKey());
            DesiredSet now = e.getValue();
            if (old == null || old.type() != now.type() || old.family() != now.family()) {
                before.replace(e.getKey(), now.type(), now.family(), maxSize, now.members());
                setsWritten++;
            } else if (old.members() != now.members() && !old.members().equals(now.members())) {
                old.members().stream().filter(m -> !now.members().contains(m)).forEach(m -> before.del(e.getKey(), m));
                now.members().stream().filter(m -> !old.members().contains(m)).forEach(m -> before.add(e.getKey(), m));
                setsWritten++;
            }
        }
        Map<IpFamily, List<RestoreTransaction>> txs = new EnumMap<>(IpFamily.class);
        Map<IpFamily, Map<Table, List<String>>> rewritten = new EnumMap<>(IpFamily.class);
        int chainsWritten = 0;
        int chainsDeleted = 0;
        for (ChainRenderer.Rendered r : rendered.values()) {
            Map<Table, Map<String, Chain>> programmedTables = programmed.getOrDefault(r.family(), Map.of());
            for (Table table : TABLES) {
                Map<String, Chain> now = r.chains(table);
                Map<String, Chain> old = programmedTables.getOrDefault(table, Map.of());
                RestoreTransaction tx = RestoreTransaction.forTable(table);
                List<String> wt = new ArrayList<>();
                now.forEach((name, chain) -> {
                    Chain last = old.get(name);
                    if (chain != last && !chain.equals(last)) {
                        write(tx, chain);
                        wt.add(name);
                    }
                });
                List<String> deleted = old.keySet().stream().filter(n -> !now.containsKey(n)).toList();
                deleted.forEach(tx::deleteChain);
                if (!wt.isEmpty() || !deleted.isEmpty()) {
                    txs.computeIfAbsent(r.family(), k -> new ArrayList<>()).add(tx);
                    List<String> touched = new ArrayList<>(wt);
                    touched.addAll(deleted);
                    rewritten.computeIfAbsent(r.family(), k -> new EnumMap<>(Table.class)).put(table, touched);
                }
                chainsWritten += wt.size();
                chainsDeleted += deleted.size();
            }
        }
        IpsetTransaction after = IpsetTransaction.create();
        List<String> gone = programmedSets.keySet().stream().filter(n -> !sets.containsKey(n)).toList();
        gone.forEach(after::destroy);
        return new Change(before, txs, after, rewritten,
                new ApplyStats(false, chainsWritten, chainsDeleted, setsWritten, gone.size()));
    }

    /**
     * {@return the change that rewrites everything we own}: every set replaced (by swap), every
     * chain of every rendered family rewritten, stale {@code cali-} chains ({@code saved}: what
     * {@code -save} lists per family and table) and owned sets ({@code kernelSets}: every kernel
     * set) removed, each built-in chain given exactly the jumps {@code append} places. With {@code
     * adopt} (a driver's first apply: felix restarted) what is already right is kept: a chain
     * whose rules carry exactly our hashes ({@link RuleHashes}) and a set of the right type with
     * the right members are not written, and a table with nothing to change gets no restore, so
     * a restart with nothing changed makes no kernel change and keeps every counter.
     */
    static Change resync(Map<IpFamily, ChainRenderer.Rendered> rendered, Map<IpFamily, Map<Table, SavedTable>> saved,
                         Map<String, IpsetInfo> kernelSets, Map<String, DesiredSet> sets, boolean append, int maxSize,
                         boolean adopt) {
        IpsetTransaction before = IpsetTransaction.create();
        int setsWritten = 0;
        for (Map.Entry<String, DesiredSet> e : sets.entrySet()) {
            DesiredSet s = e.getValue();
            if (!adopt || !IptablesSetPlan.holds(kernelSets.get(e.getKey()), s)) {
                before.replace(e.getKey(), s.type(), s.family(), maxSize, s.members());
                setsWritten++;
            }
        }
        Map<IpFamily, List<RestoreTransaction>> txs = new EnumMap<>(IpFamily.class);
        int chains = 0;
        int stale = 0;
        for (ChainRenderer.Rendered r : rendered.values()) {
            List<RestoreTransaction> familyTx = new ArrayList<>();
            for (Table table : TABLES) {
                SavedTable kernel = saved.get(r.family()).get(table);
                Map<String, Chain> now = r.chains(table);
                RestoreTransaction tx = RestoreTransaction.forTable(table);
                int written = 0;
                for (Chain c : now.values()) {
                    if (!adopt || !kernel.policies().containsKey(c.name()) || !RuleHashes.matches(kernel.rules(c.name()), c)) {
                        write(tx, c);
                        written++;
                    }
                }
                List<String> staleChains = kernel.chains().stream()
                        .filter(c -> c.startsWith(Names.CHAIN_PREFIX) && !now.containsKey(c)).toList();
                int hooks = fixHooks(tx, kernel, table, r.ruleset().entries(), append, true);
                staleChains.forEach(tx::deleteChain);
                if (!adopt || written + hooks + staleChains.size() > 0) {
                    familyTx.add(tx);
                }
                chains += written;
                stale += staleChains.size();
            }
            if (!familyTx.isEmpty()) {
                txs.put(r.family(), familyTx);
            }
        }
        IpsetTransaction after = IpsetTransaction.create();
        List<String> staleSets = kernelSets.keySet().stream()
                .filter(n -> IptablesSetPlan.ownedSet(n, rendered.keySet()) && !sets.containsKey(n)).toList();
        staleSets.forEach(after::destroy);
        return new Change(before, txs, after, Map.of(), new ApplyStats(true, chains, stale, setsWritten, staleSets.size()));
    }

    /** {@return the transaction that removes every jump of ours and every {@code cali-} chain from {@code saved}} */
    static RestoreTransaction removal(Table table, SavedTable saved) {
        RestoreTransaction tx = RestoreTransaction.forTable(table);
        saved.policies().forEach((chain, policy) -> {
            if (!policy.equals("-")) {
                List<String> rules = saved.rules(chain);
                for (int i = rules.size() - 1; i >= 0; i--) {
                    if (isOurJump(rules.get(i))) {
                        tx.deleteRule(chain, i + 1);
                    }
                }
            }
        });
        List<String> ours = saved.chains().stream().filter(c -> c.startsWith(Names.CHAIN_PREFIX)).toList();
        ours.forEach(tx::flushChain);
        ours.forEach(tx::deleteChain);
        return tx;
    }

    /**
     * Gives each kernel chain of {@code table} that the ruleset hooks exactly one {@code -j <ours>},
     * first (insert mode) or last (append mode), and removes our jumps from kernel chains it no
     * longer hooks. A jump is ours when the whole rule is {@code -j cali-…}.
     *
     * @param all whether to consider every built-in chain (resync) or only hooked ones (refresh)
     * @return the number of kernel chains changed
     */
    static int fixHooks(RestoreTransaction tx, SavedTable saved, Table table, List<Ruleset.Entry> entries,
                        boolean append, boolean all) {
        Map<String, String> wanted = new LinkedHashMap<>();
        entries.stream().filter(e -> ChainRenderer.kernelTable(e.table()) == table)
                .forEach(e -> wanted.put(e.hook().name(), e.chain()));
        Set<String> kernelChains = new TreeSet<>(wanted.keySet());
        if (all) {
            saved.policies().forEach((c, p) -> {
                if (!p.equals("-")) {
                    kernelChains.add(c);
                }
            });
        }
        int changed = 0;
        for (String kc : kernelChains) {
            List<String> rules = saved.rules(kc);
            List<Integer> ours = new ArrayList<>();
            for (int i = 0; i < rules.size(); i++) {
                if (isOurJump(rules.get(i))) {
                    ours.add(i + 1);
                }
            }
            String target = wanted.get(kc);
            boolean ok;
            if (target == null) {
                ok = ours.isEmpty();
            } else {
                int place = append ? rules.size() : 1;
                ok = ours.equals(List.of(place)) && rules.get(place - 1).equals("-j " + target);
            }
            if (ok) {
                continue;
            }
            for (int i = ours.size() - 1; i >= 0; i--) {
                tx.deleteRule(kc, ours.get(i));
            }
            if (target != null) {
                if (append) {
                    tx.appendRule(kc, Rule.of("-j", target));
                } else {
                    tx.insertRule(kc, 1, Rule.of("-j", target));
                }
            }
            changed++;
        }
        return changed;
    }

    private static boolean isOurJump(String savedRule) {
        return savedRule.startsWith("-j " + Names.CHAIN_PREFIX) && savedRule.indexOf(' ', 3) < 0;
    }

    /** Declares (or flushes) {@code chain} and appends its rules, each tagged with its hash ({@link RuleHashes}). */
    static void write(RestoreTransaction tx, Chain chain) {
        tx.declareChain(chain.name());
        RuleHashes.tagged(chain).forEach(rule -> tx.appendRule(chain.name(), rule));
    }
}
