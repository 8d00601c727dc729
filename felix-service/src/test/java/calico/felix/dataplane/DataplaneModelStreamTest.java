package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.api.net.Cidr;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.iptables.ChainRenderer;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.felix.calc.FelixSettings;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The one {@link DataplaneModel}'s promises, on streams from a real calculation graph (random
 * resources, deletions, membership deltas, config, pools, hosts): the graph's stream obeys the
 * protocol the model checks (no violation recorded), and folding it batch by batch or as one
 * concatenated batch (what the kernel dataplane does when batches queue behind an apply, and what a
 * driver started by a backend switch renders) gives the same model and the same chains. On raw
 * adversarial streams: each violation has its one outcome (design/rules.md §0, written out as a
 * plain oracle here), and no endpoint ever names a profile the model lacks.
 */
class DataplaneModelStreamTest {

    private static final String ME = "n1";

    /** One datastore event: kind, which one, content seed, deletion; and whether a flush follows. */
    record Ev(int kind, int name, int variant, boolean delete, boolean flush) {
    }

    @Provide
    Arbitrary<List<Ev>> events() {
        Arbitrary<Ev> ev = Combinators.combine(Arbitraries.integers().between(0, 6),
                Arbitraries.integers().between(0, 3), Arbitraries.integers().between(0, 1 << 20),
                Arbitraries.integers().between(0, 4).map(i -> i == 0), Arbitraries.of(true, true, false))
                .as(Ev::new);
        return ev.list().ofMinSize(1).ofMaxSize(50);
    }

    @Property(tries = 200)
    void aGraphStreamObeysTheProtocolAndFoldsTheSameInOneBatch(@ForAll("events") List<Ev> events,
                                                               @ForAll("inSyncAt") int inSyncAt) {
        List<List<DataplaneUpdate>> stream = new ArrayList<>();
        CalculationGraph graph = CalculationGraph.create(ME, stream::add);
        long rev = 0;
        for (int i = 0; i < events.size(); i++) {
            if (i == Math.min(inSyncAt, events.size() - 1)) {
                graph.onStatus(SyncerStatus.IN_SYNC);
            }
            Ev e = events.get(i);
            Resource r = resource(e);
            graph.onUpdates(List.of(e.delete() ? Update.deleted(r.key(), ++rev) : Update.of(UpdateType.NEW, r, ++rev)));
            if (e.flush()) {
                graph.flush();
            }
        }
        graph.flush();

        DataplaneModel byBatch = new DataplaneModel();
        List<DataplaneUpdate> all = new ArrayList<>();
        for (List<DataplaneUpdate> batch : stream) {
            byBatch.apply(batch);
            all.addAll(batch);
        }
        DataplaneModel oneBatch = new DataplaneModel();
        oneBatch.apply(all);

        assertThat(byBatch.errors()).as("the graph's stream obeys the protocol").isEmpty();
        assertThat(oneBatch.errors()).as("so does its concatenation, as one batch").isEmpty();
        assertSameModel(oneBatch, byBatch);
        assertThat(ChainRenderer.render(oneBatch).chains()).isEqualTo(ChainRenderer.render(byBatch).chains());
        assertThat(byBatch.ipSetMemberCount()).as("the member count kept across batches")
                .isEqualTo(byBatch.ipSets().values().stream().mapToInt(s -> s.members().size()).sum());
    }

    @Provide
    Arbitrary<Integer> inSyncAt() {
        return Arbitraries.integers().between(0, 60);
    }

