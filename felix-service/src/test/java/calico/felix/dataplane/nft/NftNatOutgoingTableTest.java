package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.ConfigUpdate;
import calico.felix.calc.DataplaneUpdate.HostMetadataUpdate;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RuleRenderer;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The eBPF driver's natOutgoing table is rendered only when what its rendering reads changed (pools, settings,
 * and with {@code IPPoolsAndHostIPs} the hosts): an apply that changed none of it neither renders nor calls
 * nftables (a stranger's edit stays until the refresh's repair, which puts back the same rendering), and a
 * change of any of it rewrites the table. In a namespace of its own, on the real kernel.
 */
class NftNatOutgoingTableTest {

    @Test
    void renderedAndWrittenOnlyWhenItsInputsChanged() {
        assumeTrue(NetNs.available(), "needs root for namespaces");
        AtomicInteger renders = new AtomicInteger();
        NftNatOutgoingTable table = new NftNatOutgoingTable(m -> {
            renders.incrementAndGet();
            return RuleRenderer.renderNatOutgoing(m, EnumSet.allOf(IpFamily.class), m.settings().forNftables());
        });
        DataplaneModel model = new DataplaneModel();
        try (NftLab lab = NftLab.open("natout")) {
            apply(model, new ConfigUpdate(FelixSettings.from(Map.of())),
                    new IpPoolUpdate("p", "10.70.0.0/16", true, "Never", "Never", false));
            lab.thread().run(() -> table.sync(model, false));
            assertThat(renders).hasValue(1);
            assertThat(list(lab)).contains("10.70.0.0/16", "masquerade");

            // Inputs unchanged: another node (hosts are no input while natOutgoing excludes pools only).
            apply(model, new HostMetadataUpdate("node-b", "192.168.70.2", null, Map.of()));
            String chain = NftNames.chain(calico.felix.dataplane.rules.Ruleset.Table.NAT, calico.felix.dataplane.rules.Names.NAT_OUTGOING);
            lab.ns().exec("nft", "flush", "chain", "inet", NftNatOutgoingTable.NAME, chain);
            lab.thread().run(() -> table.sync(model, false));
            lab.thread().run(() -> table.sync(model, false));
            assertThat(renders).as("no input changed: not rendered").hasValue(1);
            assertThat(list(lab)).as("nor written: the stranger's flush is still there").doesNotContain("masquerade");
            assertThat(lab.thread().call(() -> table.repair(model))).as("the refresh's repair").isTrue();
            assertThat(list(lab)).contains("masquerade");
            assertThat(renders).as("the repair writes the same rendering").hasValue(1);

            apply(model, new IpPoolUpdate("q", "10.71.0.0/16", true, "Never", "Never", false));
            lab.thread().run(() -> table.sync(model, false));
            assertThat(renders).as("a pool changed").hasValue(2);
            assertThat(list(lab)).contains("10.70.0.0/16", "10.71.0.0/16");

            apply(model, new ConfigUpdate(FelixSettings.from(Map.of("natOutgoingExclusions", "IPPoolsAndHostIPs"))));
            lab.thread().run(() -> table.sync(model, false));
            assertThat(renders).as("the settings changed").hasValue(3);
            assertThat(list(lab)).contains("192.168.70.2");
            apply(model, new HostMetadataUpdate("node-c", "192.168.70.3", null, Map.of()));
            lab.thread().run(() -> table.sync(model, false));
            assertThat(renders).as("hosts are an input now").hasValue(4);
            assertThat(list(lab)).contains("192.168.70.3");

            apply(model, new IpPoolUpdate("p", "10.70.0.0/16", false, "Never", "Never", false),
                    new IpPoolUpdate("q", "10.71.0.0/16", false, "Never", "Never", false));
            lab.thread().run(() -> table.sync(model, false));
            assertThat(lab.ns().exec("nft", "list", "tables")).as("no natOutgoing pool: no table")
                    .doesNotContain(NftNatOutgoingTable.NAME);
            apply(model, new IpPoolUpdate("p", "10.70.0.0/16", true, "Never", "Never", false));
            lab.thread().run(() -> table.sync(model, false));
            assertThat(list(lab)).as("needed again: rendered again").contains("10.70.0.0/16", "masquerade");
            assertThat(renders).hasValue(5);
        }
    }

    private static void apply(DataplaneModel model, DataplaneUpdate... updates) {
        model.apply(List.of(updates));
    }

    private static String list(NftLab lab) {
        return lab.ns().exec("nft", "list", "table", "inet", NftNatOutgoingTable.NAME);
    }
}
