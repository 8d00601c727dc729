package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IpsetFamily;
import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetTransaction;
import calico.dataplane.iptables.IpsetType;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.RestoreTransaction;
import calico.dataplane.iptables.Rule;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetType;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver;
import calico.felix.dataplane.rules.SetPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The iptables dataplane driver (IPv4 filter table). Keeps a {@link DataplaneModel} fed by the
 * calculation graph's batches, renders it with {@link ChainRenderer} and programs the difference
 * from what it last programmed: per batch one {@code ipset restore} creating and filling sets,
 * one {@code iptables-restore --noflush} rewriting only changed chains and deleting gone ones,
 * then one {@code ipset restore} destroying sets no rule uses any more (sets exist before a
 * rule names them and outlive the last rule that did).
 *
 * <p>We own every {@code cali-} chain, every {@code cali40} set and the one {@code -j cali-FORWARD}
 * rule at the top of {@code FORWARD}; nothing else is touched. The first batch, and any batch after
 * a failure, does a {@link #resync()}. {@link #refresh()} repairs our chains if someone changed them.
 *
 * <p>Not thread-safe: one dataplane thread calls it, as in felix.
 */
public final class IptablesDataplane implements PolicyDriver {

    private static final Logger log = LoggerFactory.getLogger(IptablesDataplane.class);
    private static final Rule JUMP = Rule.of("-j", Names.FORWARD);
    private static final String JUMP_SAVED = "-j " + Names.FORWARD;
    private static final int DEFAULT_MAX_SET_SIZE = 1048576;

    /** A set as we program it: type and members in ipset's input syntax. */
    record DesiredSet(IpsetType type, Set<String> members) {
    }

    private final IptablesRestore restore;
    private final Ipset ipset;
    private final DataplaneModel model = new DataplaneModel();
    private Map<String, Chain> programmed = Map.of();
    private Map<String, DesiredSet> programmedSets = Map.of();
    /** Our chains as {@code -save} printed them right after we wrote them: what {@link #refresh()} compares to. */
    private final Map<String, List<String>> savedForm = new HashMap<>();
    private boolean inSyncWithKernel;

    public IptablesDataplane(IptablesRestore restore, Ipset ipset) {
        this.restore = restore;
        this.ipset = ipset;
    }

    /** Applies one batch from the calculation graph; the first (or after a failure) rewrites everything we own. */
    public ApplyStats apply(List<DataplaneUpdate> batch) {
        try {
            batch.forEach(model::apply);
            return inSyncWithKernel ? applyDelta() : resync();
        } catch (RuntimeException e) {
            inSyncWithKernel = false;
            throw e;
        }
    }

    @Override
    public String name() {
        return "iptables-" + restore.backend().name().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public Programmed programmed() {
        int rules = programmed.values().stream().mapToInt(c -> c.rules().size()).sum();
        int members = programmedSets.values().stream().mapToInt(s -> s.members().size()).sum();
        return new Programmed(programmed.size(), rules, programmedSets.size(), members);
    }

    /**
     * Removes the {@code FORWARD} jump, every {@code cali-} chain and every set of ours, in that
     * order (a set in use cannot be destroyed); afterwards this driver must not be used again.
     */
    @Override
    public void removeAll() {
        SavedTable saved = restore.save(IpVersion.V4, Table.FILTER);
        RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER);
        List<String> forward = saved.rules("FORWARD");
        for (int i = forward.size() - 1; i >= 0; i--) {
            if (forward.get(i).endsWith(JUMP_SAVED)) {
                tx.deleteRule("FORWARD", i + 1);
            }
        }
        List<String> ours = saved.chains().stream().filter(c -> c.startsWith(Names.CHAIN_PREFIX)).toList();
        ours.forEach(tx::flushChain);
        ours.forEach(tx::deleteChain);
        restore.apply(IpVersion.V4, tx);
        IpsetTransaction sets = IpsetTransaction.create();
        ipset.list().keySet().stream().filter(n -> n.startsWith(Names.IPSET_V4_PREFIX)).forEach(sets::destroy);
        if (!sets.isEmpty()) {
            ipset.restore(sets);
        }
        programmed = Map.of();
        programmedSets = Map.of();
        savedForm.clear();
        inSyncWithKernel = false;
    }

    /** {@return the chains the model renders to now} (for diagnostics and tests) */
    public Map<String, Chain> desiredChains() {
        return ChainRenderer.render(model).chains();
    }

    private ApplyStats applyDelta() {
        ChainRenderer.Rendered r = ChainRenderer.render(model);
        Map<String, DesiredSet> sets = desiredSets(r);

        IpsetTransaction before = IpsetTransaction.create();
        int setsWritten = 0;
        for (Map.Entry<String, DesiredSet> e : sets.entrySet()) {
            DesiredSet old = programmedSets.get(e.getKey());
            DesiredSet now = e.getValue();
            if (old == null || old.type() != now.type()) {
                before.replace(e.getKey(), now.type(), IpsetFamily.INET, maxSize(), now.members());
                setsWritten++;
            } else if (!old.members().equals(now.members())) {
                old.members().stream().filter(m -> !now.members().contains(m)).forEach(m -> before.del(e.getKey(), m));
                now.members().stream().filter(m -> !old.members().contains(m)).forEach(m -> before.add(e.getKey(), m));
                setsWritten++;
            }
        }
        RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER);
        List<String> written = new ArrayList<>();
        r.chains().forEach((name, chain) -> {
            if (!chain.equals(programmed.get(name))) {
                write(tx, chain);
                written.add(name);
            }
        });
        List<String> deleted = programmed.keySet().stream().filter(n -> !r.chains().containsKey(n)).toList();
        deleted.forEach(tx::deleteChain);
        IpsetTransaction after = IpsetTransaction.create();
        List<String> gone = programmedSets.keySet().stream().filter(n -> !sets.containsKey(n)).toList();
        gone.forEach(after::destroy);

        if (!before.isEmpty()) {
            ipset.restore(before);
        }
        if (!written.isEmpty() || !deleted.isEmpty()) {
            restore.apply(IpVersion.V4, tx);
        }
        if (!after.isEmpty()) {
            ipset.restore(after);
        }
        programmed = r.chains();
        programmedSets = sets;
        deleted.forEach(savedForm::remove);
        if (!written.isEmpty()) {
            recordSaved(written);
        }
        return new ApplyStats(false, written.size(), deleted.size(), setsWritten, gone.size());
    }

    /**
     * Rewrites everything we own from the model: every set replaced (atomically, by swap),
     * every chain rewritten, stale {@code cali-} chains and {@code cali40} sets removed, and the
     * {@code FORWARD} jump made the single first rule.
     */
    public ApplyStats resync() {
        ChainRenderer.Rendered r = ChainRenderer.render(model);
        Map<String, DesiredSet> sets = desiredSets(r);
        SavedTable saved = restore.save(IpVersion.V4, Table.FILTER);
        Map<String, IpsetInfo> kernelSets = ipset.list();

        IpsetTransaction before = IpsetTransaction.create();
        sets.forEach((name, s) -> before.replace(name, s.type(), IpsetFamily.INET, maxSize(), s.members()));
        RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER);
        r.chains().values().forEach(c -> write(tx, c));
        List<String> stale = saved.chains().stream()
                .filter(c -> c.startsWith(Names.CHAIN_PREFIX) && !r.chains().containsKey(c)).toList();
        stale.forEach(tx::deleteChain);
        fixJump(tx, saved);
        IpsetTransaction after = IpsetTransaction.create();
        List<String> staleSets = kernelSets.keySet().stream()
                .filter(n -> (n.startsWith(Names.IPSET_V4_PREFIX) || n.startsWith("cali4t")) && !sets.containsKey(n))
                .toList();
        staleSets.forEach(after::destroy);

        if (!before.isEmpty()) {
            ipset.restore(before);
        }
        restore.apply(IpVersion.V4, tx);
        if (!after.isEmpty()) {
            ipset.restore(after);
        }
        programmed = r.chains();
        programmedSets = sets;
        savedForm.clear();
        recordSaved(r.chains().keySet());
        inSyncWithKernel = true;
        log.info("iptables resync: {} chains, {} sets; removed {} stale chains, {} stale sets",
                r.chains().size(), sets.size(), stale.size(), staleSets.size());
        return new ApplyStats(true, r.chains().size(), stale.size(), sets.size(), staleSets.size());
    }

    /**
     * Reads the filter table back and rewrites any of our chains whose rules differ from what
     * {@code -save} showed right after we programmed them (or that are missing), and restores the
     * {@code FORWARD} jump; and refills any of our IP sets whose kernel members differ from ours.
     *
     * @return the number of chains and sets repaired, counting the {@code FORWARD} jump as one
     */
    public int refresh() {
        if (!inSyncWithKernel) {
            resync();
            return programmed.size();
        }
        SavedTable saved = restore.save(IpVersion.V4, Table.FILTER);
        RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER);
        List<String> repaired = new ArrayList<>();
        programmed.forEach((name, chain) -> {
            if (!saved.policies().containsKey(name) || !saved.rules(name).equals(savedForm.get(name))) {
                write(tx, chain);
                repaired.add(name);
            }
        });
        boolean jumpFixed = fixJump(tx, saved);
        Map<String, IpsetInfo> kernelSets = ipset.list();
        IpsetTransaction sets = IpsetTransaction.create();
        List<String> refilled = new ArrayList<>();
        programmedSets.forEach((name, s) -> {
            IpsetInfo k = kernelSets.get(name);
            if (k == null || k.type() != s.type() || !k.members().equals(normalised(s))) {
                sets.replace(name, s.type(), IpsetFamily.INET, maxSize(), s.members());
                refilled.add(name);
            }
        });
        if (repaired.isEmpty() && !jumpFixed && refilled.isEmpty()) {
            return 0;
        }
        log.warn("iptables refresh: repairing chains {}, sets {}, FORWARD jump {}", repaired, refilled, jumpFixed);
        try {
            if (!sets.isEmpty()) {
                ipset.restore(sets);
            }
            if (!repaired.isEmpty() || jumpFixed) {
                restore.apply(IpVersion.V4, tx);
            }
        } catch (RuntimeException e) {
            inSyncWithKernel = false;
            throw e;
        }
        recordSaved(repaired);
        return repaired.size() + refilled.size() + (jumpFixed ? 1 : 0);
    }

    /** Makes {@code -j cali-FORWARD} the one and first rule of FORWARD; {@return whether it had to change} */
    private static boolean fixJump(RestoreTransaction tx, SavedTable saved) {
        List<String> forward = saved.rules("FORWARD");
        List<Integer> ours = new ArrayList<>();
        for (int i = 0; i < forward.size(); i++) {
            if (forward.get(i).endsWith(JUMP_SAVED)) {
                ours.add(i + 1);
            }
        }
        if (ours.equals(List.of(1))) {
            return false;
        }
        for (int i = ours.size() - 1; i >= 0; i--) {
            tx.deleteRule("FORWARD", ours.get(i));
        }
        tx.insertRule("FORWARD", 1, JUMP);
        return true;
    }

    private static void write(RestoreTransaction tx, Chain chain) {
        tx.declareChain(chain.name());
        chain.rules().forEach(rule -> tx.appendRule(chain.name(), rule));
    }

    private void recordSaved(Iterable<String> chains) {
        SavedTable saved = restore.save(IpVersion.V4, Table.FILTER);
        chains.forEach(c -> savedForm.put(c, saved.rules(c)));
    }

    /** The sets the rules need ({@link SetPlan}, IPv4) and the net sets the formatter made, in ipset syntax. */
    private Map<String, DesiredSet> desiredSets(ChainRenderer.Rendered r) {
        Map<String, DesiredSet> out = new TreeMap<>();
        SetPlan.of(model, r.ruleset()).forEach((name, s) -> {
            Set<String> members = new TreeSet<>();
            s.members().forEach(m -> members.add(m.toString()));
            out.put(name, new DesiredSet(kernelType(s.type()), members));
        });
        r.netSets().forEach((name, members) -> out.put(name, new DesiredSet(IpsetType.HASH_NET, members)));
        return out;
    }

    /** Our members as {@code ipset save} prints them: a hash:net host entry loses its {@code /32}. */
    private static Set<String> normalised(DesiredSet s) {
        Set<String> out = new TreeSet<>();
        s.members().forEach(m -> out.add(m.endsWith("/32") ? m.substring(0, m.length() - 3) : m));
        return out;
    }

    private static IpsetType kernelType(IpSetType t) {
        return t == IpSetType.IP_AND_PORT ? IpsetType.HASH_IP_PORT : IpsetType.HASH_NET;
    }

    private int maxSize() {
        return DEFAULT_MAX_SET_SIZE;
    }
}
