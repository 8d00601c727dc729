package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.NftExpr;
import calico.felix.dataplane.nft.NftChangePlanner.Edit;
import calico.felix.dataplane.nft.NftChangePlanner.Resync;
import calico.felix.dataplane.nft.NftRuleFormatter.DispatchMap;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import calico.felix.dataplane.rules.Ruleset;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The planner alone, without a kernel: a desired {@link NftTable} against a programmed one gives
 * exactly the commands that turn one into the other, in the order invariant 4 of
 * nftables-dataplane.md requires (a reference exists when made, and is gone before its target).
 */
class NftChangePlannerTest {

    private static final String FORWARD = "filter-FORWARD";
    private static final NftTable.Base FORWARD_BASE = new NftTable.Base(
            NftDesiredState.baseSpec(Ruleset.Table.FILTER, Ruleset.Hook.FORWARD), List.of("cali-FORWARD"));

    @Test
    void nothingChangedIsAnEmptyEdit() {
        NftTable t = table(List.of(chain("cali-FORWARD", jump("cali-pi-a")), chain("cali-pi-a", accept())),
                List.of(set("cali40a", "10.0.0.1/32")));
        Edit e = edit(t, t);
        assertThat(e.batch().isEmpty()).isTrue();
        assertThat(e.stats()).isEqualTo(new ApplyStats(false, 0, 0, 0, 0));
        assertThat(e.touched()).isEmpty();
    }

    @Test
    void aChangedChainIsFlushedAndRefilledAndNothingElseIsWritten() {
        NftTable old = table(List.of(chain("cali-FORWARD", jump("cali-pi-a")), chain("cali-pi-a", accept())), List.of());
        NftTable now = table(List.of(chain("cali-FORWARD", jump("cali-pi-a")), chain("cali-pi-a", drop(), accept())),
                List.of());
        Edit e = edit(now, old);
        assertThat(ops(e.batch())).containsExactly("flush chain cali-pi-a", "add rule cali-pi-a", "add rule cali-pi-a");
        assertThat(e.written()).containsExactly("cali-pi-a");
        assertThat(e.stats()).isEqualTo(new ApplyStats(false, 1, 0, 0, 0));
    }

    @Test
    void aNewSetComesBeforeTheNewChainThatNamesItAndTheChainIsDeclaredBeforeAnyRuleJumpsToIt() {
        NftTable old = table(List.of(chain("cali-FORWARD")), List.of());
        NftTable now = table(List.of(chain("cali-FORWARD", jump("cali-pi-a")), chain("cali-pi-a", fromSet("cali40a"))),
                List.of(set("cali40a", "10.0.0.1/32")));
        Edit e = edit(now, old);
        assertThat(ops(e.batch())).containsExactly("add set cali40a", "add chain cali-pi-a",
                "flush chain cali-FORWARD", "add rule cali-FORWARD", "add rule cali-pi-a");
        assertThat(e.stats()).isEqualTo(new ApplyStats(false, 2, 0, 1, 0));
    }

    @Test
    void setMembersAreEditedNotRecreated() {
        NftTable old = table(List.of(), List.of(set("cali40a", "10.0.0.1/32", "10.0.0.2/32"), set("cali40b", "10.1.0.1/32")));
        NftTable now = table(List.of(), List.of(set("cali40a", "10.0.0.1/32"),
                set("cali40b", "10.1.0.1/32", "10.1.0.2/32")));
        Edit e = edit(now, old);
        // losing a member: flush and refill (no element cache in libnftables); gaining one: add set with only it
        assertThat(ops(e.batch())).containsExactly("flush set cali40a", "add set cali40a", "add set cali40b");
        List<ObjectNode> cmds = e.batch().commands();
        assertThat(elems(cmds.get(1))).containsExactly("10.0.0.1");
        assertThat(elems(cmds.get(2))).containsExactly("10.1.0.2");
        assertThat(e.stats()).isEqualTo(new ApplyStats(false, 0, 0, 2, 0));
    }

