package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.node;
import static calico.felix.calc.InfraFixtures.pool;
import static calico.felix.calc.InfraFixtures.set;
import static calico.felix.calc.InfraFixtures.wep;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.felix.calc.DataplaneUpdate.RouteType;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.libcalico.syncer.Update;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * RouteCalculator's incremental output, applied to a map, equals a from-scratch computation
 * over the current resources after every event. The oracle below is deliberately naive: it
 * rebuilds every claim and scans every pool each time. Small value sets make collisions
 * (duplicate IPs, a workload on a host's IP, overlapping pools, moves) frequent.
 */
class RouteCalculatorPropertiesTest {

    private static final String HOST = "node-a";
    private static final List<String> NODES = List.of("node-a", "node-b", "node-c");
    private static final List<String> EP_IPS = List.of("10.0.0.1/32", "10.0.0.2/32", "10.0.1.1/32", "192.168.0.2/32",
            "fd00::1/128", "10.0.0.0/30");
    private static final List<String> NODE_V4 = List.of("192.168.0.1/24", "192.168.0.2/24", "192.168.0.3/24");
    private static final List<String> POOL_CIDRS = List.of("10.0.0.0/8", "10.0.0.0/16", "10.0.0.0/24",
            "192.168.0.0/16", "fd00::/64", "0.0.0.0/0", "10.0.0.0/30");

    sealed interface Op permits SetEndpoint, DelEndpoint, SetNode, DelNode, SetPool, DelPool {
    }

    record SetEndpoint(int ep, String node, String iface, List<String> ips) implements Op {
    }

    record DelEndpoint(int ep) implements Op {
    }

    record SetNode(String node, String v4, String v6) implements Op {
    }

    record DelNode(String node) implements Op {
    }

    record SetPool(int pool, String cidr, boolean nat) implements Op {
    }

    record DelPool(int pool) implements Op {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Integer> ep = Arbitraries.integers().between(0, 4);
        Arbitrary<String> nodeName = Arbitraries.of(NODES);
        Arbitrary<Op> setEp = Combinators.combine(ep, Arbitraries.of("node-a", "node-b", "node-c", ""),
                        Arbitraries.of("cali0", "cali1"), Arbitraries.of(EP_IPS).list().ofMaxSize(3))
                .as((e, n, i, ips) -> new SetEndpoint(e, n.isEmpty() ? null : n, i, ips));
        Arbitrary<Op> setNode = Combinators.combine(nodeName, Arbitraries.of(NODE_V4).injectNull(0.2),
                        Arbitraries.of("fd00::a/64", "fd00::b/64").injectNull(0.5))
                .as(SetNode::new);
        Arbitrary<Op> setPool = Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.of(POOL_CIDRS),
                Arbitraries.of(true, false)).as(SetPool::new);
        Arbitrary<Op> any = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, setEp),
                net.jqwik.api.Tuple.of(2, ep.map(DelEndpoint::new)),
                net.jqwik.api.Tuple.of(3, setNode),
                net.jqwik.api.Tuple.of(1, nodeName.map(DelNode::new)),
                net.jqwik.api.Tuple.of(2, setPool),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 2).map(DelPool::new)));
        return any.list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 300)
    void incrementalRoutesEqualFromScratchAfterEveryEvent(@ForAll("ops") List<Op> ops) {
        Dispatcher dispatcher = new Dispatcher();
        InfraRecorder out = new InfraRecorder(); // also fails on no-op updates and removes of unknown keys
        new RouteCalculator(HOST, out).registerWith(dispatcher);
        Model model = new Model();

        for (Op op : ops) {
            dispatcher.onUpdates(List.of(model.apply(op)));
            assertThat(out.routes()).as("after %s", op).isEqualTo(model.routes());
        }
    }

    /** The current resources, and the naive recomputation. */
    static final class Model {
        final Map<Integer, SetEndpoint> endpoints = new HashMap<>();
        final Map<String, SetNode> nodes = new HashMap<>();
        final Map<Integer, SetPool> pools = new HashMap<>();

        Update apply(Op op) {
            if (op instanceof SetEndpoint e) {
                endpoints.put(e.ep(), e);
                return set(wep("ns", "e" + e.ep(), e.node(), e.iface(), e.ips().toArray(String[]::new)));
            }
            if (op instanceof DelEndpoint e) {
                endpoints.remove(e.ep());
                return deleted(ResourceKind.WORKLOAD_ENDPOINT, "ns", "e" + e.ep());
            }
            if (op instanceof SetNode n) {
                nodes.put(n.node(), n);
                return set(node(n.node(), n.v4(), n.v6()));
            }
            if (op instanceof DelNode n) {
                nodes.remove(n.node());
                return deleted(ResourceKind.NODE, n.node());
            }
            if (op instanceof SetPool p) {
                pools.put(p.pool(), p);
                return set(pool("p" + p.pool(), p.cidr(), p.nat()));
            }
            if (op instanceof DelPool p) {
                pools.remove(p.pool());
                return deleted(ResourceKind.IP_POOL, "p" + p.pool());
            }
            throw new AssertionError(op);
        }

        Map<String, RouteUpdate> routes() {
            // destination -> (claimant key text -> route it would produce, before pool annotation)
            Map<Cidr, TreeMap<String, RouteUpdate>> claims = new HashMap<>();
            endpoints.forEach((i, e) -> {
                if (e.node() == null) {
                    return;
                }
                String key = ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "ns", "e" + i).toString();
                for (String ip : e.ips()) {
                    Cidr dst = Cidr.parse(ip).network();
                    boolean local = e.node().equals(HOST);
                    claims.computeIfAbsent(dst, d -> new TreeMap<>()).put(key, new RouteUpdate(dst.toString(),
                            local ? RouteType.LOCAL_WORKLOAD : RouteType.REMOTE_WORKLOAD, e.node(),
                            nodeIp(e.node(), dst.version()), local ? e.iface() : null, null, false));
                }
            });
            nodes.values().forEach(n -> {
                for (String a : new String[] {n.v4(), n.v6()}) {
                    if (a == null) {
                        continue;
                    }
                    Cidr dst = Cidr.of(Cidr.parse(a).address());
                    claims.computeIfAbsent(dst, d -> new TreeMap<>()).put(ResourceKey.of(ResourceKind.NODE, n.node())
                            .toString(), new RouteUpdate(dst.toString(), n.node().equals(HOST) ? RouteType.LOCAL_HOST
                            : RouteType.REMOTE_HOST, n.node(), dst.address().toString(), null, null, false));
                }
            });
            Map<String, RouteUpdate> out = new TreeMap<>();
            claims.forEach((dst, byClaimant) -> {
                RouteUpdate r = byClaimant.firstEntry().getValue();
                String bestName = null;
                Cidr best = null;
                boolean nat = false;
                for (var p : new TreeMap<>(pools).entrySet()) {
                    Cidr c = Cidr.parse(p.getValue().cidr());
                    String name = "p" + p.getKey();
                    if (c.contains(dst) && (best == null || c.prefixLength() > best.prefixLength())) {
                        best = c;
                        bestName = name;
                        nat = p.getValue().nat();
                    }
                }
                out.put(r.dst(), new RouteUpdate(r.dst(), r.type(), r.dstNode(), r.dstNodeIp(), r.interfaceName(),
                        bestName, nat));
            });
            return out;
        }

        private String nodeIp(String node, int version) {
            SetNode n = nodes.get(node);
            String a = n == null ? null : version == 4 ? n.v4() : n.v6();
            return a == null ? null : Cidr.parse(a).address().toString();
        }
    }

}
