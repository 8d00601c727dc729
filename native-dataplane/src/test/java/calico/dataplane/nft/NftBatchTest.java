package calico.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The JSON the builders produce, and the errors bad input gets (no kernel needed). */
class NftBatchTest {

    private static final TableRef T = TableRef.inet("calico");

    @Test
    void batchIsOneDocumentWithEveryCommandInOrder() throws Exception {
        NftBatch b = new NftBatch().addTable(T)
                .addChain(T, "fwd", new BaseChain("filter", "forward", -10, "drop"))
                .addSet(T, "np", SetSpec.namedPorts(6));
        assertThat(new ObjectMapper().readTree(b.toString())).isEqualTo(new ObjectMapper().readTree("""
                {"nftables":[
                 {"add":{"table":{"family":"inet","name":"calico"}}},
                 {"add":{"chain":{"family":"inet","table":"calico","name":"fwd","type":"filter","hook":"forward","prio":-10,"policy":"drop"}}},
                 {"add":{"set":{"family":"inet","table":"calico","name":"np","type":["ipv6_addr","inet_proto","inet_service"]}}}
                ]}"""));
    }

    @Test
    void commandsAreCopiesSoCallersCannotChangeTheBatch() {
        NftBatch b = new NftBatch().addTable(T);
        b.commands().get(0).removeAll();
        assertThat(b.commands().get(0).toString()).contains("calico");
    }

    @Test
    void aRuleFromSerialisedExpressionsIsTheSameCommandAsFromTheTrees() {
        List<com.fasterxml.jackson.databind.node.ObjectNode> expr = List.of(NftExpr.iifname("cali1"),
                NftExpr.jump("cali-fw-cali1"));
        String comment = "quote \" and back\\slash";
        NftBatch fromTrees = new NftBatch().addRule(T, "c", expr, comment).addRule(T, "c", expr);
        NftBatch fromText = new NftBatch().addRule(T, "c", NftBatch.Exprs.of(expr), comment)
                .addRule(T, "c", NftBatch.Exprs.of(expr), null);
        assertThat(fromText.toJson()).isEqualTo(fromTrees.toJson());
        assertThat(fromText.commands()).isEqualTo(fromTrees.commands());
    }

    @Test
    void nodesChangedAfterTheyWereAddedDoNotChangeTheBatch() {
        com.fasterxml.jackson.databind.node.ObjectNode jump = NftExpr.jump("a");
        NftBatch b = new NftBatch().addRule(T, "c", List.of(jump));
        String before = b.toJson();
        jump.removeAll();
        assertThat(b.toJson()).isEqualTo(before);
    }

    @Test
    void serialisedExpressionsMustHoldAtLeastOneExpression() {
        assertThatThrownBy(() -> NftBatch.Exprs.of(List.of())).hasMessageStartingWith("rule expr:");
        assertThatThrownBy(() -> new NftBatch.Exprs("[]")).hasMessageStartingWith("rule expr:");
        assertThatThrownBy(() -> new NftBatch().addRule(T, "bad name", NftBatch.Exprs.of(List.of(NftExpr.accept())), null))
                .hasMessageStartingWith("chain name:");
    }

    @Test
    void elementsNormaliseLikeNftListsThem() {
        assertThat(NftElem.cidr("10.0.0.0/8").toString()).isEqualTo("{\"prefix\":{\"addr\":\"10.0.0.0\",\"len\":8}}");
        assertThat(NftElem.cidr("10.1.2.3/32").asText()).isEqualTo("10.1.2.3");
        assertThat(NftElem.cidr("fd00::1/128").asText()).isEqualTo("fd00::1");
        assertThat(NftElem.port(new PortRange(10, 20)).toString()).isEqualTo("{\"range\":[10,20]}");
    }

    @Test
    void badInputNamesTheFieldAndReason() {
        assertThatThrownBy(() -> new TableRef("inet6", "x")).hasMessageStartingWith("family:");
        assertThatThrownBy(() -> TableRef.inet("bad name")).hasMessageStartingWith("table name:");
        assertThatThrownBy(() -> new NftBatch().addChain(T, "")).hasMessageStartingWith("chain name:");
        assertThatThrownBy(() -> new BaseChain("filter", "sideways", 0, "accept")).hasMessageStartingWith("chain hook:");
        assertThatThrownBy(() -> new NftBatch().addRule(T, "c", List.of())).hasMessageStartingWith("rule expr:");
        assertThatThrownBy(() -> new NftBatch().deleteRule(T, "c", 0)).hasMessageStartingWith("rule handle:");
        assertThatThrownBy(() -> NftElem.cidr("10.0.0.0/33")).hasMessageContaining("prefix length must be 0..32");
        assertThatThrownBy(() -> NftElem.cidr("example.com")).hasMessageStartingWith("address: not an IP literal");
        assertThatThrownBy(() -> new PortRange(90, 80)).hasMessageStartingWith("port range:");
        assertThatThrownBy(() -> NftExpr.markMatches(0xff, 0x100)).hasMessageStartingWith("mark value:");
        assertThatThrownBy(() -> NftExpr.ctState("bogus")).hasMessageStartingWith("ct state:");
        assertThatThrownBy(() -> NftExpr.iifname("a-very-long-interface")).hasMessageStartingWith("interface name:");
        assertThatThrownBy(() -> SetSpec.cidrs(5)).hasMessageStartingWith("ipVersion:");
    }