    @Test
    void aLargeSetLosingAMemberHasItsElementDeleted() {
        String[] many = IntStream.range(0, NftChangePlanner.REFILL_LIMIT + 2)
                .mapToObj(i -> "10." + (i >> 16) + "." + ((i >> 8) & 255) + "." + (i & 255) + "/32").toArray(String[]::new);
        NftTable old = table(List.of(), List.of(set("cali40a", many)));
        NftTable now = table(List.of(), List.of(set("cali40a", Arrays.copyOf(many, many.length - 1))));
        assertThat(ops(edit(now, old).batch())).containsExactly("delete element cali40a");
    }

    @Test
    void aSetThatChangesShapeNeedsAResync() {
        NftTable old = table(List.of(), List.of(set("cali40a", "10.0.0.1/32")));
        NftTable now = table(List.of(), List.of(new NftSet("cali40a", IpFamily.V4, true, new TreeSet<>())));
        assertThat(NftChangePlanner.change(now, old)).isEqualTo(new Resync("cali40a"));
    }

    @Test
    void whatGoesGoesAfterNothingOfOursNamesItAnyMore() {
        NftTable old = oneEndpoint();
        NftTable now = table(List.of(chain("cali-FORWARD")), List.of());
        Edit e = edit(now, old);
        assertThat(ops(e.batch())).containsExactly(
                "flush chain cali-FORWARD",
                "flush chain filter-FORWARD", "delete chain filter-FORWARD",
                "flush chain cali-to-wl-dispatch", "flush chain cali-tw-cali1",
                "delete map cali-to-wl-dispatch-map",
                "delete chain cali-to-wl-dispatch", "delete chain cali-tw-cali1",
                "delete set cali40a");
        assertThat(e.goneBases()).containsExactly(FORWARD);
        assertThat(e.touched()).containsExactlyInAnyOrder("cali-FORWARD", FORWARD, "cali-to-wl-dispatch",
                "cali-tw-cali1");
        assertThat(e.stats()).isEqualTo(new ApplyStats(false, 1, 3, 0, 1));
    }

    @Test
    void endpointChurnEditsTheDispatchMapAndNotTheDispatchChain() {
        NftTable old = table(List.of(dispatch("cali-to-wl-dispatch", Map.of("cali1", "cali-tw-cali1")),
                chain("cali-tw-cali1", accept())), List.of());
        NftTable now = table(List.of(dispatch("cali-to-wl-dispatch", Map.of("cali2", "cali-tw-cali2")),
                chain("cali-tw-cali2", accept())), List.of());
        Edit e = edit(now, old);
        assertThat(ops(e.batch())).containsExactly("add chain cali-tw-cali2", "add rule cali-tw-cali2",
                "delete element cali-to-wl-dispatch-map", "add element cali-to-wl-dispatch-map",
                "flush chain cali-tw-cali1", "delete chain cali-tw-cali1");
        assertThat(e.written()).containsExactly("cali-tw-cali2");
        assertThat(e.stats()).isEqualTo(new ApplyStats(false, 1, 1, 1, 0));
    }

    @Test
    void aBaseChainIsRejumpedOrRecreatedWhenItsHookChanges() {
        List<NftChain> chains = List.of(chain("cali-FORWARD"), chain("cali-OTHER"));
        NftTable old = table(chains, List.of(), Map.of(FORWARD, FORWARD_BASE));
        NftTable rejumped = table(chains, List.of(), Map.of(FORWARD,
                new NftTable.Base(FORWARD_BASE.spec(), List.of("cali-FORWARD", "cali-OTHER"))));
        assertThat(ops(edit(rejumped, old).batch())).containsExactly("flush chain filter-FORWARD",
                "add rule filter-FORWARD", "add rule filter-FORWARD");
        NftTable rehooked = table(chains, List.of(), Map.of(FORWARD, new NftTable.Base(
                NftDesiredState.baseSpec(Ruleset.Table.RAW, Ruleset.Hook.FORWARD), FORWARD_BASE.jumps())));
        assertThat(ops(edit(rehooked, old).batch())).containsExactly("flush chain filter-FORWARD",
                "delete chain filter-FORWARD", "add chain filter-FORWARD", "add rule filter-FORWARD");
    }

