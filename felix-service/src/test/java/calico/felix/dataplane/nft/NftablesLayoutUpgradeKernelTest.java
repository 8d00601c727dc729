package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Action;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.RuleRenderer;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A felix of the two-path layout (a workload's egress judged in FORWARD and INPUT, rules.md §2) restarted as one
 * of the prerouting layout (§2b): the adopted table is repaired in one transaction into exactly what a fresh
 * resync writes, and a read-back then repairs nothing.
 */
class NftablesLayoutUpgradeKernelTest {

    private NftLab lab;
    private final DataplaneModel model = new DataplaneModel();

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        lab = NftLab.open("nftupg", false);
        var policy = new calico.felix.calc.PolicyId("default", null, "p", calico.api.model.ResourceKind.GLOBAL_NETWORK_POLICY);
        model.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.defaults()),
                new DataplaneUpdate.ActivePolicyUpdate(policy, new CompiledPolicy(List.of(), List.of(), false)),
                new DataplaneUpdate.WorkloadEndpointUpdate("ns/a", "calia", null, List.of("10.65.0.2/32"), List.of(),
                        List.of(), List.of(new TierPolicies("default", Action.Deny, List.of(policy), false)),
                        List.of(new TierPolicies("default", Action.Deny, List.of(policy), false)))));
    }

    @AfterEach
    void tearDown() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void aRestartIntoThePreroutingLayoutRepairsTheOldTableIntoWhatAResyncWrites() {
        NftablesDataplane old = new NftablesDataplane(lab.nft(), model, m -> RuleRenderer.render(m,
                EnumSet.allOf(IpFamily.class), m.settings().forNftables().withEgressAtPrerouting(false)));
        lab.thread().call(() -> old.apply(List.of()));
        String before = table();
        assertThat(before).contains("jump cali-from-wl-dispatch").doesNotContain("cali-wl-egress");

        NftablesDataplane upgraded = new NftablesDataplane(lab.nft(), model);
        var stats = lab.thread().call(() -> upgraded.apply(List.of()));
        String adopted = table();

        assertThat(stats.resync()).as("adopted, not rewritten whole").isTrue();
        assertThat(adopted).contains("chain cali-wl-egress", "type filter hook prerouting priority dstnat + 1");
        assertThat(lab.thread().call(upgraded::refresh)).as("the kernel holds what was programmed").isZero();
        lab.thread().call(upgraded::resync);
        // nft lists objects in the order they were made: compare them as a set
        assertThat(objects(table())).as("the same as a fresh resync writes").isEqualTo(objects(adopted));
    }

    /** {@return the table's chains, sets and maps as listed, each one string, sorted} */
    private static java.util.SortedSet<String> objects(String listing) {
        java.util.SortedSet<String> out = new java.util.TreeSet<>();
        String body = listing.strip();
        body = body.substring(body.indexOf('\n') + 1, body.lastIndexOf('}')); // inside "table inet calico { ... }"
        for (String part : body.split("\n\n")) {
            out.add(part.strip());
        }
        return out;
    }

    private String table() {
        return lab.ns().exec("nft", "list", "table", "inet", "calico");
    }
}
