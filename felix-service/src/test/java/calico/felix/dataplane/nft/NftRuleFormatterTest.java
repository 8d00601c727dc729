package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.testing.NetNs;
import calico.felix.dataplane.nft.NftRuleFormatter.NftChain;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.rules.GenericChain;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Match;
import calico.felix.dataplane.rules.Match.Dir;
import calico.felix.dataplane.rules.Ruleset.Table;
import calico.felix.dataplane.rules.Target;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Each match and target variant as JSON, and the kernel's verdict on it: every formatted rule
 * is also applied (through a dry run, then for real) in a test namespace and read back.
 */
class NftRuleFormatterTest {

    private final List<NetNs> namespaces = new ArrayList<>();

    @AfterEach
    void tearDown() {
        namespaces.forEach(NetNs::close);
    }

    private static String json(Match m) {
        com.fasterxml.jackson.databind.node.ArrayNode a = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
        NftRuleFormatter.match(m).forEach(a::add);
        return a.toString();
    }

    /** A rule keeps its text and what it names, not its tree: both found once, the tree parsed back on demand. */
    @Test
    void aRuleKnowsTheSetsAndChainsItNamesAndGivesItsStatementsBack() {
        NftRule r = new NftRule(List.of(
                calico.dataplane.nft.NftExpr.match("==", calico.dataplane.nft.NftExpr.payload("ip", "saddr"),
                        com.fasterxml.jackson.databind.node.TextNode.valueOf("@cali40src")),
                calico.dataplane.nft.NftExpr.jump("cali-pi-web")), "c");
        assertThat(r.refers().sets()).containsExactly("cali40src");
        assertThat(r.refers().chains()).containsExactly("cali-pi-web");
        assertThat(new NftRule(r.expr(), "c")).isEqualTo(r);
        assertThat(new NftRule(List.of(calico.dataplane.nft.NftExpr.accept()), null).refers())
                .isEqualTo(NftRuleFormatter.Refers.NONE);
    }

