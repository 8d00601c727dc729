package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.nft.Nftables;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver.ApplyStats;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The policy-rules-only path of {@link NftablesDataplane}: a batch that only changes the rules of
 * programmed policies rewrites just their chains, without rendering the whole model, and must
 * leave the kernel and the driver exactly where the whole path would. Every step compares what
 * the driver programmed with a full {@link NftablesDataplane#desired()}, and the kernel with a
 * refresh that must find nothing to repair.
 */
class NftablesPolicyRulesPathTest {

    private static final int POLICIES = 6;

    private NftLab lab;
    private NetNs ns;
    private NamespaceThread thread;
    private Nftables nft;
    private NftablesDataplane driver;
    private final DataplaneModel model = new DataplaneModel();

    /** Whether the libnftables context sends what the netlink encoder covers as our own messages. */
    boolean netlink() {
        return false;
    }

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        lab = NftLab.open("nftpol", netlink());
        ns = lab.ns();
        thread = lab.thread();
        nft = lab.nft();
        driver = new NftablesDataplane(nft, model);
        apply(initial());
    }

    @AfterEach
    void tearDown() {
        if (lab != null) {
            lab.close();
        }
    }

    @Test
    void aPortChangeRewritesOnlyThatPolicysChainAndEndsWhereTheWholePathDoes() {
        int before = driver.policyRulesApplies();
        long viaNetlink = thread.call(nft::netlinkBatches);
        ApplyStats s = apply(List.of(update(1, allowFrom("s:1", 8081))));
        assertThat(driver.policyRulesApplies()).isEqualTo(before + 1);
        // with the encoder on, the rewrite reached the kernel as our messages; off, never
        assertThat(thread.call(nft::netlinkBatches)).isEqualTo(viaNetlink + (netlink() ? 1 : 0));
        assertThat(s.resync()).isFalse();
        assertThat(s.chainsWritten()).isEqualTo(1); // the inbound chain; the outbound one is unchanged
        assertThat(ns.exec("nft", "list", "chain", "inet", "calico", calico.felix.dataplane.rules.Names.policyInbound(id(1)))).contains("8081");
        assertSameAsWholePath();
    }

    @Test
    void batchesThePathCannotServeTakeTheWholePath() {
        int before = driver.policyRulesApplies();
        // a rule naming a set no rule named before: the set must be programmed too
        apply(List.of(update(2, allowFrom("s:0", 80), allowFrom("s:4", 443))));
        // a new policy: endpoint chains may change
        apply(List.of(new DataplaneUpdate.ActivePolicyUpdate(id(99), policy(allowFrom("s:1", 80)))));
        // a policy change together with anything else
        apply(List.of(update(3, allowFrom("s:3", 81)), new DataplaneUpdate.IpSetDeltaUpdate("s:3",
                Set.of(net("10.3.0.99/32")), Set.of())));
        // a staged policy
        apply(List.of(new DataplaneUpdate.ActivePolicyUpdate(new PolicyId("default", null, "staged-p1",
                ResourceKind.STAGED_GLOBAL_NETWORK_POLICY), new CompiledPolicy(List.of(), List.of(), true))));
        assertThat(driver.policyRulesApplies()).isEqualTo(before);
        assertSameAsWholePath();
    }

    @Test
    void aChangeThatWouldProgramAnEmptySetForANegatedMatchTakesTheWholePath() {
        // s:empty has never had members: a positive match on it is pruned, a negated one keeps it programmed
        apply(List.of(update(4, allowFrom("s:empty", 80))));
        int before = driver.policyRulesApplies();
        apply(List.of(update(4, new CompiledRule(Action.Allow, null, "TCP", null, null, null,
                new Side(List.of(), List.of(), List.of(), List.of(), List.of(), List.of("s:empty"), List.of(), List.of()),
                Side.ANY, null))));
        assertThat(driver.policyRulesApplies()).isEqualTo(before);
        assertThat(ns.exec("nft", "list", "table", "inet", "calico")).contains(NftNames.set(
                calico.felix.dataplane.rules.IpFamily.V4, "s:empty"));
        assertSameAsWholePath();
    }

    @Test
    void randomRuleChangesKeepTheKernelAndTheDriverWhereTheWholePathWouldBe() {
        Random random = new Random(42);
        int fast = driver.policyRulesApplies();
        for (int step = 0; step < 40; step++) {
            int which = random.nextInt(POLICIES);
            String set = "s:" + which;
            CompiledRule rule = switch (random.nextInt(4)) {
                case 0 -> allowFrom(set, 1000 + random.nextInt(100));
                case 1 -> new CompiledRule(Action.Deny, null, "UDP", null, null, null, Side.ANY,
                        ports(String.valueOf(2000 + random.nextInt(10))), null);
                case 2 -> new CompiledRule(Action.Pass, null, null, null, null, null, Side.ANY, Side.ANY, null);
                default -> allowFrom(set, 80);
            };
            List<CompiledRule> rules = random.nextBoolean() ? List.of(rule) : List.of(rule, allowFrom(set, 9090));
            apply(List.of(update(which, rules.toArray(CompiledRule[]::new))));
            assertThat(driver.programmedDesired()).as("step %d", step).isEqualTo(driver.desired());
            assertThat(thread.call(driver::programmed)).as("step %d", step)
                    .isEqualTo(driver.desired().counts());
        }
        assertThat(driver.policyRulesApplies()).isGreaterThan(fast + 20);
        assertThat(thread.call(driver::refresh)).as("chains repaired by a refresh").isZero();
    }

    private void assertSameAsWholePath() {
        assertThat(driver.programmedDesired()).isEqualTo(driver.desired());
        assertThat(thread.call(driver::programmed)).isEqualTo(driver.desired().counts());
        assertThat(thread.call(driver::refresh)).as("chains repaired by a refresh").isZero();
    }

    private ApplyStats apply(List<DataplaneUpdate> batch) {
        return thread.call(() -> {
            model.apply(batch);
            return driver.apply(batch);
        });
    }

    private static List<DataplaneUpdate> initial() {
        List<DataplaneUpdate> batch = new ArrayList<>();
        batch.add(new DataplaneUpdate.IpSetUpdate("s:empty", IpSetType.NET, Set.of()));
        List<PolicyId> all = new ArrayList<>();
        for (int i = 0; i < POLICIES; i++) {
            batch.add(new DataplaneUpdate.IpSetUpdate("s:" + i, IpSetType.NET, Set.of(net("10." + i + ".0.1/32"),
                    net("10." + i + ".0.2/32"))));
            batch.add(update(i, allowFrom("s:" + i, 80)));
            all.add(id(i));
        }
        for (int e = 0; e < 3; e++) {
            List<TierPolicies> tiers = List.of(new TierPolicies("default", Action.Deny, all, false));
            batch.add(new DataplaneUpdate.WorkloadEndpointUpdate("ns/w" + e, "calitest" + e, null,
                    List.of("10.200.0." + (e + 1) + "/32"), List.of(), List.of(), tiers, tiers));
        }
        return batch;
    }

    private static DataplaneUpdate.ActivePolicyUpdate update(int i, CompiledRule... inbound) {
        return new DataplaneUpdate.ActivePolicyUpdate(id(i), policy(inbound));
    }

    /** Inbound {@code inbound}; outbound always allows 10.0.0.0/8. */
    private static CompiledPolicy policy(CompiledRule... inbound) {
        Side nets = new Side(List.of("10.0.0.0/8"), List.of(), List.of(), List.of(), List.of(), List.of(), List.of(),
                List.of());
        return new CompiledPolicy(List.of(inbound),
                List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, nets, null)), false);
    }

    private static CompiledRule allowFrom(String set, int port) {
        Side src = new Side(List.of(), List.of(), List.of(), List.of(), List.of(set), List.of(), List.of(), List.of());
        return new CompiledRule(Action.Allow, null, "TCP", null, null, null, src, ports(String.valueOf(port)), null);
    }

    private static Side ports(String port) {
        return new Side(List.of(), List.of(), List.of(port), List.of(), List.of(), List.of(), List.of(), List.of());
    }

    private static PolicyId id(int i) {
        return new PolicyId("default", null, "p" + i, ResourceKind.GLOBAL_NETWORK_POLICY);
    }

    private static IpSetMember net(String cidr) {
        return IpSetMember.net(Cidr.parse(cidr));
    }
}
