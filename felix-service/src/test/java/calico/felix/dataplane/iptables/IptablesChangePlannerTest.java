package calico.felix.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.iptables.IpsetFamily;
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
                -A cali-pi-a -j DROP
                -X cali-pi-b
                COMMIT
                """);
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
        Change c = IptablesChangePlanner.resync(rendered, saved, Set.of("cali40stale", "cali60other", "foreign"),
                Map.of(), false, 100);
        String tx = c.restores().get(IpFamily.V4).get(2).render(); // raw, mangle, filter, nat
        assertThat(tx).startsWith("*filter\n").contains(":cali-FORWARD - [0:0]\n", "-A cali-FORWARD -j ACCEPT\n",
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
    void theCheapCheckComparesRuleCountsAndTargetsOutsideQuotes() {
        Chain ours = new Chain("cali-pi-a", List.of(Rule.of("-p", "tcp", "--dport", "80", "-j", "ACCEPT"),
                Rule.of("-m", "comment", "--comment", "x", "-g", "cali-pro-b")));
        assertThat(IptablesVerifier.plausible(List.of("-p tcp -m tcp --dport 80 -j ACCEPT",
                "-m comment --comment \"says -j DROP\" -g cali-pro-b"), ours)).isTrue();
        assertThat(IptablesVerifier.plausible(List.of("-p tcp -m tcp --dport 81 -j ACCEPT",
                "-g cali-pro-b"), ours)).as("matches are not compared: the adoption window").isTrue();
        assertThat(IptablesVerifier.plausible(List.of("-p tcp -j DROP", "-g cali-pro-b"), ours)).isFalse();
        assertThat(IptablesVerifier.plausible(List.of("-p tcp -j ACCEPT"), ours)).isFalse();
        assertThat(IptablesVerifier.plausible(List.of("-p tcp -m tcp --dport 80 -j ACCEPT", "-g cali-pro-c"), ours))
                .as("another goto target").isFalse();
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
