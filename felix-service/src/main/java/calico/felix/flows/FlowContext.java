package calico.felix.flows;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.HitTable;
import calico.api.model.Action;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.RuleRenderer;
import calico.felix.flows.FlowEndpoint.Type;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * An immutable snapshot of what the collector needs from the dataplane's model: endpoints by
 * address, the NFLOG prefixes the renderer emits for it ({@link RuleRenderer#hitTable}), and the
 * compiled policies, profiles and IP sets to evaluate staged policies in user space. Built under
 * the model's lock (see {@code FlowLogs.context}); read by the collector's threads.
 */
public final class FlowContext {

    /** One step of a policy trace, in traversal order. */
    public record TraceHit(PolicyId policy, String profile, String tier, Action action, int ruleIndex,
                           boolean endOfTier, PolicyId trigger) {
    }

    public static final FlowContext EMPTY = new FlowContext(Map.of(), List.of(), HitTable.EMPTY, Map.of(), Map.of(),
            Map.of(), new FlowLookups(), true, false);

    private final Map<IpAddress, FlowEndpoint> byAddress;
    private final List<Map.Entry<Cidr, FlowEndpoint>> byNet;
    private final HitTable hits;
    private final Map<PolicyId, CompiledPolicy> policies;
    private final Map<String, CompiledPolicy> profiles;
    private final Map<String, DataplaneModel.IpSet> ipSets;
    /** Live, not a snapshot: remote endpoints and network sets change without a new context. */
    private final FlowLookups lookups;
    /** Whether flows carry the pending trace ({@code flowLogsPolicyEvaluationMode}). */
    private final boolean pendingTraces;
    /** Whether the model had folded in InSync: every local endpoint is known. */
    private final boolean inSync;

    private FlowContext(Map<IpAddress, FlowEndpoint> byAddress, List<Map.Entry<Cidr, FlowEndpoint>> byNet,
                        HitTable hits, Map<PolicyId, CompiledPolicy> policies, Map<String, CompiledPolicy> profiles,
                        Map<String, DataplaneModel.IpSet> ipSets, FlowLookups lookups, boolean pendingTraces,
                        boolean inSync) {
        this.inSync = inSync;
        this.lookups = lookups;
        this.pendingTraces = pendingTraces;
        this.byAddress = byAddress;
        this.byNet = byNet;
        this.hits = hits;
        this.policies = policies;
        this.profiles = profiles;
        this.ipSets = ipSets;
    }

    /** The snapshot of {@code model} (local workloads and host endpoints by their addresses), no lookups. */
    public static FlowContext of(DataplaneModel model) {
        return of(model, new FlowLookups());
    }

    /**
     * The snapshot of {@code model} with the remote endpoints and network sets of {@code lookups}
     * (which stay live) behind it; local host endpoints take their labels from there.
     */
    static FlowContext of(DataplaneModel model, FlowLookups lookups) {
        Map<IpAddress, FlowEndpoint> byAddress = new HashMap<>();
        List<Map.Entry<Cidr, FlowEndpoint>> byNet = new ArrayList<>();
        model.workloads().values().forEach(w -> {
            FlowEndpoint e = new FlowEndpoint(Type.WORKLOAD,
                    FlowEndpoint.workloadName(w.id(), w.identity().generateName()), FlowEndpoint.namespaceOf(w.id()),
                    w.ingress(), w.egress(), w.profileIds(), true, FlowEndpoint.labelStrings(w.identity().labels()));
            for (String n : concat(w.ipv4Nets(), w.ipv6Nets())) {
                Cidr.tryParseCidrOrIp(n).ifPresent(c -> {
                    if (c.isSingleAddress()) {
                        byAddress.put(c.address(), e);
                    } else {
                        byNet.add(Map.entry(c, e));
                    }
                });
            }
        });
        model.hostEndpoints().values().forEach(h -> {
            int slash = h.id().indexOf('/');
            String name = slash < 0 ? h.id() : h.id().substring(slash + 1);
            List<String> labels = lookups.hostEndpointLabels(name);
            FlowEndpoint e = new FlowEndpoint(Type.HOST_ENDPOINT, name, "", h.ingress(), h.egress(), h.profileIds(),
                    true, labels == null ? List.of() : labels);
            concat(h.expectedIpv4(), h.expectedIpv6()).forEach(a -> Cidr.tryParseCidrOrIp(a)
                    .ifPresent(c -> byAddress.putIfAbsent(c.address(), e)));
        });
        return new FlowContext(Map.copyOf(byAddress), List.copyOf(byNet), RuleRenderer.hitTable(model),
                Map.copyOf(model.policies()), Map.copyOf(model.profiles()), Map.copyOf(model.ipSets()), lookups,
                model.config().flowLogsPendingTraces(), model.inSync());
    }

    /** {@return whether the model this was built from was in sync}: an address no local endpoint has now is not local. */
    boolean inSync() {
        return inSync;
    }

    /** {@return whether flows carry the pending trace}: {@code flowLogsPolicyEvaluationMode} is {@code Continuous}. */
    boolean pendingTraces() {
        return pendingTraces;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    public HitTable hits() {
        return hits;
    }

    /**
     * The endpoint an address belongs to, looked up as Calico's collector does: a local endpoint,
     * else a remote workload or host endpoint, else the network set with the longest prefix
     * containing it, else a public or private network.
     */
    public FlowEndpoint endpoint(InetAddress a) {
        IpAddress ip = IpAddress.of(a.getAddress());
        FlowEndpoint e = byAddress.get(ip);
        if (e != null) {
            return e;
        }
        for (Map.Entry<Cidr, FlowEndpoint> n : byNet) {
            if (n.getKey().contains(ip)) {
                return n.getValue();
            }
        }
        e = lookups.endpoint(ip);
        if (e == null) {
            e = lookups.networkSet(ip);
        }
        if (e != null) {
            return e;
        }
        return FlowEndpoint.network(privateAddress(a));
    }

    /**
     * {@return the Kubernetes Service a connection dialled}, from its destination before DNAT
     * (address, port, IP protocol number), or null when no service has that address and port or
     * that NodePort.
     */
    ServiceIndex.ServiceName service(InetAddress preDnatAddress, int preDnatPort, int protocol) {
        return lookups.service(preDnatAddress, preDnatPort, protocol);
    }

    /** Private: RFC 1918 (IPv4 site-local), loopback, link-local, IPv6 unique local (fc00::/7). */
    static boolean privateAddress(InetAddress a) {
        return a.isSiteLocalAddress() || a.isLoopbackAddress() || a.isLinkLocalAddress() || uniqueLocal(a);
    }

    private static boolean uniqueLocal(InetAddress a) {
        byte[] b = a.getAddress();
        return b.length == 16 && (b[0] & 0xfe) == 0xfc;
    }

    /**
     * The trace the endpoint's policy gives a connection's first packet, evaluated here: tiers in
     * order, each policy's rules in order, end of tier, then profiles. With {@code staged} the staged
     * policies count as enforced and a staged delete hides its target (the pending trace); without it
     * they are skipped, as the kernel does.
     *
     * @param inbound the endpoint's ingress (else egress)
     */
    public List<TraceHit> trace(FlowEndpoint ep, boolean inbound, Packet p, boolean staged) {
        List<TraceHit> out = new ArrayList<>();
        for (TierPolicies tier : inbound ? ep.ingress() : ep.egress()) {
            List<PolicyId> active = staged ? pending(tier.policies())
                    : tier.policies().stream().filter(id -> !id.staged()).toList();
            if (active.isEmpty() && !tier.missing()) {
                continue;
            }
            PolicyId trigger = null;
            boolean passed = false;
            for (PolicyId id : active) {
                trigger = trigger == null ? id : trigger;
                CompiledPolicy cp = policies.get(id);
                if (cp == null) {
                    out.add(new TraceHit(id, null, tier.tier(), Action.Deny, -1, false, null));
                    return out;
                }
                TraceHit h = firstMatch(cp, inbound, p, id, null, tier.tier());
                if (h != null) {
                    out.add(h);
                    if (h.action() != Action.Pass) {
                        return out;
                    }
                    passed = true;
                    break;
                }
            }
            if (passed) {
                continue;
            }
            Action def = tier.missing() || tier.defaultAction() == null ? Action.Deny : tier.defaultAction();
            out.add(new TraceHit(null, null, tier.tier(), def, -1, true, trigger));
            if (def != Action.Pass) {
                return out;
            }
        }
        for (String profile : ep.profiles()) {
            CompiledPolicy cp = profiles.get(profile);
            TraceHit h = cp == null ? null : firstMatch(cp, inbound, p, null, profile, null);
            if (h != null && h.action() != Action.Pass) {
                out.add(h);
                return out;
            }
        }
        out.add(new TraceHit(null, null, null, Action.Deny, -1, false, null)); // no profile accepted
        return out;
    }

    /**
     * The policies the pending trace evaluates: staged ones count as enforced, except that a staged
     * delete removes itself and the enforced policy it names, as if that were deleted.
     */
    private List<PolicyId> pending(List<PolicyId> tier) {
        java.util.Set<PolicyId> deleted = new java.util.HashSet<>();
        for (PolicyId id : tier) {
            CompiledPolicy cp = id.staged() ? policies.get(id) : null;
            if (cp != null && cp.deletes() != null) {
                deleted.add(id);
                deleted.add(cp.deletes());
            }
        }
        return deleted.isEmpty() ? tier : tier.stream().filter(id -> !deleted.contains(id)).toList();
    }

    private TraceHit firstMatch(CompiledPolicy cp, boolean inbound, Packet p, PolicyId id, String profile,
                                String tier) {
        List<CompiledRule> rules = inbound ? cp.inbound() : cp.outbound();
        for (int i = 0; i < rules.size(); i++) {
            CompiledRule r = rules.get(i);
            if (r.action() != Action.Log && matches(r, p)) {
                return new TraceHit(id, profile, tier, r.action(), i, false, null);
            }
        }
        return null;
    }

    /** A packet as the rule matcher sees it. */
    public record Packet(InetAddress src, InetAddress dst, int protocol, int srcPort, int dstPort) {
    }

    boolean matches(CompiledRule r, Packet p) {
        IpAddress src = IpAddress.of(p.src().getAddress());
        IpAddress dst = IpAddress.of(p.dst().getAddress());
        if (r.ipVersion() != null && r.ipVersion() != src.version()) {
            return false;
        }
        if (r.protocol() != null && protocolNumber(r.protocol()) != p.protocol()) {
            return false;
        }
        if (r.notProtocol() != null && protocolNumber(r.notProtocol()) == p.protocol()) {
            return false;
        }
        if ((r.icmp() != null || r.notIcmp() != null) && p.protocol() != 1 && p.protocol() != 58) {
            return false; // ICMP type and code are not in the tuple: only the protocol is checked
        }
        return side(r.source(), src, p.protocol(), p.srcPort()) && side(r.destination(), dst, p.protocol(),
                p.dstPort());
    }

    private boolean side(CompiledRule.Side s, IpAddress ip, int proto, int port) {
        if (!s.nets().isEmpty() && s.nets().stream().noneMatch(n -> inNet(n, ip))) {
            return false;
        }
        if (s.notNets().stream().anyMatch(n -> inNet(n, ip))) {
            return false;
        }
        if (!s.ipSetIds().stream().allMatch(id -> inSet(id, ip))) {
            return false;
        }
        if (s.notIpSetIds().stream().anyMatch(id -> inSet(id, ip))) {
            return false;
        }
        if (s.notPorts().stream().anyMatch(pr -> inPorts(pr, port))) {
            return false;
        }
        if (s.notNamedPortIpSetIds().stream().anyMatch(id -> inNamedPortSet(id, ip, proto, port))) {
            return false;
        }
        if (s.ports().isEmpty() && s.namedPortIpSetIds().isEmpty()) {
            return true;
        }
        return s.ports().stream().anyMatch(pr -> inPorts(pr, port))
                || s.namedPortIpSetIds().stream().anyMatch(id -> inNamedPortSet(id, ip, proto, port));
    }

    private static boolean inNet(String net, IpAddress ip) {
        return Cidr.tryParseCidrOrIp(net).map(c -> c.address().version() == ip.version() && c.contains(ip))
                .orElse(false);
    }

    private boolean inSet(String id, IpAddress ip) {
        DataplaneModel.IpSet s = ipSets.get(id);
        return s != null && s.members().stream().anyMatch(m -> m.cidr().address().version() == ip.version()
                && m.cidr().contains(ip));
    }

    private boolean inNamedPortSet(String id, IpAddress ip, int proto, int port) {
        DataplaneModel.IpSet s = ipSets.get(id);
        return s != null && s.members().stream().anyMatch(m -> namedPortMember(m, ip, proto, port));
    }

    private static boolean namedPortMember(IpSetMember m, IpAddress ip, int proto, int port) {
        return m.port() == port && m.protocol() != null && protocolNumber(m.protocol()) == proto
                && m.cidr().address().version() == ip.version() && m.cidr().contains(ip);
    }

    private static boolean inPorts(String range, int port) {
        int colon = range.indexOf(':');
        try {
            if (colon < 0) {
                return Integer.parseInt(range.strip()) == port;
            }
            return port >= Integer.parseInt(range.substring(0, colon).strip())
                    && port <= Integer.parseInt(range.substring(colon + 1).strip());
        } catch (NumberFormatException e) {
            return false; // a named port never reaches the dataplane as text
        }
    }

    /** IANA number of a protocol name or number as rules carry it; -1 when unknown. */
    public static int protocolNumber(String p) {
        return switch (p.toLowerCase(Locale.ROOT)) {
            case "tcp" -> 6;
            case "udp" -> 17;
            case "icmp" -> 1;
            case "icmpv6", "ipv6-icmp" -> 58;
            case "sctp" -> 132;
            case "udplite" -> 136;
            default -> {
                try {
                    yield Integer.parseInt(p.strip());
                } catch (NumberFormatException e) {
                    yield -1;
                }
            }
        };
    }

    /** {@return the lower-case name goldmane shows for a protocol number} */
    public static String protocolName(int n) {
        return switch (n) {
            case 6 -> "tcp";
            case 17 -> "udp";
            case 1 -> "icmp";
            case 58 -> "icmp6";
            case 132 -> "sctp";
            default -> Integer.toString(n);
        };
    }
}
