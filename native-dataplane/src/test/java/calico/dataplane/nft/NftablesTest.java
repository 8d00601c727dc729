package calico.dataplane.nft;

import static calico.dataplane.nft.NftExpr.accept;
import static calico.dataplane.nft.NftExpr.counter;
import static calico.dataplane.nft.NftExpr.ctState;
import static calico.dataplane.nft.NftExpr.daddrInSet;
import static calico.dataplane.nft.NftExpr.daddrProtoDportInSet;
import static calico.dataplane.nft.NftExpr.dportIn;
import static calico.dataplane.nft.NftExpr.drop;
import static calico.dataplane.nft.NftExpr.iifname;
import static calico.dataplane.nft.NftExpr.iifnameVmap;
import static calico.dataplane.nft.NftExpr.jump;
import static calico.dataplane.nft.NftExpr.log;
import static calico.dataplane.nft.NftExpr.markMatches;
import static calico.dataplane.nft.NftExpr.returnVerdict;
import static calico.dataplane.nft.NftExpr.saddrInSet;
import static calico.dataplane.nft.NftExpr.setMarkBits;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.testing.NetNs;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** libnftables against the real kernel, always inside a namespace of the test's own. */
class NftablesTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final TableRef CALICO = TableRef.inet("calico");

    private NetNs ns;

    @BeforeEach
    void namespace() {
        ns = NetNs.create("calico-nft");
    }

    @AfterEach
    void deleteNamespace() {
        ns.close();
    }

    /** Opens a context inside the namespace, runs body, closes it, on the namespace's thread. */
    private <T> T inNs(Function<Nftables, T> body) {
        return ns.call(() -> {
            try (Nftables nft = Nftables.open()) {
                return body.apply(nft);
            }
        });
    }

    /** The namespace's ruleset as `nft -j` sees it: an independent check of what we applied. */
    private JsonNode nftJson(String... listArgs) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("nft", "-j", "list"));
        cmd.addAll(List.of(listArgs));
        return MAPPER.readTree(ns.exec(cmd.toArray(String[]::new)));
    }

    private static List<JsonNode> objects(JsonNode doc, String kind) {
        List<JsonNode> out = new ArrayList<>();
        doc.path("nftables").forEach(n -> {
            if (n.has(kind)) {
                out.add(n.get(kind));
            }
        });
        return out;
    }

    private static NftBatch calicoSkeleton() {
        return new NftBatch()
                .addTable(CALICO)
                .addChain(CALICO, "filter-FORWARD", BaseChain.filter("forward", "accept"))
                .addChain(CALICO, "from-wl-dispatch")
                .addChain(CALICO, "tw-cali1234")
                .addSet(CALICO, "cali40-allowed", SetSpec.cidrs(4))
                .addRule(CALICO, "filter-FORWARD", List.of(ctState("established", "related"), accept()))
                .addRule(CALICO, "filter-FORWARD", List.of(iifname("cali1234"), jump("from-wl-dispatch")), "felix: from workloads")
                .addRule(CALICO, "tw-cali1234", List.of(saddrInSet(4, "cali40-allowed"),
                        dportIn("tcp", List.of(PortRange.of(80), new PortRange(8000, 8080))), counter(), accept()))
                .addRule(CALICO, "tw-cali1234", List.of(markMatches(0x10000, 0x10000), returnVerdict()))
                .addRule(CALICO, "tw-cali1234", List.of(setMarkBits(0x20000), log("calico-drop ", 5), drop()));
    }

    @Test
    void createsTableWithBaseAndRegularChainsAndRules() throws Exception {
        inNs(nft -> {
            nft.apply(calicoSkeleton());
            return null;
        });

        String text = ns.exec("nft", "list", "table", "inet", "calico");
        assertThat(text)
                .contains("type filter hook forward priority filter; policy accept;")
                .contains("ct state established,related accept")
                .contains("iifname \"cali1234\" jump from-wl-dispatch comment \"felix: from workloads\"")
                .contains("ip saddr @cali40-allowed tcp dport { 80, 8000-8080 } counter packets 0 bytes 0 accept")
                .contains("meta mark & 0x00010000 == 0x00010000 return")
                .contains("meta mark set meta mark | 0x00020000 log prefix \"calico-drop \" group 5 drop");
        JsonNode doc = nftJson("table", "inet", "calico");
        assertThat(objects(doc, "chain")).extracting(c -> c.get("name").asText())
                .containsExactlyInAnyOrder("filter-FORWARD", "from-wl-dispatch", "tw-cali1234");
        JsonNode base = objects(doc, "chain").stream().filter(c -> c.has("hook")).findFirst().orElseThrow();
        assertThat(base.get("name").asText()).isEqualTo("filter-FORWARD");
        assertThat(base.get("hook").asText()).isEqualTo("forward");
        assertThat(objects(doc, "rule")).hasSize(5);
    }

    @Test
    void listingParsesBackWhatWasAdded() {
        JsonNode[] lists = inNs(nft -> {
            nft.apply(calicoSkeleton().addElements(CALICO, "cali40-allowed", List.of(NftElem.cidr("10.65.0.0/16"))));
            return new JsonNode[] {nft.listRuleset(), nft.listTable(CALICO), nft.listChain(CALICO, "tw-cali1234"),
                nft.listSet(CALICO, "cali40-allowed")};
        });
        assertThat(objects(lists[0], "metainfo")).hasSize(1);
        assertThat(objects(lists[0], "table")).extracting(t -> t.get("name").asText()).containsExactly("calico");
        assertThat(objects(lists[1], "chain")).hasSize(3);
        assertThat(objects(lists[1], "set")).hasSize(1);

        List<JsonNode> rules = objects(lists[2], "rule");
        assertThat(rules).hasSize(3).allSatisfy(r -> assertThat(r.get("handle").asLong()).isPositive());
        assertThat(rules.get(0).get("expr").get(0)).isEqualTo(saddrInSet(4, "cali40-allowed"));
        assertThat(rules.get(2).get("expr").get(2)).isEqualTo(drop());

        JsonNode set = objects(lists[3], "set").get(0);
        assertThat(set.get("type").asText()).isEqualTo("ipv4_addr");
        assertThat(set.get("flags")).containsExactly(MAPPER.getNodeFactory().textNode("interval"));
        assertThat(set.get("elem")).containsExactly(NftElem.cidr("10.65.0.0/16"));
    }

    /** The streamed listing hands on, one by one, exactly the elements of the listing as one tree. */
    @Test
    void aStreamedListingHandsOnTheElementsOfTheWholeListing() {
        List<JsonNode> streamed = new ArrayList<>();
        JsonNode whole = inNs(nft -> {
            nft.apply(calicoSkeleton().addElements(CALICO, "cali40-allowed", List.of(NftElem.cidr("10.65.0.0/16"))));
            nft.listTable(CALICO, streamed::add);
            return nft.listTable(CALICO);
        });
        List<JsonNode> elements = new ArrayList<>();
        whole.path("nftables").forEach(elements::add);
        assertThat(elements).hasSizeGreaterThan(5); // metainfo, table, 3 chains, a set, 5 rules
        assertThat(streamed).isEqualTo(elements);
    }

    @Test
    void setElementsWithIntervalsAreAddedAndDeleted() throws Exception {
        inNs(nft -> {
            nft.apply(new NftBatch().addTable(CALICO).addSet(CALICO, "cidrs", SetSpec.cidrs(4))
                    .addSet(CALICO, "cidrs6", SetSpec.cidrs(6))
                    .addElements(CALICO, "cidrs", List.of(NftElem.cidr("10.0.0.0/8"), NftElem.cidr("192.168.1.7"),
                            NftElem.cidr("172.16.0.0/12")))
                    .addElements(CALICO, "cidrs6", List.of(NftElem.cidr("fd00:1::/64"))));
            nft.apply(new NftBatch().deleteElements(CALICO, "cidrs", List.of(NftElem.cidr("172.16.0.0/12")))
                    .addElements(CALICO, "cidrs", List.of(NftElem.cidr("100.64.0.0/10"))));
            return null;
        });
        JsonNode set = objects(nftJson("set", "inet", "calico", "cidrs"), "set").get(0);
        assertThat(set.get("elem")).containsExactlyInAnyOrder(NftElem.cidr("10.0.0.0/8"), NftElem.cidr("192.168.1.7"),
                NftElem.cidr("100.64.0.0/10"));
        assertThat(ns.exec("nft", "list", "set", "inet", "calico", "cidrs6")).contains("fd00:1::/64");

        // Deleting an element that is not there fails, and takes the batch's other changes with it.
        assertThatThrownBy(() -> inNs(nft -> {
            nft.apply(new NftBatch().addElements(CALICO, "cidrs", List.of(NftElem.cidr("11.0.0.0/8")))
                    .deleteElements(CALICO, "cidrs", List.of(NftElem.cidr("172.16.0.0/12"))));
            return null;
        })).isInstanceOf(NftablesException.class);
        assertThat(ns.exec("nft", "list", "set", "inet", "calico", "cidrs")).doesNotContain("11.0.0.0/8");
    }

    @Test
    void concatenatedSetMatchesNamedPorts() throws Exception {
        inNs(nft -> {
            nft.apply(new NftBatch().addTable(CALICO)
                    .addChain(CALICO, "named-ports")
                    .addSet(CALICO, "np-http", SetSpec.namedPorts(4))
                    .addElements(CALICO, "np-http", List.of(NftElem.namedPort("10.0.0.1", "tcp", 8080),
                            NftElem.namedPort("10.0.0.2", "udp", 53)))
                    .addRule(CALICO, "named-ports", List.of(daddrProtoDportInSet(4, "np-http"), accept())));
            return null;
        });
        String text = ns.exec("nft", "list", "table", "inet", "calico");
        assertThat(text).contains("type ipv4_addr . inet_proto . inet_service")
                .contains("10.0.0.1 . tcp . 8080")
                .contains("10.0.0.2 . udp . 53")
                .contains("ip daddr . meta l4proto . th dport @np-http accept");
        JsonNode set = objects(nftJson("set", "inet", "calico", "np-http"), "set").get(0);
        assertThat(set.get("type").toString()).isEqualTo("[\"ipv4_addr\",\"inet_proto\",\"inet_service\"]");
    }

    @Test
    void verdictMapDispatchesByInterfaceName() throws Exception {
        JsonNode listed = inNs(nft -> {
            Map<JsonNode, JsonNode> dispatch = new LinkedHashMap<>();
            dispatch.put(NftElem.ifname("cali1111"), jump("fw-cali1111"));
            dispatch.put(NftElem.ifname("cali2222"), jump("fw-cali2222"));
            nft.apply(new NftBatch().addTable(CALICO)
                    .addChain(CALICO, "filter-FORWARD", BaseChain.filter("forward", "accept"))
                    .addChain(CALICO, "fw-cali1111").addChain(CALICO, "fw-cali2222")
                    .addVerdictMap(CALICO, "from-wl", SetSpec.of("ifname"))
                    .addMapElements(CALICO, "from-wl", dispatch)
                    .addRule(CALICO, "filter-FORWARD", List.of(iifnameVmap("from-wl"))));
            // A workload goes away: its dispatch entry first, then its chain, in one transaction.
            nft.apply(new NftBatch().deleteMapElements(CALICO, "from-wl", List.of(NftElem.ifname("cali2222")))
                    .deleteChain(CALICO, "fw-cali2222"));
            return nft.listMap(CALICO, "from-wl");
        });
        JsonNode map = objects(listed, "map").get(0);
        assertThat(map.get("map").asText()).isEqualTo("verdict");
        assertThat(map.get("elem")).containsExactly(MAPPER.createArrayNode().add("cali1111").add(jump("fw-cali1111")));
        String text = ns.exec("nft", "list", "map", "inet", "calico", "from-wl");
        assertThat(text).contains("type ifname : verdict").contains("\"cali1111\" : jump fw-cali1111")
                .doesNotContain("cali2222");
        assertThat(ns.exec("nft", "list", "chain", "inet", "calico", "filter-FORWARD")).contains("iifname vmap @from-wl");
        assertThat(ns.tryExec("nft", "list", "chain", "inet", "calico", "fw-cali2222").status()).isNotZero();
    }

    @Test
    void failedBatchAppliesNothingAndNamesTheBadCommand() throws Exception {
        NftBatch bad = calicoSkeleton()
                .addSet(CALICO, "extra", SetSpec.cidrs(4))
                .addRule(CALICO, "tw-cali1234", List.of(jump("no-such-chain")));
        int badIndex = bad.size() - 1;

        NftablesException e = ns.call(() -> {
            try (Nftables nft = Nftables.open()) {
                try {
                    nft.apply(bad);
                    throw new AssertionError("batch with a jump to a missing chain was accepted");
                } catch (NftablesException expected) {
                    // the same context keeps working after a failure
                    assertThat(nft.listRuleset().path("nftables")).hasSize(1);
                    return expected;
                }
            }
        });

        assertThat(e.failedIndex()).isEqualTo(badIndex);
        assertThat(e.failedCommand()).contains(bad.commands().get(badIndex));
        assertThat(e.getMessage()).contains("#" + badIndex).contains("no-such-chain").contains("No such file or directory");
        assertThat(e.errorText()).contains("Error");
        assertThat(e.document()).isEqualTo(bad.toString());
        // Nothing of the earlier commands exists: not the table, not its chains or sets.
        assertThat(objects(nftJson("ruleset"), "table")).isEmpty();
    }

    @Test
    void failureInTheMiddleOfABatchOnAnExistingTableIsNamedAndRolledBack() throws Exception {
        inNs(nft -> {
            nft.apply(calicoSkeleton());
            return null;
        });
        String before = ns.exec("nft", "list", "ruleset");
        NftBatch bad = new NftBatch()
                .flushChain(CALICO, "tw-cali1234")
                .addRule(CALICO, "tw-cali1234", List.of(drop()))
                .deleteSet(CALICO, "no-such-set")
                .addChain(CALICO, "after-the-error");
        NftablesException e = inNs(nft -> {
            try {
                nft.apply(bad);
                return null;
            } catch (NftablesException x) {
                return x;
            }
        });
        assertThat(e).isNotNull();
        assertThat(e.failedIndex()).isEqualTo(2);
        assertThat(e.failedCommand().orElseThrow().toString()).contains("no-such-set");
        assertThat(ns.exec("nft", "list", "ruleset")).isEqualTo(before);
    }

    @Test
    void aRejectedBatchAfterEarlierOnesOnTheSameContextNamesTheRightCommandAndTheContextStaysUsable() throws Exception {
        // The driver's shape: set members added by "add set" with elem, a chain declared, a chain
        // refilled with a jump to a chain that does not exist. On one reused context libnftables
        // 1.0.6 failed the dry run of the first two commands ("File exists"), so the bisection
        // blamed the "add chain"; each dry run now has a context of its own.
        com.fasterxml.jackson.databind.node.ObjectNode addSet = MAPPER.createObjectNode();
        addSet.putObject("add").putObject("set").put("family", "inet").put("table", "calico")
                .put("name", "cali40-allowed").put("type", "ipv4_addr");
        ((com.fasterxml.jackson.databind.node.ObjectNode) addSet.get("add").get("set")).putArray("flags").add("interval");
        ((com.fasterxml.jackson.databind.node.ObjectNode) addSet.get("add").get("set"))
                .set("elem", MAPPER.createArrayNode().add(NftElem.cidr("10.0.0.3")));
        NftBatch bad = new NftBatch().raw(addSet)
                .addChain(CALICO, "newc")
                .flushChain(CALICO, "tw-cali1234")
                .addRule(CALICO, "tw-cali1234", List.of(jump("missing")))
                .addRule(CALICO, "newc", List.of(accept()));
        String[] before = new String[1];
        NftablesException e = inNs(nft -> {
            nft.apply(calicoSkeleton());
            nft.apply(new NftBatch().flushChain(CALICO, "tw-cali1234").addRule(CALICO, "tw-cali1234", List.of(accept())));
            before[0] = ns.exec("nft", "list", "ruleset");
            NftablesException x = null;
            try {
                nft.apply(bad);
            } catch (NftablesException thrown) {
                x = thrown;
            }
            // The same handle goes on working after the failure, and dry runs of good prefixes
            // pass one after the other (on one reused context the second failed: "File exists").
            NftBatch one = new NftBatch().raw(addSet);
            NftBatch two = new NftBatch().raw(addSet).addChain(CALICO, "newc");
            assertThat(nft.check(one)).isTrue();
            assertThat(nft.check(two)).isTrue();
            assertThat(nft.check(two)).isTrue();
            nft.apply(new NftBatch().addChain(CALICO, "after-the-failure"));
            return x;
        });
        assertThat(e).isNotNull();
        assertThat(e.failedIndex()).isEqualTo(3);
        assertThat(e.failedCommand().orElseThrow().toString()).contains("missing");
        assertThat(ns.exec("nft", "list", "ruleset")).contains("chain after-the-failure")
                .doesNotContain("newc").doesNotContain("10.0.0.3");
        assertThat(before[0]).doesNotContain("after-the-failure");
    }

    @Test
    void malformedJsonIsReportedWithItsCommand() {
        NftBatch bad = new NftBatch().addTable(CALICO)
                .addRule(CALICO, "nochain", List.of(MAPPER.createObjectNode().put("no-such-statement", 1)));
        NftablesException e = inNs(nft -> {
            try {
                nft.apply(bad);
                return null;
            } catch (NftablesException x) {
                return x;
            }
        });
        assertThat(e).isNotNull();
        assertThat(e.failedIndex()).isEqualTo(1);
        assertThat(e.getMessage()).contains("no-such-statement");
        assertThat(objects(inNs(Nftables::listRuleset), "table")).isEmpty();
    }

    @Test
    void deletingOurTableLeavesAStrangersTableAlone() throws Exception {
        ns.exec("nft", "add", "table", "ip", "stranger");
        ns.exec("nft", "add", "chain", "ip", "stranger", "input", "{ type filter hook input priority 0; policy accept; }");
        ns.exec("nft", "add", "rule", "ip", "stranger", "input", "tcp", "dport", "22", "accept");
        String stranger = ns.exec("nft", "list", "table", "ip", "stranger");

        inNs(nft -> {
            nft.apply(calicoSkeleton());
            nft.apply(new NftBatch().deleteTable(CALICO));
            return null;
        });
        assertThat(objects(nftJson("ruleset"), "table")).extracting(t -> t.get("name").asText()).containsExactly("stranger");
        assertThat(ns.exec("nft", "list", "table", "ip", "stranger")).isEqualTo(stranger);
    }

    @Test
    void flushTableEmptiesChainsButNotSets() throws Exception {
        inNs(nft -> {
            nft.apply(calicoSkeleton().addElements(CALICO, "cali40-allowed", List.of(NftElem.cidr("10.0.0.0/8"))));
            nft.apply(new NftBatch().flushTable(CALICO));
            return null;
        });
        JsonNode doc = nftJson("table", "inet", "calico");
        assertThat(objects(doc, "chain")).hasSize(3);
        assertThat(objects(doc, "rule")).isEmpty();
        // libnftables 1.0.6: flush table removes rules only; set elements need flushSet.
        assertThat(objects(doc, "set").get(0).get("elem")).containsExactly(NftElem.cidr("10.0.0.0/8"));
    }

    @Test
    void deleteRuleByHandleFromAListing() throws Exception {
        inNs(nft -> {
            nft.apply(calicoSkeleton());
            JsonNode chain = nft.listChain(CALICO, "tw-cali1234");
            long handle = objects(chain, "rule").get(1).get("handle").asLong();
            nft.apply(new NftBatch().deleteRule(CALICO, "tw-cali1234", handle));
            return null;
        });
        assertThat(ns.exec("nft", "list", "chain", "inet", "calico", "tw-cali1234"))
                .doesNotContain("return").contains("accept").contains("drop");
    }

    @Test
    void contextIsConfinedToItsThread() {
        ns.run(() -> {
            try (Nftables nft = Nftables.open()) {
                Thread other = new Thread(() -> assertThatThrownBy(nft::listRuleset)
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("belongs to thread"));
                other.start();
                try {
                    other.join();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                assertThat(nft.listRuleset().path("nftables")).hasSize(1);
            }
        });
    }

    @Test
    void checkValidatesWithoutApplying() throws Exception {
        boolean[] results = inNs(nft -> new boolean[] {
            nft.check(calicoSkeleton()),
            nft.check(calicoSkeleton().addRule(CALICO, "tw-cali1234", List.of(jump("missing"))))});
        assertThat(results).containsExactly(true, false);
        assertThat(objects(nftJson("ruleset"), "table")).isEmpty();
    }

    /** Each commit and listing is reported once (dry runs that find a refused command are not commits). */
    @Test
    void commitsAndListingsAreReportedToToolCalls() {
        List<String> heard = new ArrayList<>();
        calico.dataplane.calls.ToolCalls calls = new calico.dataplane.calls.ToolCalls() {
            @Override
            public void nftCommit(int commands, boolean ok, boolean ownMessages) {
                heard.add("commit " + commands + " " + ok + (ownMessages ? " own" : ""));
            }

            @Override
            public void nftList(boolean ok) {
                heard.add("list " + ok);
            }
        };
        NftBatch skeleton = calicoSkeleton();
        ns.call(() -> {
            try (Nftables nft = Nftables.open(calls)) {
                nft.apply(skeleton);
                nft.listTable(CALICO);
                try {
                    nft.apply(new NftBatch().addChain(new TableRef("inet", "absent"), "c"));
                } catch (NftablesException expected) {
                    heard.add("refused");
                }
                org.assertj.core.api.Assertions.assertThat(nft.calls()).isSameAs(calls);
            }
            return null;
        });
        org.assertj.core.api.Assertions.assertThat(heard).containsExactly("commit " + skeleton.size() + " true",
                "list true", "commit 1 false", "refused");
    }

    /** With netlink on, a commit says which way it went: felix's metric of the two paths counts from this. */
    @Test
    void aCommitSentAsOurOwnMessagesIsReportedAsSuch() {
        List<String> heard = new ArrayList<>();
        calico.dataplane.calls.ToolCalls calls = new calico.dataplane.calls.ToolCalls() {
            @Override
            public void nftCommit(int commands, boolean ok, boolean ownMessages) {
                heard.add("commit " + commands + " " + ok + (ownMessages ? " own" : ""));
            }
        };
        ns.call(() -> {
            try (Nftables nft = Nftables.open(calls, true)) {
                nft.apply(calicoSkeleton()); // a table and chains: not encoded, libnftables
                nft.apply(new NftBatch().flushChain(CALICO, "tw-cali1234")
                        .addRule(CALICO, "tw-cali1234", List.of(markMatches(0x10000, 0x10000), returnVerdict())));
                org.assertj.core.api.Assertions.assertThat(nft.netlinkBatches()).isEqualTo(1);
            }
            return null;
        });
        org.assertj.core.api.Assertions.assertThat(heard).containsExactly("commit " + calicoSkeleton().size() + " true",
                "commit 2 true own");
    }
}
