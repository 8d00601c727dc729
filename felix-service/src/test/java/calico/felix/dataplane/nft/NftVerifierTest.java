package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.nft.NftExpr;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.nft.NftSetPlan.NftSet;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Ruleset;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The verifier's comparison alone: a listing (libnftables' JSON, as {@link NftListing} parses it)
 * against what is programmed gives the repairs, without a kernel (the kernel path:
 * {@code NftablesDataplaneKernelTest}).
 */
class NftVerifierTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final NftRule ACCEPT = new NftRule(List.of(NftExpr.accept()), null);
    private static final NftRule DROP = new NftRule(List.of(NftExpr.drop()), null);
    private static final NftTable.Base FORWARD = new NftTable.Base(
            NftDesiredState.baseSpec(Ruleset.Table.FILTER, Ruleset.Hook.FORWARD), List.of("cali-pi-a"));

    private final NftTable programmed = new NftTable(new TreeMap<>(Map.of("cali-pi-a",
            new NftChain("cali-pi-a", List.of(ACCEPT), null))), new TreeMap<>(Map.of("filter-FORWARD", FORWARD)),
            new TreeMap<>(Map.of("cali40a", new NftSet("cali40a", IpFamily.V4, false, new TreeSet<>(Set.of("10.0.0.1/32"))))));

    @Test
    void aTableAsProgrammedNeedsNothingAndItsChainsAreVerified() {
        NftVerifier.Repair r = compare(listing(List.of(ACCEPT), "10.0.0.1"), Map.of(), Set.of());
        assertThat(r.tableGone()).isFalse();
        assertThat(r.batch().isEmpty()).isTrue();
        assertThat(r.count()).isZero();
        assertThat(r.verified()).containsOnlyKeys("cali-pi-a", "filter-FORWARD");
    }

    @Test
    void aGoneTableIsToldApart() {
        NftVerifier.Repair r = NftVerifier.compare(NftListing.parse(doc(List.of())), programmed, Map.of(), Set.of());
        assertThat(r.tableGone()).isTrue();
    }

    @Test
    void strangersObjectsInOurTableGoAfterNothingOfOursNamesThem() {
        List<ObjectNode> items = items(List.of(ACCEPT), "10.0.0.1");
        items.add(obj("chain", Map.of("name", "stranger")));
        items.add(obj("set", Map.of("name", "strangeset", "type", "ipv4_addr")));
        NftVerifier.Repair r = NftVerifier.compare(NftListing.parse(doc(items)), programmed, Map.of(), Set.of());
        assertThat(r.strangeChains()).containsExactly("stranger");
        assertThat(r.strangeSets()).containsExactly("strangeset");
        assertThat(ops(r)).containsExactly("flush chain stranger", "delete chain stranger", "delete set strangeset");
        assertThat(r.count()).isEqualTo(2);
    }

    @Test
    void aChainThatDiffersFromItsRecordedListingOrLostARuleIsRepairedAndCounted() {
        NftListing kernel = NftListing.parse(doc(items(List.of(DROP), "10.0.0.1")));
        Map<String, ListedDigest> recorded = Map.of("cali-pi-a", NftListing.parse(doc(items(List.of(ACCEPT),
                "10.0.0.1"))).chains.get("cali-pi-a").digest());
        NftVerifier.Repair r = NftVerifier.compare(kernel, programmed, recorded, Set.of());
        assertThat(r.repaired()).containsExactly("cali-pi-a");
        assertThat(ops(r)).containsExactly("flush chain cali-pi-a", "add rule cali-pi-a");

        NftVerifier.Repair lost = compare(listing(List.of(), "10.0.0.1"), Map.of(), Set.of());
        assertThat(lost.repaired()).containsExactly("cali-pi-a");
    }

    @Test
    void aChainWrittenSinceTheLastReadBackThatListsInOtherWordsIsRewrittenButNotCounted() {
        NftVerifier.Repair r = compare(listing(List.of(DROP), "10.0.0.1"), Map.of(), Set.of());
        assertThat(r.repaired()).isEmpty();
        assertThat(r.rewritten()).containsExactly("cali-pi-a");
        assertThat(r.count()).isZero();
        NftVerifier.Repair pending = compare(listing(List.of(DROP), "10.0.0.1"), Map.of(), Set.of("cali-pi-a"));
        assertThat(pending.rewritten()).as("rewritten by the last read-back: its listing is the reference").isEmpty();
        assertThat(pending.verified()).containsKey("cali-pi-a");
    }

    @Test
    void setMembersThatAreNotOursAreRefilled() {
        NftVerifier.Repair r = compare(listing(List.of(ACCEPT), "10.9.9.9"), Map.of(), Set.of());
        assertThat(r.repaired()).containsExactly("cali40a");
        assertThat(ops(r)).containsExactly("flush set cali40a", "add set cali40a");
    }

    // --- helpers ---

    private NftVerifier.Repair compare(JsonNode listing, Map<String, ListedDigest> recorded, Set<String> pending) {
        return NftVerifier.compare(NftListing.parse(listing), programmed, recorded, pending);
    }

    private static JsonNode listing(List<NftRule> rules, String member) {
        return doc(items(rules, member));
    }

    /** Our table with chain cali-pi-a holding {@code rules}, the base chain jumping to it, set cali40a holding {@code member}. */
    private static List<ObjectNode> items(List<NftRule> rules, String member) {
        List<ObjectNode> items = new ArrayList<>();
        ObjectNode table = JSON.createObjectNode();
        table.putObject("table").put("family", "inet").put("name", "calico");
        items.add(table);
        items.add(obj("chain", Map.of("name", "cali-pi-a")));
        ObjectNode base = obj("chain", Map.of("name", "filter-FORWARD", "type", "filter", "hook", "forward",
                "policy", "accept"));
        ((ObjectNode) base.get("chain")).put("prio", 0);
        items.add(base);
        for (NftRule r : rules) {
            ObjectNode rule = obj("rule", Map.of("chain", "cali-pi-a"));
            ((ObjectNode) rule.get("rule")).set("expr", JSON.valueToTree(r.expr()));
            items.add(rule);
        }
        ObjectNode jump = obj("rule", Map.of("chain", "filter-FORWARD"));
        ((ObjectNode) jump.get("rule")).set("expr", JSON.valueToTree(List.of(NftExpr.jump("cali-pi-a"))));
        items.add(jump);
        ObjectNode set = obj("set", Map.of("name", "cali40a", "type", "ipv4_addr"));
        ((ObjectNode) set.get("set")).putArray("flags").add("interval");
        ((ObjectNode) set.get("set")).putArray("elem").add(member);
        items.add(set);
        return items;
    }

    private static ObjectNode obj(String kind, Map<String, String> fields) {
        ObjectNode o = JSON.createObjectNode();
        ObjectNode body = o.putObject(kind).put("family", "inet").put("table", "calico");
        fields.forEach(body::put);
        return o;
    }

    private static JsonNode doc(List<ObjectNode> items) {
        ObjectNode d = JSON.createObjectNode();
        ArrayNode list = d.putArray("nftables");
        items.forEach(list::add);
        return d;
    }

    private static List<String> ops(NftVerifier.Repair r) {
        List<String> out = new ArrayList<>();
        for (ObjectNode cmd : r.batch().commands()) {
            String verb = cmd.fieldNames().next();
            JsonNode body = cmd.get(verb);
            String kind = body.fieldNames().next();
            JsonNode o = body.get(kind);
            out.add(verb + " " + kind + " " + o.get(kind.equals("rule") ? "chain" : "name").asText());
        }
        return out;
    }
}
