package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

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
import calico.felix.app.ModelDataplane;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.dataplane.iptables.ChainRenderer;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.felix.calc.FelixSettings;
import java.util.ArrayList;
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
 * {@link GraphReplay}'s one promise: its snapshot, fed as one batch to a fresh model, gives the
 * same model as the whole stream it compacted. Checked on streams from a real calculation graph
 * (random resources, deletions, membership deltas, config, pools, hosts) against both the
 * driver's {@link DataplaneModel} (and the chains it renders to) and felix's strict
 * {@link ModelDataplane}, which also proves the snapshot obeys the output protocol; and on raw
 * adversarial update streams against {@link DataplaneModel}.
 */
class GraphReplayTest {

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
    void theSnapshotOfAGraphStreamEqualsTheWholeStream(@ForAll("events") List<Ev> events,
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

        GraphReplay replay = new GraphReplay();
        DataplaneModel whole = new DataplaneModel();
        ModelDataplane wholeStrict = new ModelDataplane();
        for (List<DataplaneUpdate> batch : stream) {
            replay.add(batch);
            batch.forEach(whole::apply);
            wholeStrict.apply(batch);
        }
        List<DataplaneUpdate> snapshot = replay.snapshot();
        DataplaneModel fromSnapshot = new DataplaneModel();
        snapshot.forEach(fromSnapshot::apply);
        ModelDataplane strictFromSnapshot = new ModelDataplane();
        strictFromSnapshot.apply(snapshot);

        assertThat(wholeStrict.errors()).as("the graph's stream obeys the protocol").isEmpty();
        assertThat(strictFromSnapshot.errors()).as("so does the snapshot, as one batch").isEmpty();
        assertSameModel(fromSnapshot, whole);
        assertThat(ChainRenderer.render(fromSnapshot).chains()).isEqualTo(ChainRenderer.render(whole).chains());
        assertThat(strictFromSnapshot.workloadEndpoints()).isEqualTo(wholeStrict.workloadEndpoints());
        assertThat(strictFromSnapshot.hostEndpoints()).isEqualTo(wholeStrict.hostEndpoints());
        assertThat(strictFromSnapshot.policies()).isEqualTo(wholeStrict.policies());
        assertThat(strictFromSnapshot.profiles()).isEqualTo(wholeStrict.profiles());
        assertThat(strictFromSnapshot.ipSets()).isEqualTo(wholeStrict.ipSets());
        assertThat(strictFromSnapshot.routes()).isEqualTo(wholeStrict.routes());
        assertThat(strictFromSnapshot.pools()).isEqualTo(wholeStrict.pools());
        assertThat(strictFromSnapshot.hosts()).isEqualTo(wholeStrict.hosts());
        assertThat(strictFromSnapshot.config()).isEqualTo(wholeStrict.config());
        assertThat(strictFromSnapshot.inSync()).isEqualTo(wholeStrict.inSync());
        // Compaction holds one entry per live key: replaying the snapshot changes nothing.
        GraphReplay again = new GraphReplay();
        again.add(snapshot);
        assertThat(again.snapshot()).isEqualTo(snapshot);
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
        return Combinators.combine(Arbitraries.integers().between(0, 9), Arbitraries.integers().between(0, 3),
                Arbitraries.integers().between(0, 1 << 20)).as(Op::new).list().ofMaxSize(80);
    }

    @Property(tries = 300)
    void theSnapshotOfARawStreamEqualsTheWholeStream(@ForAll("ops") List<Op> ops) {
        GraphReplay replay = new GraphReplay();
        DataplaneModel whole = new DataplaneModel();
        Set<String> liveSets = new HashSet<>();
        for (Op op : ops) {
            DataplaneUpdate u = update(op, liveSets);
            replay.add(u);
            whole.apply(u);
        }
        DataplaneModel fromSnapshot = new DataplaneModel();
        replay.snapshot().forEach(fromSnapshot::apply);
        assertSameModel(fromSnapshot, whole);
    }

    private static void assertSameModel(DataplaneModel actual, DataplaneModel expected) {
        assertThat(actual.ipSets()).isEqualTo(expected.ipSets());
        assertThat(actual.policies()).isEqualTo(expected.policies());
        assertThat(actual.profiles()).isEqualTo(expected.profiles());
        assertThat(actual.workloads()).isEqualTo(expected.workloads());
        assertThat(actual.marks()).isEqualTo(expected.marks());
        assertThat(actual.interfacePrefixes()).isEqualTo(expected.interfacePrefixes());
    }

    // ---------------------------------------------------------------- raw updates

    private static DataplaneUpdate update(Op op, Set<String> liveSets) {
        Random bits = new Random(op.variant());
        String set = "s" + op.key();
        switch (op.kind()) {
            case 0:
                liveSets.add(set);
                return new DataplaneUpdate.IpSetUpdate(set, IpSetType.NET, members(bits));
            case 1:
                if (!liveSets.contains(set)) { // a delta needs its set: the protocol guarantees it
                    liveSets.add(set);
                    return new DataplaneUpdate.IpSetUpdate(set, IpSetType.NET, members(bits));
                }
                return new DataplaneUpdate.IpSetDeltaUpdate(set, members(bits), members(bits));
            case 2:
                liveSets.remove(set);
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
                        List.of(), List.of());
            case 8:
                return new DataplaneUpdate.WorkloadEndpointRemove("ns/w" + op.key());
            default:
                return new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("interfacePrefix", bits.nextBoolean() ? "cali" : "tap",
                        "iptablesMarkMask", bits.nextBoolean() ? "0xffff0000" : "0xff000000")));
        }
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
