package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.nft.NftBatch;
import calico.dataplane.nft.NftElem;
import calico.dataplane.nft.NftExpr;
import calico.dataplane.nft.Nftables;
import calico.dataplane.nft.SetSpec;
import calico.dataplane.testing.NetNs;
import calico.felix.dataplane.nft.NftRuleFormatter.NftRule;
import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Match;
import calico.felix.dataplane.rules.Match.Dir;
import calico.felix.dataplane.rules.Ruleset;
import calico.felix.dataplane.rules.Ruleset.Table;
import calico.felix.dataplane.rules.Target;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Batches go to libnftables in nft syntax where every command has that form ({@code NftText}):
 * the same batch sent as JSON and as text must leave the same table in the kernel, for every
 * rule variant the formatter makes and every command kind the driver sends.
 */
class NftTextFormTest {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private final List<NetNs> namespaces = new ArrayList<>();

    @AfterEach
    void tearDown() {
        namespaces.forEach(NetNs::close);
    }

    @Test
    void theSameBatchAsTextAndAsJsonLeavesTheSameTable() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        NetNs asJson = NetNs.create("nfttxj");
        namespaces.add(asJson);
        NetNs asText = NetNs.create("nfttxt");
        namespaces.add(asText);

        NftBatch b = new NftBatch().addTable(NftNames.TABLE)
                .addSet(NftNames.TABLE, NftNames.set(IpFamily.V4, "s:a"), SetSpec.cidrs(4))
                .addSet(NftNames.TABLE, NftNames.set(IpFamily.V6, "s:a"), SetSpec.cidrs(6))
                .addSet(NftNames.TABLE, NftNames.set(IpFamily.V4, "n:p"), SetSpec.namedPorts(4))
                .addElements(NftNames.TABLE, NftNames.set(IpFamily.V4, "s:a"),
                        List.of(NftElem.cidr("10.1.0.0/16"), NftElem.cidr("10.2.0.1")))
                .addElements(NftNames.TABLE, NftNames.set(IpFamily.V4, "n:p"),
                        List.of(NftElem.namedPort("10.1.2.3", "tcp", 8080)));
        // the driver's form of a set with members: "add set" carrying "elem"
        ObjectNode set = JSON.objectNode().put("family", "inet").put("table", "calico").put("name", "cali40filled")
                .put("type", "ipv4_addr");
        set.putArray("flags").add("interval");
        set.putArray("elem").add(NftElem.cidr("10.9.0.0/16")).add(NftElem.cidr("10.8.0.1"));
        ObjectNode addSet = JSON.objectNode();
        addSet.putObject("add").set("set", set);
        b.raw(addSet);
        FormatterVariants.TARGETS.forEach(t -> b.addChain(NftNames.TABLE, t));
        b.addChain(NftNames.TABLE, "cali-a")
                .addChain(NftNames.TABLE, "cali-to-wl-dispatch")
                .addVerdictMap(NftNames.TABLE, "cali-to-wl-dispatch-map", SetSpec.of("ifname"))
                .addMapElements(NftNames.TABLE, "cali-to-wl-dispatch-map",
                        Map.of(NftElem.ifname("cali1234"), NftExpr.goTo("cali-b"), NftElem.ifname("cali-x.y"), NftExpr.goTo("cali-a")))
                .addRule(NftNames.TABLE, "cali-to-wl-dispatch", List.of(NftExpr.oifnameVmap("cali-to-wl-dispatch-map")))
                .addRule(NftNames.TABLE, "cali-to-wl-dispatch", List.of(NftExpr.drop()));
        for (GenericRule g : FormatterVariants.rules()) {
            NftRule r = NftRuleFormatter.rule(Table.FILTER, g);
            assertThat(r.text().nft()).as("nft syntax of %s", g).isNotNull();
            b.addRule(NftNames.TABLE, "cali-a", r.text(), r.comment());
        }
        NftRule masq = NftRuleFormatter.rule(Table.NAT, GenericRule.of(new Target.Masquerade(),
                new Match.Nets(Dir.SRC, List.of("10.65.0.0/16"), false)));
        NftRule notrack = NftRuleFormatter.rule(Table.RAW, GenericRule.of(new Target.NoTrack(),
                new Match.Nets(Dir.DST, List.of("10.65.0.0/16"), false)));
        b.addChain(NftNames.TABLE, "nat-cali-nat").addRule(NftNames.TABLE, "nat-cali-nat", masq.text(), null)
                .addChain(NftNames.TABLE, "nat-POSTROUTING", NftDesiredState.baseSpec(Table.NAT, Ruleset.Hook.POSTROUTING))
                .addRule(NftNames.TABLE, "nat-POSTROUTING", List.of(NftExpr.jump("nat-cali-nat")))
                .addChain(NftNames.TABLE, "raw-PREROUTING", NftDesiredState.baseSpec(Table.RAW, Ruleset.Hook.PREROUTING))
                .addRule(NftNames.TABLE, "raw-PREROUTING", notrack.text(), null)
                .addMapElements(NftNames.TABLE, "cali-to-wl-dispatch-map", Map.of(NftElem.ifname("cali-gone.1"), NftExpr.goTo("cali-b")))
                .deleteMapElements(NftNames.TABLE, "cali-to-wl-dispatch-map", List.of(NftElem.ifname("cali-gone.1")))
                .deleteElements(NftNames.TABLE, NftNames.set(IpFamily.V4, "s:a"), List.of(NftElem.cidr("10.2.0.1")))
                .flushChain(NftNames.TABLE, "cali-b")
                .addRule(NftNames.TABLE, "cali-b", List.of(NftExpr.counter(), NftExpr.returnVerdict()));
        String text = b.toNft();
        assertThat(text).as("every command has an nft-syntax form").isNotNull();