    @Test
    void theFullBatchReplacesTheTableInOneTransactionInReferenceOrder() {
        NftTable t = oneEndpoint();
        assertThat(ops(NftChangePlanner.fullBatch(t))).containsExactly("add table calico", "delete table calico",
                "add table calico", "add set cali40a",
                "add chain cali-FORWARD", "add chain cali-to-wl-dispatch", "add map cali-to-wl-dispatch-map",
                "add chain cali-tw-cali1",
                "add rule cali-FORWARD", "add rule cali-to-wl-dispatch", "add rule cali-to-wl-dispatch",
                "add rule cali-tw-cali1",
                "add element cali-to-wl-dispatch-map",
                "add chain filter-FORWARD", "add rule filter-FORWARD");
    }

    @Test
    void chainsHoldingAnonymousSetsAreFilledFirstSoTheKernelWalksAShortTransactionForEach() {
        NftRule ports = NftRuleFormatter.rule(Ruleset.Table.FILTER, calico.felix.dataplane.rules.GenericRule.of(
                calico.felix.dataplane.rules.Target.ACCEPT, new calico.felix.dataplane.rules.Match.Ports(
                        calico.felix.dataplane.rules.Match.Dir.DST, List.of("80", "443"), false)));
        NftRule onePort = NftRuleFormatter.rule(Ruleset.Table.FILTER, calico.felix.dataplane.rules.GenericRule.of(
                calico.felix.dataplane.rules.Target.ACCEPT, new calico.felix.dataplane.rules.Match.Ports(
                        calico.felix.dataplane.rules.Match.Dir.DST, List.of("80"), false)));
        assertThat(NftChangePlanner.bindsAnonymousSet(chain("x", onePort, ports))).isTrue();
        assertThat(NftChangePlanner.bindsAnonymousSet(chain("x", onePort, fromSet("cali40a")))).isFalse();

        // new chains: declared in name order, filled with the anonymous-set holder first
        NftTable t = table(List.of(chain("cali-FORWARD", jump("cali-pi-z")), chain("cali-pi-a", onePort),
                chain("cali-pi-z", ports)), List.of());
        assertThat(ops(NftChangePlanner.fullBatch(t))).containsExactly("add table calico", "delete table calico",
                "add table calico", "add chain cali-FORWARD", "add chain cali-pi-a", "add chain cali-pi-z",
                "add rule cali-pi-z", "add rule cali-FORWARD", "add rule cali-pi-a");
        NftTable empty = table(List.of(), List.of());
        assertThat(ops(edit(t, empty).batch())).containsExactly("add chain cali-FORWARD", "add chain cali-pi-a",
                "add chain cali-pi-z", "add rule cali-pi-z", "add rule cali-FORWARD", "add rule cali-pi-a");

        // changed chains: one whose old rules held an anonymous set (its flush unbinds it) goes first too
        NftTable old = table(List.of(chain("cali-pi-a", accept()), chain("cali-pi-b", drop()), chain("cali-pi-c", ports)),
                List.of());
        NftTable now = table(List.of(chain("cali-pi-a", drop()), chain("cali-pi-b", ports), chain("cali-pi-c", accept())),
                List.of());
        Edit e = edit(now, old);
        assertThat(ops(e.batch())).containsExactly("flush chain cali-pi-b", "add rule cali-pi-b",
                "flush chain cali-pi-c", "add rule cali-pi-c", "flush chain cali-pi-a", "add rule cali-pi-a");
        assertThat(e.written()).containsExactly("cali-pi-b", "cali-pi-c", "cali-pi-a");
    }

