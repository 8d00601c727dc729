package calico.felix.dataplane.nft;

import static calico.felix.dataplane.nft.NftCommands.addBase;
import static calico.felix.dataplane.nft.NftCommands.addSet;
import static calico.felix.dataplane.nft.NftCommands.mapEntries;
import static calico.felix.dataplane.nft.NftCommands.writeRules;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.NftExpr;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.nft.TableRef;
import calico.felix.dataplane.nft.NftRuleFormatter.DispatchMap;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads our table back and compares it with what was programmed (nftables-dataplane.md,
 * "Refresh"): chains with the listing recorded at an earlier read-back or, for chains written
 * since, with the rules we sent ({@link NftListedForm}); missing chains; sets and dispatch maps
 * whose elements are not ours; base chains whose hook, policy or jumps changed; strangers'
 * objects in our table. The comparison ({@link #compare}) is pure and yields a {@link Repair}:
 * one batch that {@link #repair} commits. Listing and comparing may run on {@link NftReader}'s
 * thread ({@link #compareLater}); everything else runs on the dataplane thread.
 */
final class NftVerifier implements AutoCloseable {

    /** The driver's logger: its lines read as before the split (operators filter on it). */
    private static final Logger log = LoggerFactory.getLogger(NftablesDataplane.class);
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final TableRef TABLE = NftNames.TABLE;

    /**
     * Chains read back and found to hold exactly what we wrote: their listing's digest, which the next
     * read-back compares with. A chain written since is absent ("unverified") until a read-back
     * checks it against the rules we sent ({@link NftListedForm}).
     */
    private final Map<String, ListedDigest> listed = new HashMap<>();
    /** Chains the last read-back rewrote without being sure: the next read-back records their listing. */
    private final Set<String> pendingRecord = new HashSet<>();
    /** Lists the table for background read-backs; created at the first one. */
    private NftReader reader;

    /** What a refresh concludes about one of our chains. */
    enum Verdict {
        /** Exactly what we wrote. */
        OURS,
        /** Someone changed it (or it is missing): repair and count. */
        TAMPERED,
        /** Written since the last refresh, and listed in words we cannot match to ours: rewrite, do not count. */
        UNSURE
    }

    /** What one read-back found: the repair batch and what to record; computed without side effects. */
    record Repair(boolean tableGone, NftBatch batch, List<String> repaired, List<String> rewritten,
                  List<String> strangeChains, List<String> strangeSets, List<String> strangeMaps,
                  Map<String, ListedDigest> verified) {

        /** {@return the number of chains, sets and maps repaired or removed} */
        int count() {
            return repaired.size() + strangeChains.size() + strangeSets.size() + strangeMaps.size();
        }
    }

    /** Chains {@code names} were written or removed: their recorded listings no longer hold. */
    void written(Collection<String> names) {
        names.forEach(listed::remove);
        names.forEach(pendingRecord::remove);
    }

    /** The whole table was rewritten or removed: every chain is unverified until the next read-back. */
    void forgetAll() {
        listed.clear();
        pendingRecord.clear();
    }

    /** Lists our table on this thread and compares it with {@code programmed}. */
    Repair compare(Nftables nft, NftTable programmed) {
        return compare(NftListing.read(nft), programmed, listed, pendingRecord);
    }

    /**
     * Lists and compares on the reader thread (created on the first call, in the calling
     * thread's namespace) against {@code programmed} and copies of the recorded listings: the
     * caller must check that no write came in between before {@link #repair}ing; the reader's listings are told to
     * {@code calls}.
     */
    CompletableFuture<Repair> compareLater(NftTable programmed, calico.dataplane.calls.ToolCalls calls) {
        if (reader == null) {
            reader = new NftReader(calls);
        }
        Map<String, ListedDigest> listedNow = new HashMap<>(listed);
        Set<String> pendingNow = new HashSet<>(pendingRecord);
        return reader.submit(readerNft -> compare(NftListing.read(readerNft), programmed, listedNow, pendingNow));
    }

    /**
     * Compares listing {@code k} with {@code prog}: chains with their recorded listing ({@code
     * listedNow}) or, if written since, with the rules we sent; chains a previous read-back
     * rewrote without being sure ({@code pendingNow}) are recorded as listed. Pure: the caller
     * commits.
     */
    static Repair compare(NftListing k, NftTable prog, Map<String, ListedDigest> listedNow, Set<String> pendingNow) {
        if (!k.tableExists) {
            return new Repair(true, null, List.of(), List.of(), List.of(), List.of(), List.of(), Map.of());
        }
        Map<String, ListedDigest> verified = new HashMap<>();
        List<String> repaired = new ArrayList<>();
        List<String> rewritten = new ArrayList<>();
        List<String> strangeChains = k.chains.keySet().stream()
                .filter(n -> !prog.chains().containsKey(n) && !prog.bases().containsKey(n)).toList();
        List<String> strangeSets = k.sets.keySet().stream().filter(n -> !prog.sets().containsKey(n)).toList();
        Set<String> ourMaps = new HashSet<>();
        prog.chains().values().stream().filter(c -> c.map() != null).forEach(c -> ourMaps.add(c.map().name()));
        List<String> strangeMaps = k.maps.keySet().stream().filter(n -> !ourMaps.contains(n)).toList();

        // 1. Empty strangers' chains and ours that differ; declare ours that are missing.
        NftBatch b = new NftBatch();
        strangeChains.forEach(n -> b.flushChain(TABLE, n));
        prog.chains().forEach((name, c) -> {
            ListedChain kc = k.chains.get(name);
            Verdict v = kc == null ? Verdict.TAMPERED : check(name, c.rules(), kc, listedNow, pendingNow, verified);
            if (v == Verdict.OURS) {
                return;
            }
            if (kc == null) {
                b.addChain(TABLE, name);
            } else {
                b.flushChain(TABLE, name);
            }
            if (v == Verdict.TAMPERED) {
                repaired.add(name);
            }
            rewritten.add(name);
        });
        // 2. Sets and maps before the rules that name them.
        prog.sets().forEach((name, s) -> {
            List<JsonNode> elems = k.sets.get(name);
            if (elems == null || !k.setSpecs.get(name).equals(s.spec())) {
                if (elems != null) {
                    b.deleteSet(TABLE, name); // wrong type: only a stranger's rule can name it now
                }
                addSet(b, s);
                repaired.add(name);
                return;
            }
            TreeSet<String> have = new TreeSet<>();
            elems.forEach(e -> have.add(NftSetPlan.canonical(e, s.namedPorts())));
            if (!have.equals(s.members())) {
                b.flushSet(TABLE, name);
                if (!s.members().isEmpty()) {
                    addSet(b, s, s.members());
                }
                repaired.add(name);
            }
        });
        List<DispatchMap> mapsToFill = new ArrayList<>();
        prog.chains().values().stream().filter(c -> c.map() != null).forEach(c -> {
            DispatchMap m = c.map();
            List<JsonNode> elems = k.maps.get(m.name());
            if (elems == null) {
                b.addVerdictMap(TABLE, m.name(), SetSpec.of("ifname"));
            } else if (!pairs(m.targets()).equals(sortedPairs(elems))) {
                b.flushMap(TABLE, m.name());
            } else {
                return;
            }
            mapsToFill.add(m);
            repaired.add(m.name());
        });
        // 3. Our rules, then map elements (they name chains), then base chains (they jump to ours).
        rewritten.forEach(n -> writeRules(b, prog.chains().get(n)));
        mapsToFill.stream().filter(m -> !m.targets().isEmpty())
                .forEach(m -> b.addMapElements(TABLE, m.name(), mapEntries(m.targets())));
        prog.bases().forEach((name, base) -> {
            ListedChain kc = k.chains.get(name);
            if (kc != null && base.spec().equals(k.bases.get(name))
                    && check(name, jumps(base), kc, listedNow, pendingNow, verified) == Verdict.OURS) {
                return;
            }
            if (kc != null) {
                b.flushChain(TABLE, name);
                b.deleteChain(TABLE, name);
            }
            addBase(b, name, base);
            repaired.add(name);
            rewritten.add(name);
        });
        // 4. Strangers' objects, now that nothing of ours names them.
        strangeChains.forEach(n -> b.deleteChain(TABLE, n));
        strangeMaps.forEach(n -> b.deleteMap(TABLE, n));
        strangeSets.forEach(n -> b.deleteSet(TABLE, n));
        return new Repair(false, b, repaired, rewritten, strangeChains, strangeSets, strangeMaps, verified);
    }

    /**
     * Records what {@code p} verified and commits its repairs (the table must exist: a gone table
     * is the caller's resync); {@return what it repaired or removed}.
     */
    int repair(Repair p, NftCommitter committer) {
        return commit(p, committer, false);
    }

    /**
     * Commits {@code p} for a table an earlier felix left: differences are what changed while felix was
     * away, expected, so they are not reported as someone's tampering.
     */
    void adopt(Repair p, NftCommitter committer) {
        commit(p, committer, true);
    }

    private int commit(Repair p, NftCommitter committer, boolean expected) {
        listed.putAll(p.verified());
        pendingRecord.removeAll(p.verified().keySet());
        if (p.batch().isEmpty()) {
            return 0;
        }
        if (!expected && (!p.repaired().isEmpty() || !p.strangeChains().isEmpty() || !p.strangeSets().isEmpty()
                || !p.strangeMaps().isEmpty())) {
            log.warn("nftables refresh: repairing {}; removing strangers' chains {}, sets {}, maps {}", p.repaired(),
                    p.strangeChains(), p.strangeSets(), p.strangeMaps());
        } else {
            log.debug("nftables refresh: rewriting {} chains listed in a form we cannot match to ours", p.rewritten().size());
        }
        committer.repair(p.batch());
        p.strangeChains().forEach(listed::remove);
        // What we just wrote is recorded as listed by the next read-back (no second listing of
        // the whole table here): until then these chains are neither verified nor suspect.
        p.rewritten().forEach(listed::remove);
        pendingRecord.addAll(p.rewritten());
        return p.count();
    }

    /**
     * Compares a chain's kernel rules with the listing recorded for it, or (if it was written since
     * the last refresh) with the rules we sent; a verified chain's listing is recorded.
     */
    static Verdict check(String name, List<NftRule> rules, ListedChain kernel, Map<String, ListedDigest> listedNow,
                         Set<String> pendingNow, Map<String, ListedDigest> verified) {
        ListedDigest recorded = listedNow.get(name);
        if (recorded != null) {
            return kernel.digest().equals(recorded) ? Verdict.OURS : Verdict.TAMPERED;
        }
        if (kernel.size() != rules.size()) {
            return Verdict.TAMPERED;
        }
        if (pendingNow.contains(name) || NftListedForm.listed(kernel.rules()).equals(NftListedForm.sent(rules))) {
            // a chain the last read-back rewrote from our rules holds what we wrote: its listing is the reference
            verified.put(name, kernel.digest());
            return Verdict.OURS;
        }
        log.debug("nftables refresh: chain {} lists differently from what we sent: rewriting it", name);
        return Verdict.UNSURE;
    }

    private static List<NftRule> jumps(NftTable.Base base) {
        return base.jumps().stream().map(j -> new NftRule(List.of(NftExpr.jump(j)), null)).toList();
    }

    private static List<JsonNode> pairs(Map<String, String> targets) {
        List<JsonNode> out = new ArrayList<>();
        mapEntries(targets).forEach((k, v) -> out.add(JSON.arrayNode().add(k).add(v)));
        return out;
    }

    private static List<JsonNode> sortedPairs(List<JsonNode> elems) {
        List<JsonNode> out = new ArrayList<>(elems);
        out.sort(Comparator.comparing(e -> e.get(0).asText()));
        return out;
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.close();
        }
    }
}