        Path dir = Files.createTempDirectory("nft-text-form");
        try {
            Path json = Files.writeString(dir.resolve("batch.json"), b.toJson());
            Path nft = Files.writeString(dir.resolve("batch.nft"), text);
            asJson.exec("nft", "-j", "-f", json.toString());
            asText.exec("nft", "-f", nft.toString());
            String listedJson = asJson.exec("nft", "list", "table", "inet", "calico");
            String listedText = asText.exec("nft", "list", "table", "inet", "calico");
            assertThat(listedText).isEqualTo(listedJson);
            assertThat(listedText).contains("ct state established,related accept", "iifname \"cali*\"",
                    "tcp dport != { 80, 1000-2000 }", "icmp type . icmp code != { destination-unreachable . host-unreachable }",
                    "\"cali1234\" : goto cali-b", "ct status dnat reject", "ct status ! dnat return",
                    "fib daddr type local oifname \"eth0\" accept", "fib daddr type != local return",
                    "fib saddr . mark . iif oif missing drop", "comment \"start of tier default\"",
                    "elements = { 10.8.0.1, 10.9.0.0/16 }", "10.1.2.3 . tcp . 8080", "elements = { 10.1.0.0/16 }")
                    .doesNotContain("cali-gone.1", "10.2.0.1");

            // And through the binding: Nftables.apply sends the text, and the kernel has what the CLI made.
            NetNs viaApply = NetNs.create("nfttxa");
            namespaces.add(viaApply);
            viaApply.call(() -> {
                try (Nftables n = Nftables.open()) {
                    n.apply(b);
                }
                return null;
            });
            assertThat(viaApply.exec("nft", "list", "table", "inet", "calico")).isEqualTo(listedJson);
        } finally {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(dir);
        }
    }

    @Test
    void aCommandWithoutTextSendsTheWholeBatchAsJson() {
        // a comment nft syntax cannot quote, and a command kind NftText does not print
        NftRule quoted = NftRuleFormatter.rule(Table.FILTER, GenericRule.of(Target.ACCEPT).withComment("say \"hi\""));
        NftBatch b = new NftBatch().addTable(NftNames.TABLE).addChain(NftNames.TABLE, "cali-a");
        assertThat(b.toNft()).isNotNull();
        b.addRule(NftNames.TABLE, "cali-a", quoted.text(), quoted.comment());
        assertThat(b.toNft()).isNull();
        assertThat(b.toJson()).contains("say \\\"hi\\\"");

        ObjectNode replace = JSON.objectNode();
        replace.putObject("replace").putObject("rule").put("family", "inet").put("table", "calico").put("chain", "cali-a")
                .put("handle", 4).putArray("expr").add(NftExpr.accept());
        assertThat(new NftBatch().addTable(NftNames.TABLE).raw(replace).toNft()).isNull();
    }
}
