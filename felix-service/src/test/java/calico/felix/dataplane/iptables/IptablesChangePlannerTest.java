package calico.felix.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.iptables.IpsetFamily;
import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetType;
import calico.dataplane.iptables.RestoreTransaction;
import calico.dataplane.iptables.Rule;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.felix.dataplane.iptables.IptablesChangePlanner.Change;
import calico.felix.dataplane.iptables.IptablesSetPlan.DesiredSet;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import calico.felix.dataplane.rules.Ruleset;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The iptables planner and the verifier's cheap check alone, without a kernel or a tool: what
 * an apply writes for a given desired and programmed state, and how hook jumps are put right.
 */
class IptablesChangePlannerTest {

    private static final Chain A = new Chain("cali-pi-a", List.of(Rule.of("-j", "ACCEPT")));
    private static final Chain B = new Chain("cali-pi-b", List.of(Rule.of("-j", "DROP")));

    @Test
    void onlyChainsThatDifferAreWrittenAndGoneOnesDeleted() {
        Chain a2 = new Chain("cali-pi-a", List.of(Rule.of("-j", "DROP")));
        Change same = IptablesChangePlanner.delta(rendered(A, B), programmed(A, B), Map.of(), Map.of(), 100);
        assertThat(same.restores()).isEmpty();
        assertThat(same.stats()).isEqualTo(new ApplyStats(false, 0, 0, 0, 0));

        Change c = IptablesChangePlanner.delta(rendered(a2), programmed(A, B), Map.of(), Map.of(), 100);
        assertThat(c.restores().get(IpFamily.V4)).hasSize(1);
        assertThat(c.restores().get(IpFamily.V4).get(0).render()).isEqualTo("""
                *filter
                :cali-pi-a - [0:0]
                :cali-pi-b - [0:0]
                -A cali-pi-a -m comment --comment cali:%s -j DROP
                -X cali-pi-b
                COMMIT
                """.formatted(RuleHashes.of(a2).get(0)));
        assertThat(c.rewritten()).isEqualTo(Map.of(IpFamily.V4, Map.of(Table.FILTER, List.of("cali-pi-a", "cali-pi-b"))));
        assertThat(c.stats()).isEqualTo(new ApplyStats(false, 1, 1, 0, 0));
    }

    @Test
    void setsAreCreatedBeforeRulesEditedByMemberAndDestroyedAfter() {
        DesiredSet s1 = set("10.0.0.1/32", "10.0.0.2/32");
        DesiredSet s1b = set("10.0.0.2/32", "10.0.0.3/32");
        Map<String, DesiredSet> programmedSets = Map.of("cali40a", s1, "cali40gone", s1);
        Map<String, DesiredSet> sets = new TreeMap<>(Map.of("cali40a", s1b, "cali40new", s1));
        Change c = IptablesChangePlanner.delta(rendered(), programmed(), sets, programmedSets, 100);
        String before = c.before().render();
        assertThat(before).contains("del cali40a 10.0.0.1/32 -exist\n", "add cali40a 10.0.0.3/32 -exist\n")
                .doesNotContain("cali40a 10.0.0.2/32");
        assertThat(before).contains("create cali40new hash:net family inet", "swap cali40new cali4tnew");
        assertThat(c.after().render()).isEqualTo("destroy cali40gone\n");
        assertThat(c.stats()).isEqualTo(new ApplyStats(false, 0, 0, 2, 1));
    }

    @Test
    void aResyncWritesEverythingRemovesStaleChainsAndSetsAndPutsEachJumpInItsPlace() {
        SavedTable filter = SavedTable.parse(Table.FILTER, """
                *filter
                :FORWARD ACCEPT [0:0]
                :INPUT ACCEPT [0:0]
                :cali-old - [0:0]
                -A FORWARD -j stranger
                -A FORWARD -j cali-FORWARD
                -A INPUT -j cali-INPUT
                COMMIT
                """);
        Map<IpFamily, Map<Table, SavedTable>> saved = Map.of(IpFamily.V4, savedTables(filter));
        Chain forward = new Chain("cali-FORWARD", List.of(Rule.of("-j", "ACCEPT")));
        Ruleset ruleset = new Ruleset(Set.of(IpFamily.V4), Map.of(), List.of(new Ruleset.Entry(Ruleset.Table.FILTER,
                Ruleset.Hook.FORWARD, "cali-FORWARD")), new TreeMap<>(), Set.of());
        Map<IpFamily, ChainRenderer.Rendered> rendered = Map.of(IpFamily.V4, new ChainRenderer.Rendered(IpFamily.V4,
                Map.of(Table.FILTER, Map.of(forward.name(), forward)), Map.of(), ruleset));
        Change c = IptablesChangePlanner.resync(rendered, saved, kernelSets("cali40stale", "cali60other", "foreign"),
                Map.of(), false, 100, false);
        String tx = c.restores().get(IpFamily.V4).get(2).render(); // raw, mangle, filter, nat
        assertThat(tx).startsWith("*filter\n").contains(":cali-FORWARD - [0:0]\n",
                "-A cali-FORWARD -m comment --comment cali:" + RuleHashes.of(forward).get(0) + " -j ACCEPT\n",
                "-D FORWARD 2\n", "-I FORWARD 1 -j cali-FORWARD\n", "-D INPUT 1\n", "-X cali-old\n");
        assertThat(c.after().render()).as("only sets of the rendered families").isEqualTo("destroy cali40stale\n");
        assertThat(c.stats()).isEqualTo(new ApplyStats(true, 1, 1, 0, 1));
    }