    @Test
    void familyAndInterfaces() {
        assertThat(json(new Match.Family(IpFamily.V6)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"nfproto\"}},\"right\":\"ipv6\"}}]");
        assertThat(json(new Match.Interface(true, "cali", true)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"iifname\"}},\"right\":\"cali*\"}}]");
        assertThat(json(new Match.Interface(false, "cali1234", false)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"oifname\"}},\"right\":\"cali1234\"}}]");
    }

    @Test
    void protocolsByNumberAndNegated() {
        assertThat(json(new Match.Protocol("TCP", false)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"meta\":{\"key\":\"l4proto\"}},\"right\":6}}]");
        assertThat(json(new Match.Protocol("ipv6-icmp", true)))
                .isEqualTo("[{\"match\":{\"op\":\"!=\",\"left\":{\"meta\":{\"key\":\"l4proto\"}},\"right\":58}}]");
        assertThat(json(new Match.Protocol("99", false))).contains("\"right\":99");
        assertThatThrownBy(() -> json(new Match.Protocol("300", false))).hasMessageContaining("Protocol");
    }

    @Test
    void icmpTypeCodeAndNegatedPair() {
        assertThat(json(new Match.Icmp(IpFamily.V4, 8, null, false)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"payload\":{\"protocol\":\"icmp\",\"field\":\"type\"}},\"right\":8}}]");
        assertThat(json(new Match.Icmp(IpFamily.V6, 128, 0, false))).isEqualTo("["
                + "{\"match\":{\"op\":\"==\",\"left\":{\"payload\":{\"protocol\":\"icmpv6\",\"field\":\"type\"}},\"right\":128}},"
                + "{\"match\":{\"op\":\"==\",\"left\":{\"payload\":{\"protocol\":\"icmpv6\",\"field\":\"code\"}},\"right\":0}}]");
        // not (type 3 and code 1): one lookup of the pair, so type 3 with another code still matches
        assertThat(json(new Match.Icmp(IpFamily.V4, 3, 1, true))).isEqualTo("[{\"match\":{\"op\":\"!=\",\"left\":{\"concat\":["
                + "{\"payload\":{\"protocol\":\"icmp\",\"field\":\"type\"}},{\"payload\":{\"protocol\":\"icmp\",\"field\":\"code\"}}]},"
                + "\"right\":{\"set\":[{\"concat\":[3,1]}]}}}]");
    }

    @Test
    void netsSingleSeveralAndContained() {
        assertThat(json(new Match.Nets(Dir.SRC, List.of("10.0.0.0/8"), false)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"payload\":{\"protocol\":\"ip\",\"field\":\"saddr\"}},"
                        + "\"right\":{\"prefix\":{\"addr\":\"10.0.0.0\",\"len\":8}}}}]");
        // a host is a bare address; 10.1.0.0/16 lies in 10.0.0.0/8 and is dropped (interval sets reject overlaps)
        assertThat(json(new Match.Nets(Dir.DST, List.of("192.168.1.1/32", "10.1.0.0/16", "10.0.0.0/8"), true)))
                .isEqualTo("[{\"match\":{\"op\":\"!=\",\"left\":{\"payload\":{\"protocol\":\"ip\",\"field\":\"daddr\"}},"
                        + "\"right\":{\"set\":[{\"prefix\":{\"addr\":\"10.0.0.0\",\"len\":8}},\"192.168.1.1\"]}}}]");
        assertThat(json(new Match.Nets(Dir.SRC, List.of("fd00::/16"), false))).contains("\"protocol\":\"ip6\"");
        assertThatThrownBy(() -> json(new Match.Nets(Dir.SRC, List.of("10.0.0.0/8", "fd00::/16"), false)))
                .hasMessageContaining("both families");
        assertThatThrownBy(() -> json(new Match.Nets(Dir.SRC, List.of("banana"), false)))
                .hasMessageContaining("Nets: not a CIDR");
    }

    @Test
    void setLookupsAndNamedPorts() {
        String v4 = NftNames.set(IpFamily.V4, "s:abc");
        String v6 = NftNames.set(IpFamily.V6, "s:abc");
        assertThat(v4).startsWith("cali40");
        assertThat(v6).startsWith("cali60").endsWith(v4.substring(6));
        assertThat(json(new Match.InSet(Dir.SRC, IpFamily.V4, "s:abc", true)))
                .isEqualTo("[{\"match\":{\"op\":\"!=\",\"left\":{\"payload\":{\"protocol\":\"ip\",\"field\":\"saddr\"}},"
                        + "\"right\":\"@" + v4 + "\"}}]");
        assertThat(json(new Match.NamedPortSet(Dir.DST, IpFamily.V6, "n:abc", false)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"concat\":[{\"payload\":{\"protocol\":\"ip6\",\"field\":\"daddr\"}},"
                        + "{\"meta\":{\"key\":\"l4proto\"}},{\"payload\":{\"protocol\":\"th\",\"field\":\"dport\"}}]},"
                        + "\"right\":\"@" + NftNames.set(IpFamily.V6, "n:abc") + "\"}}]");
        assertThat(json(new Match.NamedPortSet(Dir.SRC, IpFamily.V4, "n:abc", false)))
                .contains("\"field\":\"saddr\"").contains("\"field\":\"sport\"");
    }

    @Test
    void portsSingleRangeAndMergedSet() {
        assertThat(json(new Match.Ports(Dir.DST, List.of("80"), false)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"payload\":{\"protocol\":\"th\",\"field\":\"dport\"}},\"right\":80}}]");
        assertThat(json(new Match.Ports(Dir.SRC, List.of("1000:2000"), true)))
                .isEqualTo("[{\"match\":{\"op\":\"!=\",\"left\":{\"payload\":{\"protocol\":\"th\",\"field\":\"sport\"}},"
                        + "\"right\":{\"range\":[1000,2000]}}}]");
        // overlapping and adjacent ranges merge: an anonymous interval set rejects overlaps
        assertThat(json(new Match.Ports(Dir.DST, List.of("443", "1500:3000", "80", "1000:2000", "3001"), false)))
                .contains("\"right\":{\"set\":[80,443,{\"range\":[1000,3001]}]}");
        assertThatThrownBy(() -> json(new Match.Ports(Dir.DST, List.of("9:1"), false))).hasMessageContaining("Ports");
        assertThatThrownBy(() -> json(new Match.Ports(Dir.DST, List.of("http"), false))).hasMessageContaining("Ports");
    }

    @Test
    void marksConntrackAndLocal() {
        assertThat(json(new Match.MarkAllSet(0x10000)))
                .isEqualTo("[{\"match\":{\"op\":\"==\",\"left\":{\"&\":[{\"meta\":{\"key\":\"mark\"}},65536]},\"right\":65536}}]");
        assertThat(json(new Match.MarkAllClear(0x20000))).contains("131072]},\"right\":0");
        assertThat(json(new Match.Conntrack(Set.of(Match.CtState.RELATED, Match.CtState.ESTABLISHED))))
                .isEqualTo("[{\"match\":{\"op\":\"in\",\"left\":{\"ct\":{\"key\":\"state\"}},\"right\":[\"established\",\"related\"]}}]");
        assertThat(json(new Match.DstLocal(true)))
                .isEqualTo("[{\"match\":{\"op\":\"!=\",\"left\":{\"fib\":{\"result\":\"type\",\"flags\":[\"daddr\"]}},\"right\":\"local\"}}]");
    }

    @Test
    void targetsAndChainNamesPerTable() {
        assertThat(NftRuleFormatter.target(Table.FILTER, Target.ACCEPT).toString()).isEqualTo("{\"accept\":null}");
        assertThat(NftRuleFormatter.target(Table.FILTER, Target.DROP).toString()).isEqualTo("{\"drop\":null}");
        assertThat(NftRuleFormatter.target(Table.FILTER, Target.RETURN).toString()).isEqualTo("{\"return\":null}");
        assertThat(NftRuleFormatter.target(Table.FILTER, new Target.Jump("cali-pi-x")).toString())
                .isEqualTo("{\"jump\":{\"target\":\"cali-pi-x\"}}");
        // nat chains share our one table with filter's: they carry their table's name
        assertThat(NftRuleFormatter.target(Table.NAT, new Target.Goto("cali-OUTPUT")).toString())
                .isEqualTo("{\"goto\":{\"target\":\"nat-cali-OUTPUT\"}}");
        assertThat(NftRuleFormatter.target(Table.FILTER, new Target.SetMark(0x10000)).toString())
                .isEqualTo("{\"mangle\":{\"key\":{\"meta\":{\"key\":\"mark\"}},\"value\":{\"|\":[{\"meta\":{\"key\":\"mark\"}},65536]}}}");
        assertThat(NftRuleFormatter.target(Table.FILTER, new Target.ClearMark(0x30000)).toString())
                .contains("{\"&\":[{\"meta\":{\"key\":\"mark\"}},4294770687]}");
        assertThat(NftRuleFormatter.target(Table.FILTER, new Target.Log("calico-drop: ")).toString())
                .isEqualTo("{\"log\":{\"prefix\":\"calico-drop: \",\"level\":\"notice\"}}");
        assertThat(NftRuleFormatter.target(Table.NAT, new Target.Masquerade()).toString()).isEqualTo("{\"masquerade\":null}");
    }

    @Test
    void aRuleMixingFamiliesIsRefusedWithAClearError() {
        assertThatThrownBy(() -> NftRuleFormatter.rule(Table.FILTER, GenericRule.of(Target.DROP,
                new Match.InSet(Dir.SRC, IpFamily.V4, "s:a", false), new Match.Nets(Dir.DST, List.of("fd00::/8"), false))))
                .hasMessageContaining("both IPv4 and IPv6");
    }

    @Test
    void commentsAreCutTo128BytesOnACharacterBoundary() {
        String longAscii = "x".repeat(200);
        assertThat(NftRuleFormatter.comment(longAscii)).hasSize(128);
        String euros = "\u20ac".repeat(50); // 3 bytes each
        assertThat(NftRuleFormatter.comment(euros)).isEqualTo("\u20ac".repeat(42));
        assertThat(NftRuleFormatter.comment(null)).isNull();
    }

    @Test
    void dispatchIsOneVerdictMapLookupAndTheFallback() {
        TreeMap<String, String> targets = new TreeMap<>();
        targets.put("cali1", "cali-tw-cali1");
        NftChain c = NftRuleFormatter.chain(Table.FILTER,
                new GenericChain.Dispatch("cali-to-wl-dispatch", false, targets, Target.DROP));
        assertThat(c.rules()).extracting(r -> r.expr().toString()).containsExactly(
                "[{\"vmap\":{\"key\":{\"meta\":{\"key\":\"oifname\"}},\"data\":\"@cali-to-wl-dispatch-map\"}}]",
                "[{\"drop\":null}]");
        assertThat(c.map().name()).isEqualTo("cali-to-wl-dispatch-map");
        assertThat(c.map().targets()).containsEntry("cali1", "cali-tw-cali1");
        targets.put("cali0123456789abcdef", "cali-tw-toolong");
        assertThat(NftRuleFormatter.chain(Table.FILTER, new GenericChain.Dispatch("d", false, targets, Target.DROP))
                .map().targets()).as("an impossible interface name gets no entry").containsOnlyKeys("cali1");
        NftChain noFallback = NftRuleFormatter.chain(Table.FILTER,
                new GenericChain.Dispatch("d", true, targets, null));
        assertThat(noFallback.rules()).hasSize(1);
    }

    /** Every variant at once, in kernel-accepted rules: dry run, then applied and listed back. */
    @Test
    void theKernelAcceptsEveryVariant() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        NetNs ns = NetNs.create("nftfmt");
        namespaces.add(ns);
        List<GenericRule> rules = FormatterVariants.rules();
        NftChain chain = NftRuleFormatter.chain(Table.FILTER, new GenericChain.Rules("cali-a", rules));
        NftChain masq = NftRuleFormatter.chain(Table.NAT, new GenericChain.Rules("cali-nat",
                List.of(GenericRule.of(new Target.Masquerade(), new Match.Nets(Dir.SRC, List.of("10.65.0.0/16"), false)))));
        NftBatch b = new NftBatch().addTable(NftNames.TABLE)
                .addSet(NftNames.TABLE, NftNames.set(IpFamily.V4, "s:a"), SetSpec.cidrs(4))
                .addSet(NftNames.TABLE, NftNames.set(IpFamily.V6, "s:a"), SetSpec.cidrs(6))
                .addSet(NftNames.TABLE, NftNames.set(IpFamily.V4, "n:p"), SetSpec.namedPorts(4))
                .addChain(NftNames.TABLE, FormatterVariants.TARGETS.get(0))
                .addChain(NftNames.TABLE, FormatterVariants.TARGETS.get(1)).addChain(NftNames.TABLE, chain.name())
                .addChain(NftNames.TABLE, masq.name())
                .addChain(NftNames.TABLE, "nat-POSTROUTING", NftDesiredState.baseSpec(
                        calico.felix.dataplane.rules.Ruleset.Table.NAT, calico.felix.dataplane.rules.Ruleset.Hook.POSTROUTING))
                .addRule(NftNames.TABLE, "nat-POSTROUTING", List.of(calico.dataplane.nft.NftExpr.jump(masq.name())));
        for (NftRule r : chain.rules()) {
            b.addRule(NftNames.TABLE, chain.name(), r.expr(), r.comment());
        }
        for (NftRule r : masq.rules()) {
            b.addRule(NftNames.TABLE, masq.name(), r.expr());
        }
        JsonNode listed = ns.call(() -> {
            try (Nftables nft = Nftables.open()) {
                boolean dry = nft.check(b);
                nft.apply(b); // throws naming the rejected command
                assertThat(dry).isTrue();
                return nft.listChain(NftNames.TABLE, chain.name());
            }
        });
        String text = ns.exec("nft", "list", "chain", "inet", "calico", "cali-a");
        assertThat(text).contains("iifname \"cali*\"", "tcp dport != { 80, 1000-2000 }", "tcp sport 53", "ct state invalid",
                "icmp type . icmp code != { destination-unreachable . host-unreachable }",
                "ip saddr { 10.0.0.0/8, 192.168.0.1 }", "ip daddr != 172.16.0.0/12", "goto cali-b",
                "meta mark set meta mark | 0x00010000", "meta mark set meta mark & 0xfffcffff",
                "ip daddr . meta l4proto . tcp dport @" + NftNames.set(IpFamily.V4, "n:p"),
                "log prefix \"calico-packet: \" level notice",
                "log prefix \"API0|np/prod/web\" group 1", "fib daddr type local", "comment \"" + "y".repeat(128) + "\"");
        int ruleCount = 0;
        for (JsonNode item : listed.get("nftables")) {
            if (item.has("rule")) {
                ruleCount++;
            }
        }
        assertThat(ruleCount).isEqualTo(rules.size());
        // Read back, every rule compares equal to what we sent once both are in the compared form
        // (ICMP types and codes, which libnftables lists by name, included).
        for (int i = 0; i < chain.rules().size(); i++) {
            com.fasterxml.jackson.databind.node.ArrayNode kernel = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
            JsonNode r = ruleAt(listed, i);
            com.fasterxml.jackson.databind.node.ObjectNode o = kernel.addObject();
            o.set("expr", r.get("expr"));
            if (r.has("comment")) {
                o.set("comment", r.get("comment"));
            }
            boolean same = NftListedForm.listed(kernel).equals(NftListedForm.sent(List.of(chain.rules().get(i))));
            assertThat(same).as("rule %d %s listed as %s", i, chain.rules().get(i).expr(), r).isTrue();
        }
        assertThat(ns.exec("nft", "list", "chain", "inet", "calico", "nat-cali-nat")).contains("masquerade");
    }

    private static JsonNode ruleAt(JsonNode listing, int index) {
        int n = 0;
        for (JsonNode item : listing.get("nftables")) {
            if (item.has("rule") && n++ == index) {
                return item.get("rule");
            }
        }
        throw new AssertionError("no rule " + index);
    }

    @Test
    void theKernelRejectsARuleNamingAMissingSet() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        NetNs ns = NetNs.create("nftfmt");
        namespaces.add(ns);
        NftRule r = NftRuleFormatter.rule(Table.FILTER, GenericRule.of(Target.DROP,
                new Match.InSet(Dir.SRC, IpFamily.V4, "s:missing", false)));
        NftBatch b = new NftBatch().addTable(NftNames.TABLE).addChain(NftNames.TABLE, "c")
                .addRule(NftNames.TABLE, "c", r.expr());
        assertThat(ns.<Boolean>call(() -> {
            try (Nftables nft = Nftables.open()) {
                return nft.check(b);
            }
        })).isFalse();
    }

    @org.junit.jupiter.api.Test
    void netsInsideOthersAreDroppedAsAPairwiseTestDropsThem() {
        java.util.Random r = new java.util.Random(11);
        for (int round = 0; round < 300; round++) {
            List<calico.api.net.Cidr> nets = new ArrayList<>();
            for (int k = r.nextInt(40); k >= 0; k--) {
                // few distinct values, so nets nest, repeat, and some are written with host bits set
                String addr = "10." + r.nextInt(3) + "." + r.nextInt(4) + "." + r.nextInt(6);
                int len = new int[] {8, 16, 22, 24, 30, 32}[r.nextInt(6)];
                nets.add(calico.api.net.Cidr.parse(addr + "/" + len));
            }
            List<calico.api.net.Cidr> pairwise = new ArrayList<>();
            List<calico.api.net.Cidr> widestFirst = new ArrayList<>(nets);
            widestFirst.sort(java.util.Comparator.comparingInt(calico.api.net.Cidr::prefixLength)
                    .thenComparing(calico.api.net.Cidr::address));
            for (calico.api.net.Cidr c : widestFirst) {
                if (pairwise.stream().noneMatch(k -> k.contains(c))) {
                    pairwise.add(c);
                }
            }
            pairwise.sort(java.util.Comparator.comparing(calico.api.net.Cidr::address));
            assertThat(NftRuleFormatter.withoutContained(nets)).as("round %d: %s", round, nets).isEqualTo(pairwise);
        }
    }
}
