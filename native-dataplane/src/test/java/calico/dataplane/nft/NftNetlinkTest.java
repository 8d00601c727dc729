package calico.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.NftablesSocket;
import calico.dataplane.testing.NetNs;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Our netlink encoding of rules against libnftables' own, in the kernel: the same batch goes to
 * one namespace as our messages and to another through libnftables, and {@code nft list} of the
 * two tables must be identical (libnftables decodes what the kernel holds, so any byte we send
 * differently from it shows). Every expression kind {@link NftNetlink} encodes is in {@link #RULES}.
 */
class NftNetlinkTest {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final TableRef CALICO = TableRef.inet("calico");

    /** Rules as libnftables JSON statements, one array per rule; each is encoded by us. */
    static final List<String> RULES = List.of(
            // nfproto, l4proto by number, a named-set lookup, one port, a mark set, return
            """
            [{"match":{"op":"==","left":{"meta":{"key":"nfproto"}},"right":"ipv4"}},
             {"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":6}},
             {"match":{"op":"==","left":{"payload":{"protocol":"ip","field":"saddr"}},"right":"@cali40s"}},
             {"match":{"op":"==","left":{"payload":{"protocol":"th","field":"dport"}},"right":80}},
             {"mangle":{"key":{"meta":{"key":"mark"}},"value":{"|":[{"meta":{"key":"mark"}},65536]}}},
             {"return":null}]""",
            // nfproto added by us before an IPv4 match; a byte-aligned prefix
            """
            [{"match":{"op":"==","left":{"payload":{"protocol":"ip","field":"daddr"}},"right":{"prefix":{"addr":"10.0.0.0","len":8}}}},
             {"accept":null}]""",
            // an unaligned prefix (mask), negated; a bare address; IPv6 prefixes
            """
            [{"match":{"op":"!=","left":{"payload":{"protocol":"ip","field":"daddr"}},"right":{"prefix":{"addr":"10.0.16.0","len":20}}}},
             {"match":{"op":"==","left":{"payload":{"protocol":"ip","field":"saddr"}},"right":"10.1.2.3"}},
             {"drop":null}]""",
            """
            [{"match":{"op":"==","left":{"payload":{"protocol":"ip6","field":"saddr"}},"right":{"prefix":{"addr":"2001:db8::","len":32}}}},
             {"match":{"op":"==","left":{"payload":{"protocol":"ip6","field":"daddr"}},"right":{"prefix":{"addr":"fd00::","len":60}}}},
             {"accept":null}]""",
            // anonymous interval sets: nets (negated) and ports; a plain anonymous set of ports
            """
            [{"match":{"op":"!=","left":{"payload":{"protocol":"ip","field":"daddr"}},"right":{"set":[{"prefix":{"addr":"10.0.0.0","len":8}},{"prefix":{"addr":"192.168.1.0","len":24}},"192.168.2.1"]}}},
             {"drop":null}]""",
            """
            [{"match":{"op":"==","left":{"payload":{"protocol":"ip6","field":"saddr"}},"right":{"set":[{"prefix":{"addr":"fd00::","len":16}},"2001:db8::1"]}}},
             {"accept":null}]""",
            """
            [{"match":{"op":"==","left":{"meta":{"key":"l4proto"}},"right":6}},
             {"match":{"op":"==","left":{"payload":{"protocol":"th","field":"dport"}},"right":{"set":[80,443,{"range":[1000,2000]}]}}},
             {"accept":null}]""",
            """
            [{"match":{"op":"!=","left":{"payload":{"protocol":"th","field":"sport"}},"right":{"set":[53,5353]}}},
             {"accept":null}]""",
            """
            [{"match":{"op":"==","left":{"payload":{"protocol":"th","field":"dport"}},"right":{"set":[{"range":[0,10]},{"range":[60000,65535]}]}}},
             {"accept":null}]""",
            // port ranges: in (two comparisons) and not in (a range expression)
            """
            [{"match":{"op":"==","left":{"payload":{"protocol":"th","field":"dport"}},"right":{"range":[1000,2000]}}},
             {"match":{"op":"!=","left":{"payload":{"protocol":"th","field":"sport"}},"right":{"range":[3000,3100]}}},
             {"accept":null}]""",
            // mark tests and a mark clear
            """
            [{"match":{"op":"==","left":{"&":[{"meta":{"key":"mark"}},65536]},"right":65536}},
             {"match":{"op":"==","left":{"&":[{"meta":{"key":"mark"}},196608]},"right":0}},
             {"mangle":{"key":{"meta":{"key":"mark"}},"value":{"&":[{"meta":{"key":"mark"}},4294770687]}}}]""",
            // named-port sets (address . protocol . port), both families, negated
            """
            [{"match":{"op":"==","left":{"concat":[{"payload":{"protocol":"ip","field":"daddr"}},{"meta":{"key":"l4proto"}},{"payload":{"protocol":"th","field":"dport"}}]},"right":"@cali40np"}},
             {"accept":null}]""",
            """
            [{"match":{"op":"!=","left":{"concat":[{"payload":{"protocol":"ip6","field":"saddr"}},{"meta":{"key":"l4proto"}},{"payload":{"protocol":"th","field":"sport"}}]},"right":"@cali60np"}},
             {"drop":null}]""",
            // a negated lookup, l4proto negated, interface names (prefix and exact), jump and goto
            """
            [{"match":{"op":"!=","left":{"payload":{"protocol":"ip6","field":"daddr"}},"right":"@cali60s"}},
             {"match":{"op":"!=","left":{"meta":{"key":"l4proto"}},"right":17}},
             {"jump":{"target":"cali-pi-default/ns1/np.1"}}]""",
            """
            [{"match":{"op":"==","left":{"meta":{"key":"iifname"}},"right":"cali*"}},
             {"match":{"op":"==","left":{"meta":{"key":"oifname"}},"right":"eth0"}},
             {"match":{"op":"==","left":{"meta":{"key":"nfproto"}},"right":"ipv6"}},
             {"goto":{"target":"c2"}}]""",
            // conntrack state tests (an endpoint chain's first rules): one state and two
            """
            [{"match":{"op":"in","left":{"ct":{"key":"state"}},"right":["established","related"]}},
             {"accept":null}]""",
            """
            [{"match":{"op":"in","left":{"ct":{"key":"state"}},"right":["invalid"]}},
             {"drop":null}]""",
            // logs
            """
            [{"log":{"prefix":"calico-packet: ","level":"notice"}}]""",
            """
            [{"match":{"op":"==","left":{"&":[{"meta":{"key":"mark"}},65536]},"right":65536}},
             {"log":{"prefix":"API0|np/prod/web","group":1}}]""",
            // anonymous sets reaching the top of their key space: no end element, the start marked open
            """
            [{"match":{"op":"==","left":{"payload":{"protocol":"th","field":"sport"}},"right":{"set":[22,{"range":[1024,65535]}]}}},
             {"match":{"op":"!=","left":{"payload":{"protocol":"ip","field":"daddr"}},
               "right":{"set":[{"prefix":{"addr":"10.0.0.0","len":8}},{"prefix":{"addr":"240.0.0.0","len":4}}]}}},
             {"accept":null}]""");

    /** A flag test the encoder leaves to libnftables. */
    private static final String CT_STATUS_DNAT = """
            [{"match":{"op":"in","left":{"ct":{"key":"status"}},"right":"dnat"}},{"accept":null}]""";

    private NetNs ours;
    private NetNs theirs;

    @BeforeEach
    void namespaces() {
        ours = NetNs.create("nl-ours");
        theirs = NetNs.create("nl-theirs");
    }

    @AfterEach
    void deleteNamespaces() {
        ours.close();
        theirs.close();
    }

    @Test
    void everyRuleWeEncodeListsAsLibnftablesOwnEncodingOfIt() throws Exception {
        NftBatch rules = new NftBatch();
        for (String r : RULES) {
            rules.addRule(CALICO, "c", exprs(r), null);
        }
        rules.addRule(CALICO, "c", List.of(NftExpr.accept()), "a comment: felix's rules carry one");
        both(skeleton());
        sendBoth(rules);
        String listed = ours.exec("nft", "list", "table", "inet", "calico");
        assertThat(listed).isEqualTo(theirs.exec("nft", "list", "table", "inet", "calico"));
        assertThat(raw(ours)).isEqualTo(raw(theirs));
        // Names of our own (found by name), where libnftables' template makes the kernel number them.
        assertThat(ours.exec("nft", "--debug=netlink", "list", "table", "inet", "calico"))
                .containsPattern("lookup reg 1 set __s[0-9a-f]{11,12}_1 ").doesNotContain("__set0");
        assertThat(listed).contains("tcp dport { 80, 443, 1000-2000 }", "ip daddr != { 10.0.0.0/8, 192.168.1.0/24, 192.168.2.1 }",
                "comment \"a comment: felix's rules carry one\"");
        assertThat(rules(listed)).hasSize(RULES.size() + 1);
    }

    @Test
    void rulesGivenAsTextAndRepeatedInABatchListAsLibnftablesMakesThem() throws Exception {
        // As a driver sends them (NftBatch.Exprs): the same statements in two chains (c3 reached from
        // no base chain, so its jumps make no loop), each encoded once per batch.
        NftBatch rules = new NftBatch();
        for (String chain : List.of("c", "c3")) {
            for (String r : RULES) {
                rules.addRule(CALICO, chain, NftBatch.Exprs.of(exprs(r)), "the same in two chains");
            }
        }
        both(skeleton().addChain(CALICO, "c3"));
        sendBoth(rules);
        String listed = ours.exec("nft", "list", "table", "inet", "calico");
        assertThat(listed).isEqualTo(theirs.exec("nft", "list", "table", "inet", "calico"));
        assertThat(rules(listed)).hasSize(RULES.size());
        assertThat(ours.exec("nft", "list", "chain", "inet", "calico", "c3").lines()
                .filter(l -> l.contains("the same in two chains")).count()).isEqualTo(RULES.size());
    }

    @Test
    void aBatchLargerThanTheSocketsFirstSendBufferGoesWholeAsOurMessages() throws Exception {
        // The bench's 5x catch-up: one batch of ~87,000 commands was refused (EMSGSIZE) and took
        // libnftables 10 s. The socket asks for 8 MiB, which the kernel doubles: 100,000 rules with
        // comments are ~20 MiB, past it.
        ours.run(() -> applyWithLibnftables(skeleton()));
        int count = 100_000;
        NftBatch big = new NftBatch();
        NftBatch.Exprs accept = NftBatch.Exprs.of(List.of(NftExpr.accept()));
        for (int i = 0; i < count; i++) {
            big.addRule(CALICO, "c", accept, String.format("rule %06d of a batch larger than one send buffer: %s", i,
                    "x".repeat(60)));
        }
        long bytes = NftNetlink.encode(big).stream().mapToLong(m -> m.payload().length + 16).sum();
        assertThat(bytes).as("the batch's messages").isGreaterThan(16L << 20);
        ours.run(() -> {
            try (Nftables nft = Nftables.open(true)) {
                nft.apply(big);
                assertThat(nft.netlinkBatches()).as("sent as our own messages, not through libnftables").isEqualTo(1);
            }
        });
        assertThat(ours.exec("nft", "list", "chain", "inet", "calico", "c").lines()
                .filter(l -> l.contains("of a batch larger than one send buffer")).count()).isEqualTo(count);
    }

    @Test
    void aChainIsFlushedAndRefilledAndARuleDeletedByHandle() throws Exception {
        both(skeleton());
        NftBatch fill = new NftBatch();
        RULES.subList(0, 5).forEach(r -> fill.addRule(CALICO, "c", exprs(r), null));
        both(fill);
        NftBatch refill = new NftBatch().flushChain(CALICO, "c");
        RULES.subList(5, 9).forEach(r -> refill.addRule(CALICO, "c", exprs(r), null));
        sendBoth(refill);
        assertThat(ours.exec("nft", "list", "table", "inet", "calico"))
                .isEqualTo(theirs.exec("nft", "list", "table", "inet", "calico"));
        long handle = firstHandle(ours);
        long theirHandle = firstHandle(theirs);
        ours.run(() -> send(new NftBatch().deleteRule(CALICO, "c", handle)));
        theirs.run(() -> applyWithLibnftables(new NftBatch().deleteRule(CALICO, "c", theirHandle)));
        String listed = ours.exec("nft", "list", "table", "inet", "calico");
        assertThat(listed).isEqualTo(theirs.exec("nft", "list", "table", "inet", "calico"));
        assertThat(rules(listed)).hasSize(3);
    }

    @Test
    void chainsSetsAndMapsAreDeclaredFilledAndRemovedAsLibnftablesDoesIt() throws Exception {
        both(skeleton());
        // New chains, named sets of every shape felix programs with their elements (touching /32s
        // and nets: no merging in a named set; one starting at 0, so no leading interval end), a
        // verdict map with elements, and rules naming them, in one batch.
        NftBatch add = new NftBatch().addChain(CALICO, "cali-pi-new").addChain(CALICO, "cali-tw-new");
        add.raw(set("cali40new", "\"ipv4_addr\"", true, "\"10.0.0.1\",\"10.0.0.2\",\"10.0.0.3\","
                + "{\"prefix\":{\"addr\":\"10.1.0.0\",\"len\":16}},{\"prefix\":{\"addr\":\"10.0.0.4\",\"len\":30}},"
                + "\"255.255.255.255\""));
        add.raw(set("cali40zero", "\"ipv4_addr\"", true, "{\"prefix\":{\"addr\":\"0.0.0.0\",\"len\":8}},\"192.168.0.1\""));
        add.raw(set("cali60new", "\"ipv6_addr\"", true, "{\"prefix\":{\"addr\":\"fd00::\",\"len\":64}},\"fd00:0:0:1::5\","
                + "\"fd00:0:0:1::6\""));
        add.raw(set("cali40plain", "\"ipv4_addr\"", false, "\"10.2.0.1\",\"10.2.0.2\""));
        add.raw(set("cali40npnew", "[\"ipv4_addr\",\"inet_proto\",\"inet_service\"]", false,
                "{\"concat\":[\"10.0.0.1\",\"tcp\",8080]},{\"concat\":[\"10.0.0.2\",\"udp\",53]}"));
        add.raw(set("cali60npnew", "[\"ipv6_addr\",\"inet_proto\",\"inet_service\"]", false,
                "{\"concat\":[\"fd00::1\",\"sctp\",9]}"));
        add.addVerdictMap(CALICO, "cali-tw-dispatch-map", SetSpec.of("ifname"))
                .addMapElements(CALICO, "cali-tw-dispatch-map", java.util.Map.of(NftElem.ifname("cali1234"),
                        NftExpr.goTo("cali-tw-new"), NftElem.ifname("cali5678"), NftExpr.jump("cali-pi-new")));
        add.addRule(CALICO, "cali-pi-new", exprs("""
                [{"match":{"op":"==","left":{"payload":{"protocol":"ip","field":"saddr"}},"right":"@cali40new"}},{"accept":null}]"""), null)
                .addRule(CALICO, "cali-pi-new", exprs("""
                [{"match":{"op":"==","left":{"concat":[{"payload":{"protocol":"ip","field":"daddr"}},{"meta":{"key":"l4proto"}},
                 {"payload":{"protocol":"th","field":"dport"}}]},"right":"@cali40npnew"}},{"drop":null}]"""), null)
                .addRule(CALICO, "cali-tw-new", List.of(NftExpr.jump("cali-pi-new")), null);
        sendBoth(add);
        String listed = ours.exec("nft", "list", "table", "inet", "calico");
        assertThat(listed).isEqualTo(theirs.exec("nft", "list", "table", "inet", "calico"));
        // The kernel's elements as it holds them, interval ends included (the listing above merges them).
        assertThat(raw(ours)).isEqualTo(raw(theirs)).contains("00000000  : 1 [end]");
        assertThat(listed).contains("10.0.0.1", "10.1.0.0/16", "fd00::/64", "10.0.0.1 . tcp . 8080", "fd00::1 . sctp . 9",
                "\"cali1234\" : goto cali-tw-new", "0.0.0.0/8");
        // A set refilled (flushed, then added to as an existing set: felix's member edit), more members
        // added to another, and what goes removed: a chain, a set, a map.
        NftBatch edit = new NftBatch().flushSet(CALICO, "cali40new");
        edit.raw(set("cali40new", "\"ipv4_addr\"", true, "\"10.0.0.2\",{\"prefix\":{\"addr\":\"10.9.0.0\",\"len\":24}}"));
        edit.raw(set("cali60new", "\"ipv6_addr\"", true, "\"fd00:0:0:2::1\""));
        edit.raw(set("cali40npnew", "[\"ipv4_addr\",\"inet_proto\",\"inet_service\"]", false,
                "{\"concat\":[\"10.0.0.3\",\"tcp\",80]}"));
        edit.flushChain(CALICO, "cali-tw-new").flushMap(CALICO, "cali-tw-dispatch-map")
                .deleteMap(CALICO, "cali-tw-dispatch-map").deleteChain(CALICO, "cali-tw-new")
                .deleteSet(CALICO, "cali40plain");
        sendBoth(edit);
        listed = ours.exec("nft", "list", "table", "inet", "calico");
        assertThat(listed).isEqualTo(theirs.exec("nft", "list", "table", "inet", "calico"));
        assertThat(raw(ours)).isEqualTo(raw(theirs));
        assertThat(listed).contains("10.9.0.0/24", "fd00:0:0:2::1", "10.0.0.3 . tcp . 80")
                .doesNotContain("10.1.0.0/16", "cali-tw-new", "cali40plain", "dispatch-map");
    }

    @Test
    void aRefusedBatchOfNewChainsAndSetsChangesNothing() throws Exception {
        both(skeleton());
        NftBatch bad = new NftBatch().addChain(CALICO, "cali-pi-new");
        bad.raw(set("cali40new", "\"ipv4_addr\"", true, "\"10.0.0.1\""));
        bad.addRule(CALICO, "cali-pi-new", List.of(NftExpr.jump("no-such-chain")), null);
        refusedAsOurMessages(bad, 4, 3);
    }

    /** {@code bad}, {@code messages} messages of ours, is refused at message {@code refused} and changes nothing. */
    private void refusedAsOurMessages(NftBatch bad, int messages, int refused) throws Exception {
        String before = ours.exec("nft", "list", "ruleset");
        List<NftablesSocket.Message> encoded = NftNetlink.encode(bad);
        assertThat(encoded).hasSize(messages);
        assertThatThrownBy(() -> ours.run(() -> {
            try (NftablesSocket s = new NftablesSocket()) {
                s.commit(encoded);
            }
        })).isInstanceOf(NetlinkException.class).hasMessageContaining("message " + refused).hasMessageContaining("ENOENT");
        assertThat(ours.exec("nft", "list", "ruleset")).isEqualTo(before);
    }

    /** {@return the table with its rules' expressions and sets' elements as the kernel holds them} */
    private static String raw(NetNs ns) {
        // A hash set dumps its elements in an order of its own: sorted within each set here.
        StringBuilder out = new StringBuilder();
        List<String> elements = new ArrayList<>();
        for (String line : ns.exec("nft", "--debug=netlink", "list", "table", "inet", "calico").split("\n")) {
            if (line.strip().startsWith("element ")) {
                elements.add(line);
                continue;
            }
            elements.stream().sorted().forEach(e -> out.append(e).append('\n'));
            elements.clear();
            out.append(line).append('\n');
        }
        elements.stream().sorted().forEach(e -> out.append(e).append('\n'));
        return anonymousSetsNumbered(out.toString());
    }

    /**
     * Anonymous sets renamed {@code anon<k>} in the order they first appear: the kernel numbers
     * libnftables' ({@code __set%d}), ours carry names of their own (NftNetlink's Batch).
     */
    static String anonymousSetsNumbered(String listing) {
        Map<String, String> names = new HashMap<>();
        Matcher m = Pattern.compile("\\b__s(?:et\\d+|[0-9a-f]{11,12}_\\d+)\\b").matcher(listing);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, names.computeIfAbsent(m.group(), n -> "anon" + names.size()));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** {@code add set} with elements, as felix's driver writes it (its type as JSON text) */
    private static ObjectNode set(String name, String type, boolean interval, String elements) {
        try {
            return (ObjectNode) MAPPER.readTree("{\"add\":{\"set\":{\"family\":\"inet\",\"table\":\"calico\",\"name\":\"" + name
                    + "\",\"type\":" + type + (interval ? ",\"flags\":[\"interval\"]" : "") + ",\"elem\":[" + elements + "]}}}");
        } catch (Exception e) {
            throw new IllegalArgumentException(name, e);
        }
    }

    @Test
    void aBatchTheKernelRefusesChangesNothingAndNamesTheMessage() throws Exception {
        both(skeleton());
        String before = ours.exec("nft", "list", "ruleset");
        NftBatch bad = new NftBatch().flushChain(CALICO, "c")
                .addRule(CALICO, "c", exprs(RULES.get(0)), null)
                .addRule(CALICO, "c", List.of(NftExpr.jump("no-such-chain")), null);
        refusedAsOurMessages(bad, 3, 2);
        // Through Nftables with netlink on: libnftables gets the batch again and names the command.
        assertThatThrownBy(() -> ours.run(() -> {
            try (Nftables nft = Nftables.open(true)) {
                nft.apply(bad);
            }
        })).isInstanceOf(NftablesException.class).satisfies(e -> assertThat(((NftablesException) e).failedIndex()).isEqualTo(2));
        assertThat(ours.exec("nft", "list", "ruleset")).isEqualTo(before);
    }

    @Test
    void formsWeDoNotEncodeLeaveTheBatchToLibnftables() throws Exception {
        assertThat(NftNetlink.encode(new NftBatch().addRule(CALICO, "c", exprs(CT_STATUS_DNAT), null))).isNull();
        assertThat(NftNetlink.encode(new NftBatch().addRule(CALICO, "c", List.of(NftExpr.counter(), NftExpr.accept()), null)))
                .isNull();
        assertThat(NftNetlink.encode(new NftBatch().addChain(CALICO, "x", BaseChain.filter("input", "accept")))).isNull();
        // elements of a set this batch does not declare: its shape is unknown here
        assertThat(NftNetlink.encode(new NftBatch().addElements(CALICO, "cali40s", List.of(NftElem.cidr("10.0.0.1")))))
                .isNull();
        assertThat(NftNetlink.encode(new NftBatch().deleteElements(CALICO, "cali40s", List.of(NftElem.cidr("10.0.0.1")))))
                .isNull();
        // overlapping members: libnftables names the conflict
        assertThat(NftNetlink.encode(new NftBatch().raw(set("o", "\"ipv4_addr\"", true,
                "{\"prefix\":{\"addr\":\"10.0.0.0\",\"len\":8}},\"10.0.0.1\"")))).isNull();
        // touching intervals: nft merges them its own way
        assertThat(NftNetlink.encode(new NftBatch().addRule(CALICO, "c", exprs("""
                [{"match":{"op":"==","left":{"payload":{"protocol":"th","field":"dport"}},"right":{"set":[{"range":[1,10]},{"range":[11,20]}]}}},{"accept":null}]"""),
                null))).isNull();
        // and Nftables still applies such a batch, through libnftables
        both(skeleton());
        ours.run(() -> {
            try (Nftables nft = Nftables.open(true)) {
                nft.apply(new NftBatch().addRule(CALICO, "c", exprs(CT_STATUS_DNAT), null)
                        .addRule(CALICO, "c", exprs(RULES.get(6)), null));
            }
        });
        assertThat(ours.exec("nft", "list", "chain", "inet", "calico", "c")).contains("ct status dnat accept",
                "tcp dport { 80, 443, 1000-2000 } accept");
    }

    private static NftBatch skeleton() {
        return new NftBatch().addTable(CALICO)
                .addSet(CALICO, "cali40s", SetSpec.cidrs(4))
                .addSet(CALICO, "cali60s", SetSpec.cidrs(6))
                .addSet(CALICO, "cali40np", SetSpec.namedPorts(4))
                .addSet(CALICO, "cali60np", SetSpec.namedPorts(6))
                .addChain(CALICO, "c2").addChain(CALICO, "cali-pi-default/ns1/np.1").addChain(CALICO, "c")
                .addChain(CALICO, "filter-FORWARD", BaseChain.filter("forward", "accept"))
                .addRule(CALICO, "filter-FORWARD", List.of(NftExpr.jump("c")), null);
    }

    /** {@return a rule's statements from their JSON array} (the bench's too) */
    static List<ObjectNode> exprs(String json) {
        try {
            List<ObjectNode> out = new ArrayList<>();
            MAPPER.readTree(json).forEach(n -> out.add((ObjectNode) n));
            return out;
        } catch (Exception e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    private void both(NftBatch batch) {
        ours.run(() -> applyWithLibnftables(batch));
        theirs.run(() -> applyWithLibnftables(batch));
    }

    /** {@code batch} to our namespace as our messages, to theirs through libnftables. */
    private void sendBoth(NftBatch batch) {
        ours.run(() -> send(batch));
        theirs.run(() -> applyWithLibnftables(batch));
    }

    private static void send(NftBatch batch) {
        List<NftablesSocket.Message> messages = NftNetlink.encode(batch);
        assertThat(messages).as("every command of %s has a netlink form", batch).isNotNull();
        try (NftablesSocket s = new NftablesSocket()) {
            s.commit(messages);
        }
    }

    private static void applyWithLibnftables(NftBatch batch) {
        try (Nftables nft = Nftables.open()) {
            nft.apply(batch);
        }
    }

    private static long firstHandle(NetNs ns) throws Exception {
        JsonNode doc = MAPPER.readTree(ns.exec("nft", "-j", "-a", "list", "chain", "inet", "calico", "c"));
        for (JsonNode n : doc.path("nftables")) {
            if (n.has("rule")) {
                return n.get("rule").get("handle").asLong();
            }
        }
        throw new AssertionError("no rule in chain c");
    }

    private static List<String> rules(String listing) {
        String chain = listing.substring(listing.indexOf("chain c {"));
        chain = chain.substring(chain.indexOf('\n') + 1, chain.indexOf("\n\t}"));
        return chain.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
    }
}