    @Test
    void aHookJumpIsRepairedOnlyWhenItIsNotAloneInItsPlace() {
        List<Ruleset.Entry> entries = List.of(new Ruleset.Entry(Ruleset.Table.FILTER, Ruleset.Hook.FORWARD, "cali-FORWARD"));
        SavedTable first = SavedTable.parse(Table.FILTER, """
                *filter
                :FORWARD ACCEPT [0:0]
                -A FORWARD -j cali-FORWARD
                -A FORWARD -j stranger
                COMMIT
                """);
        RestoreTransaction none = RestoreTransaction.forTable(Table.FILTER);
        assertThat(IptablesChangePlanner.fixHooks(none, first, Table.FILTER, entries, false, false)).isZero();
        RestoreTransaction append = RestoreTransaction.forTable(Table.FILTER);
        assertThat(IptablesChangePlanner.fixHooks(append, first, Table.FILTER, entries, true, false)).isEqualTo(1);
        assertThat(append.render()).contains("-D FORWARD 1\n", "-A FORWARD -j cali-FORWARD\n");
        SavedTable twice = SavedTable.parse(Table.FILTER, """
                *filter
                :FORWARD ACCEPT [0:0]
                -A FORWARD -j cali-FORWARD
                -A FORWARD -j cali-FORWARD
                COMMIT
                """);
        RestoreTransaction dup = RestoreTransaction.forTable(Table.FILTER);
        assertThat(IptablesChangePlanner.fixHooks(dup, twice, Table.FILTER, entries, false, false)).isEqualTo(1);
        assertThat(dup.render()).contains("-D FORWARD 2\n-D FORWARD 1\n", "-I FORWARD 1 -j cali-FORWARD\n");
    }

    @Test
    void anAdoptingResyncWritesOnlyChainsWithoutOurHashesAndSetsWithOtherMembers() {
        Chain forward = new Chain("cali-FORWARD", List.of(Rule.of("-j", "cali-to-wl-dispatch"), Rule.of("-j", "ACCEPT")));
        Chain endpoint = new Chain("cali-tw-a", List.of(Rule.of("-p", "tcp", "--dport", "80", "-j", "ACCEPT")));
        List<String> fh = RuleHashes.of(forward);
        SavedTable filter = SavedTable.parse(Table.FILTER, """
                *filter
                :FORWARD ACCEPT [0:0]
                :cali-FORWARD - [0:0]
                :cali-tw-a - [0:0]
                -A FORWARD -j cali-FORWARD
                -A cali-FORWARD -m comment --comment cali:%s -j cali-to-wl-dispatch
                -A cali-FORWARD -m comment --comment cali:%s -j ACCEPT
                -A cali-tw-a -p tcp -m tcp --dport 80 -j ACCEPT
                COMMIT
                """.formatted(fh.get(0), fh.get(1)));
        Ruleset ruleset = new Ruleset(Set.of(IpFamily.V4), Map.of(), List.of(new Ruleset.Entry(Ruleset.Table.FILTER,
                Ruleset.Hook.FORWARD, "cali-FORWARD")), new TreeMap<>(), Set.of());
        Map<IpFamily, ChainRenderer.Rendered> rendered = Map.of(IpFamily.V4, new ChainRenderer.Rendered(IpFamily.V4,
                Map.of(Table.FILTER, new TreeMap<>(Map.of(forward.name(), forward, endpoint.name(), endpoint))), Map.of(),
                ruleset));
        Map<String, DesiredSet> sets = new TreeMap<>(Map.of("cali40same", set("10.0.0.1/32", "10.0.1.0/24"),
                "cali40other", set("10.0.0.2/32")));
        Map<String, IpsetInfo> kernel = Map.of(
                "cali40same", new IpsetInfo("cali40same", IpsetType.HASH_NET, IpsetFamily.INET, Set.of("10.0.0.1", "10.0.1.0/24")),
                "cali40other", new IpsetInfo("cali40other", IpsetType.HASH_NET, IpsetFamily.INET, Set.of("10.0.0.3")));

        Change c = IptablesChangePlanner.resync(rendered, Map.of(IpFamily.V4, savedTables(filter)), kernel, sets, false,
                100, true);

        assertThat(c.restores().get(IpFamily.V4)).as("only the filter table changes").hasSize(1);
        String tx = c.restores().get(IpFamily.V4).get(0).render();
        assertThat(tx).as("a chain without our hashes is rewritten; one with them is not")
                .contains(":cali-tw-a - [0:0]\n").doesNotContain("cali-FORWARD");
        assertThat(c.before().render()).contains("cali40other").doesNotContain("cali40same");
        assertThat(c.stats()).isEqualTo(new ApplyStats(true, 1, 0, 1, 0));

        SavedTable unchanged = SavedTable.parse(Table.FILTER, """
                *filter
                :FORWARD ACCEPT [0:0]
                :cali-FORWARD - [0:0]
                -A FORWARD -j cali-FORWARD
                -A cali-FORWARD -m comment --comment cali:%s -j cali-to-wl-dispatch
                -A cali-FORWARD -m comment --comment cali:%s -j ACCEPT
                COMMIT
                """.formatted(fh.get(0), fh.get(1)));
        Change same = IptablesChangePlanner.resync(Map.of(IpFamily.V4, new ChainRenderer.Rendered(IpFamily.V4,
                        Map.of(Table.FILTER, Map.of(forward.name(), forward)), Map.of(), ruleset)),
                Map.of(IpFamily.V4, savedTables(unchanged)),
                kernel, Map.of("cali40same", sets.get("cali40same")), false, 100, true);
        assertThat(same.restores()).as("nothing changed: no restore at all").isEmpty();
        assertThat(same.before().isEmpty()).isTrue();
        assertThat(same.stats()).isEqualTo(new ApplyStats(true, 0, 0, 0, 1));
    }