    @Test
    void withMoreComingAChangedEndpointChainWaitsUnlessItNamesSomethingThatGoes() {
        NftTable old = table(List.of(chain("cali-tw-cali1", jump("cali-pi-a")), chain("cali-tw-cali2", jump("cali-pi-a")),
                chain("cali-fw-cali3", fromSet("cali40a")), chain("cali-pi-a", accept())), List.of(set("cali40a", "10.0.0.1/32")));
        NftTable now = table(List.of(chain("cali-tw-cali1", jump("cali-pi-a"), jump("cali-pi-b")),
                chain("cali-tw-cali2", jump("cali-pi-a")), chain("cali-fw-cali3", jump("cali-pi-b")),
                chain("cali-pi-a", drop()), chain("cali-pi-b", accept())), List.of());
        NftChangePlanner.Holding h = NftChangePlanner.holdingEndpointChains(now, old);
        // cali1 changed and what it names stays: held; cali2 did not change; cali3's set goes: written now;
        // a policy chain is never held
        assertThat(h.held()).containsExactly("cali-tw-cali1");
        assertThat(h.table().chains().get("cali-tw-cali1")).isEqualTo(old.chains().get("cali-tw-cali1"));
        assertThat(h.table().chains().get("cali-fw-cali3")).isEqualTo(now.chains().get("cali-fw-cali3"));
        assertThat(h.table().chains().get("cali-pi-a")).isEqualTo(now.chains().get("cali-pi-a"));
        assertThat(edit(h.table(), old).written()).containsExactly("cali-fw-cali3", "cali-pi-a", "cali-pi-b");

        NftTable policyGoes = table(List.of(chain("cali-tw-cali1", accept()), chain("cali-tw-cali2", jump("cali-pi-a")),
                chain("cali-fw-cali3", fromSet("cali40a"))), List.of(set("cali40a", "10.0.0.1/32")));
        assertThat(NftChangePlanner.holdingEndpointChains(policyGoes, old).held()).isEmpty();
        NftTable unchanged = NftChangePlanner.holdingEndpointChains(old, old).table();
        assertThat(unchanged).isSameAs(old);
    }

    // --- helpers ---

    /** FORWARD -> dispatch -> one endpoint chain naming one set. */
    private static NftTable oneEndpoint() {
        return table(List.of(chain("cali-FORWARD", jump("cali-to-wl-dispatch")),
                        dispatch("cali-to-wl-dispatch", Map.of("cali1", "cali-tw-cali1")),
                        chain("cali-tw-cali1", fromSet("cali40a"))),
                List.of(set("cali40a", "10.0.0.1/32")), Map.of(FORWARD, FORWARD_BASE));
    }

    private static Edit edit(NftTable desired, NftTable programmed) {
        return (Edit) NftChangePlanner.change(desired, programmed);
    }

    /** Each command as "verb kind name" (a rule or element: its chain, set or map). */
    private static List<String> ops(NftBatch b) {
        List<String> out = new ArrayList<>();
        for (ObjectNode cmd : b.commands()) {
            String verb = cmd.fieldNames().next();
            JsonNode body = cmd.get(verb);
            String kind = body.fieldNames().next();
            JsonNode obj = body.get(kind);
            String name = obj.get(kind.equals("rule") ? "chain" : "name").asText();
            out.add(verb + " " + kind + " " + name);
        }
        return out;
    }

    private static List<String> elems(ObjectNode addSet) {
        List<String> out = new ArrayList<>();
        addSet.get("add").get("set").path("elem").forEach(e -> out.add(e.has("prefix")
                ? e.get("prefix").get("addr").asText() + "/" + e.get("prefix").get("len").asInt() : e.asText()));
        return out;
    }

    private static NftTable table(List<NftChain> chains, List<NftSet> sets) {
        return table(chains, sets, Map.of());
    }

    private static NftTable table(List<NftChain> chains, List<NftSet> sets, Map<String, NftTable.Base> bases) {
        SortedMap<String, NftChain> cs = new TreeMap<>();
        chains.forEach(c -> cs.put(c.name(), c));
        SortedMap<String, NftSet> ss = new TreeMap<>();
        sets.forEach(s -> ss.put(s.name(), s));
        return new NftTable(cs, new TreeMap<>(bases), ss);
    }

    private static NftChain chain(String name, NftRule... rules) {
        return new NftChain(name, List.of(rules), null);
    }

    private static NftChain dispatch(String name, Map<String, String> targets) {
        return new NftChain(name, List.of(new NftRule(List.of(NftExpr.vmap(NftExpr.meta("oifname"), name + "-map")), null),
                drop()), new DispatchMap(name + "-map", new TreeMap<>(targets)));
    }

    private static NftSet set(String name, String... members) {
        return new NftSet(name, IpFamily.V4, false, new TreeSet<>(List.of(members)));
    }

    private static NftRule jump(String chain) {
        return new NftRule(List.of(NftExpr.jump(chain)), null);
    }

    private static NftRule fromSet(String set) {
        return new NftRule(List.of(NftExpr.saddrInSet(4, set), NftExpr.accept()), null);
    }

    private static NftRule accept() {
        return new NftRule(List.of(NftExpr.accept()), null);
    }

    private static NftRule drop() {
        return new NftRule(List.of(NftExpr.drop()), null);
    }
}
