package calico.felix.calc;

import static calico.felix.calc.Res.*;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesEndpointSliceSpec;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.Rule;
import calico.api.model.StagedAction;
import calico.api.model.StagedNetworkPolicy;
import calico.api.model.StagedNetworkPolicySpec;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Model-based: random small clusters under random event sequences. After every event the state
 * built from the emitted stream equals the brute-force {@link Oracle}; a replayed update emits
 * nothing; batching and reordering updates to different keys within a batch change nothing.
 */
class CalcGraphModelTest {

    private static final String ME = "n1";

    /** One event: kind of resource, which one (name), its content (variant), or its deletion. */
    record Ev(int kind, int name, int variant, boolean delete) {
    }

    @Provide
    Arbitrary<List<Ev>> events() {
        Arbitrary<Ev> ev = Combinators.combine(Arbitraries.integers().between(0, 7),
                Arbitraries.integers().between(0, 3), Arbitraries.integers().between(0, 1 << 20),
                Arbitraries.integers().between(0, 5).map(i -> i == 0)).as(Ev::new);
        return ev.list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 300)
    void incrementalStateEqualsTheOracleAfterEveryEvent(@ForAll("events") List<Ev> events) {
        Harness h = new Harness(ME);
        Map<ResourceKey, Resource> world = new HashMap<>();
        long rev = 0;
        for (Ev e : events) {
            Update u = materialize(e, ++rev);
            apply(world, u);
            h.graph.onUpdates(List.of(u));
            assertThat(h.state.snapshot()).as("after %s", e).isEqualTo(Oracle.compute(ME, world));
            int batches = h.batches.size();
            h.graph.onUpdates(List.of(u));
            assertThat(h.batches).as("replay of %s", e).hasSize(batches);
        }
    }

