package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetTransaction;
import calico.dataplane.iptables.RestoreTransaction;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.felix.dataplane.iptables.IptablesSetPlan.DesiredSet;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Ruleset;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads every family's tables and our sets back and compares them with what was programmed
 * (iptables-dataplane.md invariant 6): a chain with its <em>saved form</em> (what {@code -save}
 * printed for it at an earlier read-back) or, written since, with our rendering by the rules'
 * hashes ({@link RuleHashes}); hook jumps; set members as {@code ipset save} prints them. It
 * keeps the saved forms; the repairs it plans are committed by the caller. Used by the
 * dataplane thread only.
 */
final class IptablesVerifier {

    /** What one family programmed: its chains per table and the hooks they hang from. */
    record ProgrammedFamily(Map<Table, Map<String, Chain>> chains, List<Ruleset.Entry> entries) {
    }

    /**
     * What a read-back found.
     *
     * @param restores per family, the repair transactions of the tables that need one
     * @param sets     sets refilled
     * @param report   per family and table, what is repaired (for the log)
     * @param count    chains and sets repaired, counting each hooked kernel chain fixed as one
     */
    record Repair(Map<IpFamily, List<RestoreTransaction>> restores, IpsetTransaction sets, List<String> report,
                  List<String> refilled, int count) {

        boolean isEmpty() {
            return restores.isEmpty() && refilled.isEmpty();
        }
    }

    /**
     * Per family and table, our chains as {@code -save} printed them when a read-back first read
     * them after our write (and found our hashes in them): what later read-backs compare with. A chain
     * written since the last read-back has no entry.
     */
    private final Map<IpFamily, Map<Table, Map<String, List<String>>>> savedForm = new EnumMap<>(IpFamily.class);

    /** Chains {@code rewritten} (per family and table) were written or deleted: their saved forms no longer hold. */
    void forget(Map<IpFamily, Map<Table, List<String>>> rewritten) {
        rewritten.forEach((f, tables) -> tables.forEach((table, names) -> {
            Map<String, List<String>> form = savedForm.getOrDefault(f, Map.of()).get(table);
            if (form != null) {
                names.forEach(form::remove);
            }
        }));
    }

    /** Everything was rewritten or removed: no saved form holds. */
    void forgetAll() {
        savedForm.clear();
    }

    /**
     * Reads back every programmed family's tables (through {@code committer}) and our sets, and
     * plans the repairs; records the saved form of every chain written since the last read-back
     * whose rules carry our hashes (the adoption window of invariant 6).
     */
    Repair check(IptablesCommitter committer, Map<IpFamily, ProgrammedFamily> programmed, boolean append,
                 Map<String, DesiredSet> programmedSets, int maxSize) {
        int repairs = 0;
        Map<IpFamily, List<RestoreTransaction>> txs = new EnumMap<>(IpFamily.class);
        List<String> report = new ArrayList<>();
        for (Map.Entry<IpFamily, ProgrammedFamily> fe : programmed.entrySet()) {
            IpFamily f = fe.getKey();
            ProgrammedFamily st = fe.getValue();
            Map<Table, Map<String, List<String>>> forms = savedForm.computeIfAbsent(f, k -> new EnumMap<>(Table.class));
            for (Table table : IptablesChangePlanner.TABLES) {
                SavedTable saved = committer.save(f, table);
                RestoreTransaction tx = RestoreTransaction.forTable(table);
                Map<String, List<String>> form = forms.getOrDefault(table, Map.of());
                List<String> rt = new ArrayList<>();
                Map<String, List<String>> adopted = new HashMap<>();
                st.chains().getOrDefault(table, Map.of()).forEach((name, chain) -> {
                    List<String> kernel = saved.policies().containsKey(name) ? saved.rules(name) : null;
                    List<String> known = form.get(name);
                    boolean ok = kernel != null && (known != null ? kernel.equals(known) : RuleHashes.matches(kernel, chain));
                    if (!ok) {
                        IptablesChangePlanner.write(tx, chain);
                        rt.add(name);
                    } else if (known == null) {
                        adopted.put(name, kernel);
                    }
                });
                Map<String, List<String>> tableForms = forms.computeIfAbsent(table, t -> new HashMap<>());
                tableForms.putAll(adopted);
                rt.forEach(tableForms::remove); // repaired chains are read back by the next refresh
                int hooks = IptablesChangePlanner.fixHooks(tx, saved, table, st.entries(), append, false);
                if (!rt.isEmpty() || hooks > 0) {
                    txs.computeIfAbsent(f, k -> new ArrayList<>()).add(tx);
                    report.add(f + "/" + table.kernelName() + ": chains " + rt + ", hooks " + hooks);
                }
                repairs += rt.size() + hooks;
            }
        }
        Map<String, IpsetInfo> kernelSets = committer.listSets();
        IpsetTransaction sets = IpsetTransaction.create();
        List<String> refilled = new ArrayList<>();
        programmedSets.forEach((name, s) -> {
            if (!IptablesSetPlan.holds(kernelSets.get(name), s)) {
                sets.replace(name, s.type(), s.family(), maxSize, s.members());
                refilled.add(name);
            }
        });
        return new Repair(txs, sets, report, refilled, repairs + refilled.size());
    }
}