    @Test
    void namesAreCheckedExactlyAsTheirPatternSays() {
        java.util.regex.Pattern name = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_./:-]{0,254}");
        java.util.Random r = new java.util.Random(7);
        String alphabet = "aZ_09./:- \u00e9@";
        List<String> samples = new java.util.ArrayList<>(List.of("", "a", "_", "1a", "cali-pi-default/ns1/np1", "a b",
                "x".repeat(255), "x".repeat(256), "-a", "a-", "é"));
        for (int i = 0; i < 2_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int k = r.nextInt(6); k >= 0; k--) {
                b.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            samples.add(b.toString());
        }
        for (String s : samples) {
            boolean ok = true;
            try {
                NftBatch.requireName("chain name", s);
            } catch (IllegalArgumentException e) {
                ok = false;
                assertThat(e).hasMessageStartingWith("chain name: must match");
            }
            assertThat(ok).as("'%s'", s).isEqualTo(name.matcher(s).matches());
        }
    }

    @Test
    void aBatchKnowsWhetherItEditsElementsOfSetsItDoesNotAdd() {
        SetSpec v4 = SetSpec.cidrs(4);
        assertThat(new NftBatch().addSet(T, "s", v4).addElements(T, "s", List.of(NftElem.cidr("10.0.0.0/8")))
                .editsElementsOfOtherSets()).isFalse();
        assertThat(new NftBatch().addElements(T, "s", List.of(NftElem.cidr("10.0.0.0/8")))
                .editsElementsOfOtherSets()).isTrue();
        assertThat(new NftBatch().addSet(T, "s", v4).deleteElements(T, "s", List.of(NftElem.cidr("10.0.0.0/8")))
                .editsElementsOfOtherSets()).isTrue();
        assertThat(new NftBatch().addSet(T, "s", v4).addElements(T, "other", List.of(NftElem.cidr("10.0.0.0/8")))
                .editsElementsOfOtherSets()).isTrue();
        assertThat(new NftBatch().addVerdictMap(T, "m", SetSpec.of("ifname")).addMapElements(T, "m",
                java.util.Map.of(com.fasterxml.jackson.databind.node.TextNode.valueOf("cali1"), NftExpr.jump("c"))))
                .matches(b -> !b.editsElementsOfOtherSets());
        com.fasterxml.jackson.databind.node.ObjectNode raw = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance
                .objectNode();
        raw.putObject("add").putObject("element").put("family", "inet").put("table", T.name()).put("name", "x")
                .putArray("elem").add("10.0.0.1");
        assertThat(new NftBatch().raw(raw).editsElementsOfOtherSets()).isTrue();
    }

    @Test
    void ipv4AddressesAreFourDecimalPartsAsNftReadsThem() {
        java.util.regex.Pattern quad = java.util.regex.Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
        java.util.Random r = new java.util.Random(3);
        for (int i = 0; i < 3_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int k = r.nextInt(16); k >= 0; k--) {
                b.append("0123456789..x".charAt(r.nextInt(13)));
            }
            String s = i % 3 == 0 ? r.nextInt(300) + "." + r.nextInt(300) + "." + r.nextInt(300) + "." + r.nextInt(300)
                    : b.toString();
            java.util.regex.Matcher m = quad.matcher(s);
            boolean valid = m.matches();
            for (int g = 1; valid && g <= 4; g++) {
                valid = Integer.parseInt(m.group(g)) <= 255;
            }
            boolean ours;
            try {
                NftElem.cidr(s);
                ours = true;
            } catch (IllegalArgumentException e) {
                ours = false;
                assertThat(e).hasMessageStartingWith("address: not an IP literal");
            }
            assertThat(ours).as("'%s'", s).isEqualTo(valid);
        }
        assertThat(NftElem.cidr("fd00::1/128").asText()).isEqualTo("fd00::1");
    }
}