    @Property(tries = 200)
    void batchingAndReorderingDifferentKeysChangeNothing(@ForAll("events") List<Ev> events,
                                                         @ForAll long seed) {
        Random random = new Random(seed);
        Harness h = new Harness(ME);
        Map<ResourceKey, Resource> world = new HashMap<>();
        List<Update> updates = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            updates.add(materialize(events.get(i), i + 1));
        }
        int i = 0;
        while (i < updates.size()) {
            int n = 1 + random.nextInt(8);
            List<Update> batch = updates.subList(i, Math.min(updates.size(), i + n));
            i += batch.size();
            batch.forEach(u -> apply(world, u));
            h.graph.onUpdates(reorder(batch, random));
            assertThat(h.state.snapshot()).isEqualTo(Oracle.compute(ME, world));
        }
    }

    /** Shuffles the order of keys, keeping each key's own updates in order (what a syncer may do). */
    private static List<Update> reorder(List<Update> batch, Random random) {
        Map<ResourceKey, List<Update>> byKey = new LinkedHashMap<>();
        batch.forEach(u -> byKey.computeIfAbsent(u.key(), k -> new ArrayList<>()).add(u));
        List<List<Update>> groups = new ArrayList<>(byKey.values());
        Collections.shuffle(groups, random);
        return groups.stream().flatMap(List::stream).toList();
    }

    private static void apply(Map<ResourceKey, Resource> world, Update u) {
        if (u.value() == null) {
            world.remove(u.key());
        } else {
            world.put(u.key(), u.value());
        }
    }

    private static final String[] SELECTORS = {"all()", "app == 'a'", "app == 'b'", "has(app)", "!has(app)",
        "app in {'a','b'} && tier == 'x'", "tier != 'x'", "app == 'a' || tier == 'y'"};
    private static final String[] NS_SELECTORS = {null, "team == 'a'", "all()", "global()"};

    private static Update materialize(Ev e, long rev) {
        Resource r = resource(e);
        return e.delete() ? Update.deleted(r.key(), rev) : Update.of(UpdateType.NEW, r, rev);
    }

    private static Resource resource(Ev e) {
        int v = e.variant();
        Random bits = new Random(v);
        String ns = e.name() % 2 == 0 ? "ns1" : "ns2";
        switch (e.kind()) {
            case 0: {
                Map<String, String> l = labelsFor(bits);
                String node = bits.nextInt(3) == 0 ? "n2" : ME;
                String ip = "10.0.0." + (1 + bits.nextInt(4)); // small pool: duplicate IPs happen
                List<String> profiles = new ArrayList<>(List.of("kns." + ns));
                if (bits.nextBoolean()) {
                    profiles.add("p1");
                }
                return wep(ns, "e" + e.name(), node, ip, l,
                        bits.nextBoolean() ? List.of(port("http", 80 + bits.nextInt(2))) : List.of(),
                        profiles.toArray(String[]::new));
            }
            case 1:
                return hep("h" + e.name(), bits.nextBoolean() ? ME : "n2", "192.168.0." + (1 + bits.nextInt(3)),
                        labelsFor(bits), bits.nextBoolean() ? new String[] {"p1"} : new String[0]);
            case 2:
                return e.name() < 2 ? gns("g" + e.name(), labelsFor(bits), "1.1." + bits.nextInt(3) + ".0/24")
                        : netset(ns, "s" + e.name(), labelsFor(bits), "2.2." + bits.nextInt(3) + ".0/24");
            case 3: {
                String name = e.name() == 0 ? "kns.ns1" : e.name() == 1 ? "kns.ns2" : "p1";
                Map<String, String> apply = new HashMap<>();
                if (bits.nextBoolean()) {
                    apply.put("pcns.team", bits.nextBoolean() ? "a" : "b");
                }
                if (bits.nextBoolean()) {
                    apply.put("app", bits.nextBoolean() ? "a" : "b");
                }
                return profile(name, apply, rules(bits), rules(bits));
            }
            case 7: {
                // EndpointSlices of two services, addresses from the endpoints' small pool (shared
                // addresses happen), a port without a number now and then (it contributes nothing).
                String svc = bits.nextBoolean() ? "svc0" : "svc1";
                List<KubernetesEndpointSliceSpec.Endpoint> eps = new ArrayList<>();
                for (int i = bits.nextInt(3); i > 0; i--) {
                    eps.add(new KubernetesEndpointSliceSpec.Endpoint(List.of("10.0.0." + (1 + bits.nextInt(4)))));
                }
                List<KubernetesEndpointSliceSpec.EndpointPort> ports = new ArrayList<>();
                ports.add(new KubernetesEndpointSliceSpec.EndpointPort("http", "TCP", 80 + bits.nextInt(2)));
                if (bits.nextBoolean()) {
                    ports.add(new KubernetesEndpointSliceSpec.EndpointPort("dns", "UDP", bits.nextBoolean() ? 53 : null));
                }
                return new KubernetesEndpointSlice(calico.api.model.ObjectMeta.namespaced(ns, "es" + e.name())
                        .withLabels(Map.of(KubernetesEndpointSliceSpec.SERVICE_NAME_LABEL, svc)),
                        new KubernetesEndpointSliceSpec(svc, eps, ports));
            }
            case 4: {
                String name = e.name() % 2 == 0 ? "default" : "t1";
                Double order = switch (bits.nextInt(3)) {
                    case 0 -> null;
                    case 1 -> 1.0;
                    default -> 2.0;
                };
                return tier(name, order, bits.nextBoolean() ? Action.Pass : null);
            }
            default: {
                String tier = switch (bits.nextInt(4)) {
                    case 0 -> "t1";
                    case 1 -> "t9"; // never created: a missing tier
                    default -> "default";
                };
                Double order = bits.nextInt(3) == 0 ? null : (double) bits.nextInt(3);
                String sel = SELECTORS[bits.nextInt(SELECTORS.length)];
                List<PolicyType> types = switch (bits.nextInt(4)) {
                    case 0 -> List.of(PolicyType.Ingress);
                    case 1 -> List.of(PolicyType.Egress);
                    case 2 -> List.of(PolicyType.Ingress, PolicyType.Egress);
                    default -> List.of();
                };
                List<Rule> in = rules(bits);
                List<Rule> out = rules(bits);
                return switch (e.name()) {
                    case 0 -> gnp("pol0", tier, order, sel, in, out, types.toArray(PolicyType[]::new));
                    case 1 -> np("ns1", "pol1", tier, order, sel, in, out, types.toArray(PolicyType[]::new));
                    // A staged Delete of pol0 (in the drawn tier: it finds pol0 only when the tiers agree).
                    case 2 -> bits.nextInt(3) == 0 ? stagedDelete("pol0", tier) : staged("pol2", tier, order, sel, in);
                    default -> e.kind() == 6
                            ? new StagedNetworkPolicy(calico.api.model.ObjectMeta.namespaced("ns2", "pol3"),
                                    StagedNetworkPolicySpec.of(StagedAction.Set,
                                            np("ns2", "pol3", tier, order, sel, in, out).spec()))
                            : np("ns2", "pol3", tier, order, sel, in, out, types.toArray(PolicyType[]::new));
                };
            }
        }
    }

    private static Map<String, String> labelsFor(Random bits) {
        Map<String, String> l = new HashMap<>();
        int app = bits.nextInt(3);
        if (app > 0) {
            l.put("app", app == 1 ? "a" : "b");
        }
        if (bits.nextBoolean()) {
            l.put("tier", bits.nextBoolean() ? "x" : "y");
        }
        if (bits.nextInt(3) == 0) {
            l.put("projectcalico.org/serviceaccount", "sa1");
        }
        return l;
    }

    private static List<Rule> rules(Random bits) {
        List<Rule> out = new ArrayList<>();
        int n = bits.nextInt(3);
        for (int i = 0; i < n; i++) {
            Action a = Action.values()[bits.nextInt(4)];
            EntityRule src = EntityRule.empty();
            int shape = bits.nextInt(5);
            if (shape >= 1) {
                src = src.withSelector(SELECTORS[bits.nextInt(SELECTORS.length)]);
            }
            if (shape >= 3) {
                src = src.withNamespaceSelector(NS_SELECTORS[bits.nextInt(NS_SELECTORS.length)]);
            }
            EntityRule dst = EntityRule.empty();
            Rule r = new Rule(a, null, null, null, null, null, src, dst, null, null);
            if (bits.nextInt(3) == 0) {
                r = r.withProtocol(Protocol.TCP).withDestination(dst.withSelector(SELECTORS[bits.nextInt(SELECTORS.length)])
                        .withPorts(List.of(Port.named("http"), Port.of(443))));
            }
            if (bits.nextInt(4) == 0) {
                r = r.withSource(src.withNotNets(List.of("10.0.0.0/30")));
            }
            if (bits.nextInt(5) == 0) {
                r = r.withSource(new EntityRule(null, null, null, null, null, SELECTORS[bits.nextInt(SELECTORS.length)],
                        null, bits.nextBoolean() ? null : new EntityRule.ServiceAccountMatch(List.of("sa1"), null), null));
            }
            if (bits.nextInt(4) == 0) {
                // a services match (namespace given, or the policy's), on either side
                EntityRule svc = new EntityRule(null, null, null, null, null, null, null, null,
                        new EntityRule.ServiceMatch(bits.nextBoolean() ? "svc0" : "svc1", bits.nextBoolean() ? "ns1" : null));
                r = bits.nextBoolean() ? r.withDestination(svc) : r.withSource(svc);
            }
            out.add(r);
        }
        return out;
    }
}