    @Test
    void aChainIsOursUnchangedExactlyWhenItsRulesCarryOurHashesInOrder() {
        Chain ours = new Chain("cali-pi-a", List.of(Rule.of("-p", "tcp", "--dport", "80", "-j", "ACCEPT"),
                Rule.of("-m", "comment", "--comment", "x", "-g", "cali-pro-b")));
        List<String> h = RuleHashes.of(ours);
        String first = "-p tcp -m comment --comment \"cali:" + h.get(0) + "\" -m tcp --dport 80 -j ACCEPT";
        String second = "-m comment --comment cali:" + h.get(1) + " -m comment --comment x -g cali-pro-b";
        assertThat(RuleHashes.matches(List.of(first, second), ours)).isTrue();
        assertThat(RuleHashes.matches(List.of(second, first), ours)).as("order counts").isFalse();
        assertThat(RuleHashes.matches(List.of(first), ours)).isFalse();
        assertThat(RuleHashes.matches(List.of(first, "-m comment --comment x -g cali-pro-b"), ours))
                .as("a rule without our hash").isFalse();
        assertThat(RuleHashes.matches(List.of(first, "-m comment --comment x -m comment --comment cali:" + h.get(1)
                + " -g cali-pro-b"), ours)).as("our hash is the first comment").isFalse();
        assertThat(RuleHashes.matches(List.of(first, second, "-j DROP"), ours)).as("a stranger's rule").isFalse();
        Chain other = new Chain("cali-pi-b", ours.rules());
        assertThat(RuleHashes.of(other)).as("the chain's name is in every hash").doesNotContainAnyElementsOf(h);
        Chain port81 = new Chain("cali-pi-a", List.of(Rule.of("-p", "tcp", "--dport", "81", "-j", "ACCEPT"),
                ours.rules().get(1)));
        assertThat(RuleHashes.of(port81)).as("a rule's hash covers the rules before it").doesNotContainAnyElementsOf(h);
        assertThat(h).allMatch(x -> x.matches("[A-Za-z0-9_-]{16}"));
    }

    private static Map<String, IpsetInfo> kernelSets(String... names) {
        Map<String, IpsetInfo> out = new TreeMap<>();
        for (String n : names) {
            out.put(n, new IpsetInfo(n, IpsetType.HASH_NET, IpsetFamily.INET, Set.of()));
        }
        return out;
    }

    private static Map<Table, SavedTable> savedTables(SavedTable filter) {
        Map<Table, SavedTable> out = new EnumMap<>(Table.class);
        for (Table t : IptablesChangePlanner.TABLES) {
            out.put(t, t == Table.FILTER ? filter : SavedTable.parse(t, ""));
        }
        return out;
    }

    private static DesiredSet set(String... members) {
        return new DesiredSet(IpsetFamily.INET, IpsetType.HASH_NET, new java.util.TreeSet<>(List.of(members)));
    }

    private static Map<IpFamily, ChainRenderer.Rendered> rendered(Chain... chains) {
        Map<String, Chain> filter = new TreeMap<>();
        for (Chain c : chains) {
            filter.put(c.name(), c);
        }
        return Map.of(IpFamily.V4, new ChainRenderer.Rendered(IpFamily.V4, Map.of(Table.FILTER, filter), Map.of(), null));
    }

    private static Map<IpFamily, Map<Table, Map<String, Chain>>> programmed(Chain... chains) {
        return Map.of(IpFamily.V4, rendered(chains).get(IpFamily.V4).tables());
    }
}