    /** A raw update: which kind of operation, on which key, with which content seed. */
    record Op(int kind, int key, int variant) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 10), Arbitraries.integers().between(0, 3),
                Arbitraries.integers().between(0, 1 << 20)).as(Op::new).list().ofMaxSize(80);
    }

    @Property(tries = 300)
    void eachViolationHasItsOneOutcomeAndNoEndpointNamesAMissingProfile(@ForAll("ops") List<Op> ops) {
        DataplaneModel model = new DataplaneModel();
        Oracle oracle = new Oracle();
        for (Op op : ops) {
            DataplaneUpdate u = update(op);
            long violations = model.violations();
            model.apply(u);
            oracle.apply(u);
            assertThat(State.of(model)).as("after " + u).isEqualTo(oracle.state());
            assertThat(model.violations()).isGreaterThanOrEqualTo(violations);
            model.workloads().values().forEach(w -> assertThat(model.profiles()).as("an endpoint's profiles")
                    .containsKeys(w.profileIds().toArray(String[]::new)));
        }
    }

    /** The model's state, copied. */
    record State(Map<String, Set<IpSetMember>> ipSets, Map<PolicyId, CompiledPolicy> policies,
                 Map<String, CompiledPolicy> profiles, Map<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads,
                 FelixSettings config, int members) {
        static State of(DataplaneModel m) {
            Map<String, Set<IpSetMember>> sets = new HashMap<>();
            m.ipSets().forEach((id, s) -> sets.put(id, s.members()));
            return new State(sets, Map.copyOf(m.policies()), Map.copyOf(m.profiles()), Map.copyOf(m.workloads()),
                    m.config(), m.ipSetMemberCount());
        }
    }

    /**
     * The outcomes of rules.md §0 written out plainly: every update applied as it says, except a
     * delta for an unknown set, an endpoint naming a missing profile and the remove of a profile
     * an endpoint names.
     */
    static final class Oracle {
        final Map<String, Set<IpSetMember>> sets = new HashMap<>();
        final Map<PolicyId, CompiledPolicy> policies = new HashMap<>();
        final Map<String, CompiledPolicy> profiles = new HashMap<>();
        final Map<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads = new HashMap<>();
        FelixSettings config = FelixSettings.defaults();

        void apply(DataplaneUpdate u) {
            if (u instanceof DataplaneUpdate.IpSetUpdate s) {
                sets.put(s.id(), new HashSet<>(s.members()));
            } else if (u instanceof DataplaneUpdate.IpSetDeltaUpdate d) {
                Set<IpSetMember> m = sets.get(d.id());
                if (m != null) {
                    m.removeAll(d.removed());
                    m.addAll(d.added());
                }
            } else if (u instanceof DataplaneUpdate.IpSetRemove r) {
                sets.remove(r.id());
            } else if (u instanceof DataplaneUpdate.ActivePolicyUpdate p) {
                policies.put(p.id(), p.policy());
            } else if (u instanceof DataplaneUpdate.ActivePolicyRemove p) {
                policies.remove(p.id());
            } else if (u instanceof DataplaneUpdate.ActiveProfileUpdate p) {
                profiles.put(p.name(), p.profile());
            } else if (u instanceof DataplaneUpdate.ActiveProfileRemove p) {
                if (workloads.values().stream().noneMatch(w -> w.profileIds().contains(p.name()))) {
                    profiles.remove(p.name());
                }
            } else if (u instanceof DataplaneUpdate.WorkloadEndpointUpdate w) {
                if (profiles.keySet().containsAll(w.profileIds())) {
                    workloads.put(w.id(), w);
                }
            } else if (u instanceof DataplaneUpdate.WorkloadEndpointRemove w) {
                workloads.remove(w.id());
            } else if (u instanceof DataplaneUpdate.ConfigUpdate c) {
                config = c.settings();
            } else {
                throw new IllegalArgumentException("not generated: " + u);
            }
        }

        State state() {
            Map<String, Set<IpSetMember>> copy = new HashMap<>();
            sets.forEach((id, m) -> copy.put(id, Set.copyOf(m)));
            return new State(copy, Map.copyOf(policies), Map.copyOf(profiles), Map.copyOf(workloads), config,
                    sets.values().stream().mapToInt(Set::size).sum());
        }
    }

    private static void assertSameModel(DataplaneModel actual, DataplaneModel expected) {
        assertThat(actual.ipSets()).isEqualTo(expected.ipSets());
        assertThat(actual.policies()).isEqualTo(expected.policies());
        assertThat(actual.profiles()).isEqualTo(expected.profiles());
        assertThat(actual.workloads()).isEqualTo(expected.workloads());
        assertThat(actual.hostEndpoints()).isEqualTo(expected.hostEndpoints());
        assertThat(actual.pools()).isEqualTo(expected.pools());
        assertThat(actual.hosts()).isEqualTo(expected.hosts());
        assertThat(actual.routes()).isEqualTo(expected.routes());
        assertThat(actual.config()).isEqualTo(expected.config());
        assertThat(actual.inSync()).isEqualTo(expected.inSync());
        assertThat(actual.marks()).isEqualTo(expected.marks());
        assertThat(actual.interfacePrefixes()).isEqualTo(expected.interfacePrefixes());
        assertThat(actual.ipSetMemberCount()).isEqualTo(expected.ipSetMemberCount());
    }

    // ---------------------------------------------------------------- raw updates

    private static DataplaneUpdate update(Op op) {
        Random bits = new Random(op.variant());
        String set = "s" + op.key();
        switch (op.kind()) {
            case 0:
                return new DataplaneUpdate.IpSetUpdate(set, IpSetType.NET, members(bits));
            case 1:
                return new DataplaneUpdate.IpSetDeltaUpdate(set, members(bits), members(bits));
            case 2:
                return new DataplaneUpdate.IpSetRemove(set);
            case 3:
                return new DataplaneUpdate.ActivePolicyUpdate(policyId(op.key()),
                        new CompiledPolicy(List.of(), List.of(), bits.nextBoolean()));
            case 4:
                return new DataplaneUpdate.ActivePolicyRemove(policyId(op.key()));
            case 5:
                return new DataplaneUpdate.ActiveProfileUpdate("p" + op.key(),
                        new CompiledPolicy(List.of(), List.of(), bits.nextBoolean()));
            case 6:
                return new DataplaneUpdate.ActiveProfileRemove("p" + op.key());
            case 7:
                return new DataplaneUpdate.WorkloadEndpointUpdate("ns/w" + op.key(), "cali" + op.key(), null,
                        List.of("10.0.0." + bits.nextInt(8) + "/32"), List.of(), List.of("p" + bits.nextInt(4)),
                        List.of(new TierPolicies("default", Action.Deny, List.of(policyId(bits.nextInt(4))), false)),
                        List.of());
            case 8:
                return new DataplaneUpdate.WorkloadEndpointRemove("ns/w" + op.key());
            case 9:
                return new DataplaneUpdate.ActivePolicyUpdate(policyId(op.key()), usingSet("s" + bits.nextInt(4)));
            default:
                return new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("interfacePrefix", bits.nextBoolean() ? "cali" : "tap",
                        "iptablesMarkMask", bits.nextBoolean() ? "0xffff0000" : "0xff000000")));
        }
    }

    /** A policy whose one rule allows from IP set {@code id}. */
    private static CompiledPolicy usingSet(String id) {
        CompiledRule.Side src = new CompiledRule.Side(List.of(), List.of(), List.of(), List.of(), List.of(id),
                List.of(), List.of(), List.of());
        return new CompiledPolicy(List.of(new CompiledRule(Action.Allow, null, null, null, null, null, src,
                CompiledRule.Side.ANY, null)), List.of(), false);
    }

    private static Set<IpSetMember> members(Random bits) {
        Set<IpSetMember> out = new HashSet<>();
        int n = bits.nextInt(4);
        for (int i = 0; i < n; i++) {
            out.add(IpSetMember.net(Cidr.parse("10.1." + bits.nextInt(3) + "." + bits.nextInt(4) + "/32")));
        }
        return out;
    }

    private static PolicyId policyId(int key) {
        return new PolicyId("default", null, "default.gnp" + key, calico.api.model.ResourceKind.GLOBAL_NETWORK_POLICY);
    }

    // ---------------------------------------------------------------- datastore resources

    private static final String[] SELECTORS = {"all()", "app == 'a'", "app == 'b'", "has(app)", "!has(app)"};

    private static Resource resource(Ev e) {
        Random bits = new Random(e.variant());
        switch (e.kind()) {
            case 0, 1: {
                // Workload endpoints, most of them local; small IP space so memberships move.
                String node = bits.nextInt(3) == 0 ? "n2" : ME;
                String ip = "10.0.0." + (1 + bits.nextInt(4)) + "/32";
                Map<String, String> labels = bits.nextBoolean() ? Map.of("app", bits.nextBoolean() ? "a" : "b")
                        : Map.of();
                return new WorkloadEndpoint(ObjectMeta.namespaced("ns1", "w" + e.name()).withLabels(labels),
                        new WorkloadEndpointSpec("k8s", null, node, null, "w" + e.name(), "eth0", null, List.of(ip),
                                null, null, null, List.of("kns.ns1"), "caliw" + e.name(), null, List.of(), null));
            }
            case 2: {
                Rule rule = Rule.allow().withSource(EntityRule.empty()
                        .withSelector(SELECTORS[bits.nextInt(SELECTORS.length)]));
                return new GlobalNetworkPolicy(ObjectMeta.named("gnp" + e.name()), new GlobalNetworkPolicySpec(
                        bits.nextBoolean() ? "default" : "t1", (double) bits.nextInt(3), List.of(rule), List.of(),
                        SELECTORS[bits.nextInt(SELECTORS.length)], List.of(PolicyType.Ingress), null, null, null,
                        null, null, null));
            }
            case 3:
                return e.name() % 2 == 0 ? new Tier(ObjectMeta.named("t1"), new TierSpec((double) bits.nextInt(5), null))
                        : new GlobalNetworkSet(ObjectMeta.named("gs" + e.name())
                        .withLabels(Map.of("app", bits.nextBoolean() ? "a" : "b")),
                        new GlobalNetworkSetSpec(List.of("2.2." + bits.nextInt(3) + ".0/24")));
            case 4:
                return new Profile(ObjectMeta.named("kns.ns1"), new ProfileSpec(
                        List.of(Rule.allow().withSource(EntityRule.empty().withSelector(
                                SELECTORS[bits.nextInt(SELECTORS.length)]))), List.of(Rule.allow()),
                        Map.of("pcns.team", bits.nextBoolean() ? "x" : "y")));
            case 5:
                return KernelTestbed.felixConfig(Map.of("iptablesRefreshInterval", (10 + bits.nextInt(3)) + "s",
                        "logSeverityScreen", bits.nextBoolean() ? "Info" : "Debug"));
            default:
                return e.name() % 2 == 0
                        ? new IPPool(ObjectMeta.named("pool" + e.name()), new IPPoolSpec("10.0." + bits.nextInt(2)
                        + ".0/24", null, null, bits.nextBoolean(), null, null, null, null, null, null, null))
                        : new Node(ObjectMeta.named(bits.nextBoolean() ? ME : "n2"), NodeSpec.ofBgp(
                        new NodeSpec.BGP(null, "192.168.0." + (1 + bits.nextInt(3)) + "/24", null, null, null)));
        }
    }

}
