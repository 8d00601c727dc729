package calico.felix.dataplane.rules;

import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.ActivePolicyRemove;
import calico.felix.calc.DataplaneUpdate.ActivePolicyUpdate;
import calico.felix.calc.DataplaneUpdate.ActiveProfileRemove;
import calico.felix.calc.DataplaneUpdate.ActiveProfileUpdate;
import calico.felix.calc.DataplaneUpdate.ConfigUpdate;
import calico.felix.calc.DataplaneUpdate.FlowLookupRemove;
import calico.felix.calc.DataplaneUpdate.FlowLookupUpdate;
import calico.felix.calc.DataplaneUpdate.HostEndpointRemove;
import calico.felix.calc.DataplaneUpdate.HostEndpointUpdate;
import calico.felix.calc.DataplaneUpdate.HostMetadataRemove;
import calico.felix.calc.DataplaneUpdate.HostMetadataUpdate;
import calico.felix.calc.DataplaneUpdate.InSync;
import calico.felix.calc.DataplaneUpdate.IpPoolRemove;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.DataplaneUpdate.IpSetDeltaUpdate;
import calico.felix.calc.DataplaneUpdate.IpSetRemove;
import calico.felix.calc.DataplaneUpdate.IpSetUpdate;
import calico.felix.calc.DataplaneUpdate.RouteRemove;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.ServiceLookupUpdate;
import calico.felix.calc.DataplaneUpdate.WireguardEndpointRemove;
import calico.felix.calc.DataplaneUpdate.WireguardEndpointUpdate;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointRemove;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one model of the dataplane: everything the calculation graph has told it, folded in batch
 * order, with the graph's output protocol checked once, here (felix-service/DESIGN.md invariant
 * 4). Every consumer reads this fold: the policy drivers render it ({@link RuleRenderer}), a
 * driver started by a backend switch renders it whole, the admin API and metrics show it, flow
 * logs name endpoints and decode NFLOG prefixes from it ({@link HitTable}).
 *
 * <p><b>Protocol violations</b> (an upstream bug, never bad user input) are all logged, counted
 * ({@link #violations()}) and kept in {@link #errors()} (felix then reports the dataplane not
 * ready); the rest of the batch is applied. Each then has one fixed outcome, chosen so that the
 * rules rendered from the model fail closed and can always be written:
 * <ul>
 *   <li>applied as the stream says, since the renderer handles what is missing: a policy or
 *       profile naming an unknown IP set, or a remove of a set a rule still names (the set is
 *       programmed empty); an endpoint naming an unknown policy, or a remove of a policy an
 *       endpoint still names (a DROP in the policy's place); an IP set delta removing an absent
 *       member or adding a present one (the set ends as the delta says);
 *   <li>skipped, since it would leave a rule jumping to a chain that does not exist and fail every
 *       write: an endpoint naming an unknown profile, a remove of a profile an endpoint still names;
 *   <li>nothing to apply: a delta for an unknown IP set, a remove of something unknown, a second
 *       {@code InSync}; an unusable rule setting in a ConfigUpdate (e.g. {@code iptablesMarkMask})
 *       keeps the previous rule settings (the rest of the config applies).
 * </ul>
 * Flow-log lookups describe no dataplane state and are not modelled (flow logs index them).
 *
 * <p><b>Threads.</b> One thread writes ({@link #apply}: the syncer's for the in-memory dataplane,
 * the dataplane thread for the kernel one) and may read the accessors freely; they return live
 * unmodifiable views. Any other thread reads through {@link #read} (under the model's lock, which
 * {@link #apply} holds for a whole batch), copying what it keeps; the counters are safe anywhere.
 * Updates are kept as the objects they came in, so {@code ==} on a policy or an IP set means
 * "unchanged" (the renderer's and the iptables driver's caches rely on it).
 */
public final class DataplaneModel {

    private static final Logger log = LoggerFactory.getLogger(DataplaneModel.class);
    private static final int KEPT_ERRORS = 100;

    /** An IP set's type and members; replaced (a new object) on every change. */
    public record IpSet(IpSetType type, Set<IpSetMember> members) {
        public IpSet {
            members = Set.copyOf(members);
        }
    }

    private final Map<String, IpSet> ipSets = new TreeMap<>();
    private final Map<PolicyId, CompiledPolicy> policies = new LinkedHashMap<>();
    private final Map<String, CompiledPolicy> profiles = new TreeMap<>();
    private final Map<String, WorkloadEndpointUpdate> workloads = new TreeMap<>();
    private final Map<String, HostEndpointUpdate> hostEndpoints = new TreeMap<>();
    private final Map<String, IpPoolUpdate> pools = new TreeMap<>();
    private final Map<String, HostMetadataUpdate> hosts = new TreeMap<>();
    private final Map<String, RouteUpdate> routes = new TreeMap<>();
    private final Map<String, WireguardEndpointUpdate> wireguardEndpoints = new TreeMap<>();
    private final Map<String, DataplaneUpdate.WireguardEndpointV6Update> wireguardEndpointsV6 = new TreeMap<>();
    private final Map<String, DataplaneUpdate.VtepUpdate> vteps = new TreeMap<>();
    /** This node's IPIP tunnel address (at most one entry: only this node's is sent). */
    private final Map<String, DataplaneUpdate.IpipTunnelAddressUpdate> ipipTunnelAddresses = new TreeMap<>();
    /** The policies the last {@link #apply} changed, as they were before it (empty: absent). */
    private final Map<PolicyId, Optional<CompiledPolicy>> policiesBefore = new HashMap<>();
    private ConfigUpdate config;
    private List<String> serviceCidrs = List.of();
    private RuleSettings settings = RuleSettings.defaults();
    private MarkBits marks = MarkBits.defaults();
    /** kube-proxy's IPVS mode, as the kernel dataplane found it (not part of the stream: a fact of the kernel). */
    private boolean kubeIpvs;
    private List<String> interfacePrefixes = FelixSettings.defaults().interfacePrefixes();
    private boolean inSync;
    /** Changes whenever a policy ID is added or removed (not when a policy is updated). */
    private long policyKeys;
    private final Deque<String> errors = new ArrayDeque<>();
    private final Fold fold = new Fold();

    // Safe to read from any thread.
    private volatile long violations;
    private volatile long version;
    private volatile int ipSetCount;
    private volatile int memberCount;
    private volatile int policyCount;
    private volatile int endpointCount;

    public DataplaneModel() {
    }

    // ---- Writing

    /** Folds one batch in, in order; never throws (see the class comment for violations). */
    public synchronized void apply(List<DataplaneUpdate> batch) {
        policiesBefore.clear();
        for (DataplaneUpdate u : batch) {
            u.accept(fold);
        }
        ipSetCount = ipSets.size();
        memberCount += fold.memberDelta;
        fold.memberDelta = 0;
        policyCount = policies.size();
        endpointCount = workloads.size() + hostEndpoints.size();
        version++;
    }

    /** Folds one update in (tests and tools; the dataplanes apply whole batches). */
    public void apply(DataplaneUpdate u) {
        apply(List.of(u));
    }

    private void violation(String what) {
        violations++;
        log.error("Dataplane protocol violation: {}", what);
        errors.addLast(what);
        if (errors.size() > KEPT_ERRORS) {
            errors.removeFirst();
        }
    }

    /**
     * The one dispatch over the stream. A violation is recorded; the update is then applied
     * unless noted ("skipped"): the renderer fails closed on what it names and lacks.
     */
    private final class Fold implements DataplaneUpdate.Visitor<Void> {
        int memberDelta;

        @Override
        public Void configUpdate(ConfigUpdate c) {
            config = c;
            interfacePrefixes = c.settings().interfacePrefixes();
            try {
                RuleSettings nextSettings = RuleSettings.from(c.settings()).withKubeIpvs(kubeIpvs);
                MarkBits nextMarks = MarkBits.fromMask(c.settings().iptablesMarkMask());
                settings = nextSettings;
                marks = nextMarks;
            } catch (RuntimeException e) {
                violation("config: " + e.getMessage() + " (the previous rule settings and mark bits stay)");
            }
            return null;
        }

        @Override
        public Void serviceCidrsUpdate(DataplaneUpdate.ServiceCidrsUpdate c) {
            serviceCidrs = c.cidrs();
            return null;
        }

        @Override
        public Void hostMetadataUpdate(HostMetadataUpdate h) {
            hosts.put(h.hostname(), h);
            return null;
        }

        @Override
        public Void hostMetadataRemove(HostMetadataRemove h) {
            if (hosts.remove(h.hostname()) == null) {
                violation("remove of unknown host " + h.hostname());
            }
            return null;
        }

        @Override
        public Void ipPoolUpdate(IpPoolUpdate p) {
            pools.put(p.name(), p);
            return null;
        }

        @Override
        public Void ipPoolRemove(IpPoolRemove p) {
            if (pools.remove(p.name()) == null) {
                violation("remove of unknown IP pool " + p.name());
            }
            return null;
        }

        @Override
        public Void routeUpdate(RouteUpdate r) {
            routes.put(r.dst(), r);
            return null;
        }

        @Override
        public Void routeRemove(RouteRemove r) {
            if (routes.remove(r.dst()) == null) {
                violation("remove of unknown route " + r.dst());
            }
            return null;
        }

        @Override
        public Void vtepUpdate(DataplaneUpdate.VtepUpdate v) {
            vteps.put(v.node(), v);
            return null;
        }

        @Override
        public Void vtepRemove(DataplaneUpdate.VtepRemove v) {
            if (vteps.remove(v.node()) == null) {
                violation("remove of unknown VTEP " + v.node());
            }
            return null;
        }

        @Override
        public Void ipipTunnelAddressUpdate(DataplaneUpdate.IpipTunnelAddressUpdate t) {
            ipipTunnelAddresses.put(t.node(), t);
            return null;
        }

        @Override
        public Void ipipTunnelAddressRemove(DataplaneUpdate.IpipTunnelAddressRemove t) {
            if (ipipTunnelAddresses.remove(t.node()) == null) {
                violation("remove of unknown IPIP tunnel address of " + t.node());
            }
            return null;
        }

        @Override
        public Void inSync(InSync u) {
            if (inSync) {
                violation("InSync received twice");
            }
            inSync = true;
            return null;
        }

        @Override
        public Void ipSetUpdate(IpSetUpdate s) {
            IpSet old = ipSets.put(s.id(), new IpSet(s.type(), s.members()));
            memberDelta += s.members().size() - (old == null ? 0 : old.members().size());
            return null;
        }

        @Override
        public Void ipSetDeltaUpdate(IpSetDeltaUpdate d) {
            IpSet old = ipSets.get(d.id());
            if (old == null) {
                violation("delta for unknown IP set " + d.id() + " (skipped)");
                return null;
            }
            for (IpSetMember m : d.removed()) {
                if (!old.members().contains(m)) {
                    violation("delta removes absent member " + m + " of IP set " + d.id());
                    break;
                }
            }
            for (IpSetMember m : d.added()) {
                if (old.members().contains(m) && !d.removed().contains(m)) {
                    violation("delta adds present member " + m + " to IP set " + d.id());
                    break;
                }
            }
            Set<IpSetMember> members = new HashSet<>(old.members());
            members.removeAll(d.removed());
            members.addAll(d.added());
            ipSets.put(d.id(), new IpSet(old.type(), members));
            memberDelta += members.size() - old.members().size();
            return null;
        }

        @Override
        public Void ipSetRemove(IpSetRemove r) {
            IpSet old = ipSets.remove(r.id());
            if (old == null) {
                violation("remove of unknown IP set " + r.id());
                return null;
            }
            memberDelta -= old.members().size();
            if (Stream.concat(policies.values().stream(), profiles.values().stream()).flatMap(CompiledPolicy::ipSetIds)
                    .anyMatch(r.id()::equals)) {
                violation("remove of IP set " + r.id() + " still used by a rule (programmed empty)");
            }
            return null;
        }

        @Override
        public Void activePolicyUpdate(ActivePolicyUpdate p) {
            String missing = missingIpSet(p.policy());
            if (missing != null) {
                violation("policy " + p.id() + " refers to unknown IP set " + missing + " (programmed empty)");
            }
            CompiledPolicy old = policies.put(p.id(), p.policy());
            policiesBefore.putIfAbsent(p.id(), Optional.ofNullable(old));
            if (old == null) {
                policyKeys++;
            }
            return null;
        }

        @Override
        public Void activePolicyRemove(ActivePolicyRemove p) {
            CompiledPolicy old = policies.remove(p.id());
            if (old == null) {
                violation("remove of unknown policy " + p.id());
                return null;
            }
            policiesBefore.putIfAbsent(p.id(), Optional.of(old));
            policyKeys++;
            if (endpointPolicies().anyMatch(p.id()::equals)) {
                violation("remove of policy " + p.id() + " still used by an endpoint (denies in its place)");
            }
            return null;
        }

        @Override
        public Void activeProfileUpdate(ActiveProfileUpdate p) {
            String missing = missingIpSet(p.profile());
            if (missing != null) {
                violation("profile " + p.name() + " refers to unknown IP set " + missing + " (programmed empty)");
            }
            profiles.put(p.name(), p.profile());
            return null;
        }

        @Override
        public Void activeProfileRemove(ActiveProfileRemove p) {
            if (!profiles.containsKey(p.name())) {
                violation("remove of unknown profile " + p.name());
            } else if (workloads.values().stream().anyMatch(w -> w.profileIds().contains(p.name()))
                    || hostEndpoints.values().stream().anyMatch(h -> h.profileIds().contains(p.name()))) {
                violation("remove of profile " + p.name() + " still used by an endpoint (skipped)");
            } else {
                profiles.remove(p.name());
            }
            return null;
        }

        @Override
        public Void workloadEndpointUpdate(WorkloadEndpointUpdate w) {
            String profile = missingProfile(w.profileIds());
            if (profile != null) {
                violation("workload endpoint " + w.id() + " refers to unknown profile " + profile + " (skipped)");
                return null;
            }
            PolicyId policy = missingPolicy(Stream.of(w.ingress(), w.egress()));
            if (policy != null) {
                violation("workload endpoint " + w.id() + " refers to unknown policy " + policy
                        + " (denies in its place)");
            }
            workloads.put(w.id(), w);
            return null;
        }

        @Override
        public Void workloadEndpointRemove(WorkloadEndpointRemove w) {
            if (workloads.remove(w.id()) == null) {
                violation("remove of unknown workload endpoint " + w.id());
            }
            return null;
        }

        @Override
        public Void hostEndpointUpdate(HostEndpointUpdate h) {
            String profile = missingProfile(h.profileIds());
            if (profile != null) {
                violation("host endpoint " + h.id() + " refers to unknown profile " + profile + " (skipped)");
                return null;
            }
            PolicyId policy = missingPolicy(tiersOf(h));
            if (policy != null) {
                violation("host endpoint " + h.id() + " refers to unknown policy " + policy + " (denies in its place)");
            }
            hostEndpoints.put(h.id(), h);
            return null;
        }

        @Override
        public Void hostEndpointRemove(HostEndpointRemove h) {
            if (hostEndpoints.remove(h.id()) == null) {
                violation("remove of unknown host endpoint " + h.id());
            }
            return null;
        }

        @Override
        public Void wireguardEndpointUpdate(WireguardEndpointUpdate w) {
            wireguardEndpoints.put(w.hostname(), w);
            return null;
        }

        @Override
        public Void wireguardEndpointRemove(WireguardEndpointRemove w) {
            if (wireguardEndpoints.remove(w.hostname()) == null) {
                violation("remove of unknown WireGuard endpoint " + w.hostname());
            }
            return null;
        }

        @Override
        public Void wireguardEndpointV6Update(DataplaneUpdate.WireguardEndpointV6Update w) {
            wireguardEndpointsV6.put(w.hostname(), w);
            return null;
        }

        @Override
        public Void wireguardEndpointV6Remove(DataplaneUpdate.WireguardEndpointV6Remove w) {
            if (wireguardEndpointsV6.remove(w.hostname()) == null) {
                violation("remove of unknown IPv6 WireGuard endpoint " + w.hostname());
            }
            return null;
        }

        // Flow-log lookups: no dataplane state (flow logs' FlowLookups index them).

        @Override
        public Void flowLookupUpdate(FlowLookupUpdate u) {
            return null;
        }

        @Override
        public Void serviceLookupUpdate(ServiceLookupUpdate u) {
            return null;
        }

        @Override
        public Void flowLookupRemove(FlowLookupRemove u) {
            return null;
        }
    }

    private static Stream<List<TierPolicies>> tiersOf(HostEndpointUpdate h) {
        return Stream.of(h.ingress(), h.egress(), h.untrackedIngress(), h.untrackedEgress(), h.preDnatIngress(),
                h.forwardIngress(), h.forwardEgress());
    }

    private Stream<PolicyId> endpointPolicies() {
        return Stream.concat(workloads.values().stream().flatMap(w -> Stream.of(w.ingress(), w.egress())),
                        hostEndpoints.values().stream().flatMap(DataplaneModel::tiersOf))
                .flatMap(List::stream).flatMap(t -> t.policies().stream());
    }

    private String missingIpSet(CompiledPolicy p) {
        return p.ipSetIds().filter(id -> !ipSets.containsKey(id)).findFirst().orElse(null);
    }

    private String missingProfile(List<String> profileIds) {
        return profileIds.stream().filter(p -> !profiles.containsKey(p)).findFirst().orElse(null);
    }

    private PolicyId missingPolicy(Stream<List<TierPolicies>> tiers) {
        return tiers.flatMap(List::stream).flatMap(t -> t.policies().stream())
                .filter(id -> !policies.containsKey(id)).findFirst().orElse(null);
    }

    // ---- Reading on the writing thread (live, unmodifiable views)

    public Map<String, IpSet> ipSets() {
        return Collections.unmodifiableMap(ipSets);
    }

    public Map<PolicyId, CompiledPolicy> policies() {
        return Collections.unmodifiableMap(policies);
    }

    /**
     * {@return {@code id}'s policy as it was before the last {@link #apply}}: for a driver that
     * compares what it programmed with what changed. Null when the policy was absent then.
     */
    public CompiledPolicy policyBeforeLastApply(PolicyId id) {
        Optional<CompiledPolicy> before = policiesBefore.get(id);
        return before != null ? before.orElse(null) : policies.get(id);
    }

    public Map<String, CompiledPolicy> profiles() {
        return Collections.unmodifiableMap(profiles);
    }

    public Map<String, WorkloadEndpointUpdate> workloads() {
        return Collections.unmodifiableMap(workloads);
    }

    public Map<String, HostEndpointUpdate> hostEndpoints() {
        return Collections.unmodifiableMap(hostEndpoints);
    }

    /** IP pools by name (disabled ones included: they still hold workloads, as in Calico). */
    public Map<String, IpPoolUpdate> pools() {
        return Collections.unmodifiableMap(pools);
    }

    /** Calico hosts by name (their addresses: the sources IPIP/VXLAN may come from). */
    public Map<String, HostMetadataUpdate> hosts() {
        return Collections.unmodifiableMap(hosts);
    }

    /** Routes by destination CIDR. */
    public Map<String, RouteUpdate> routes() {
        return Collections.unmodifiableMap(routes);
    }

    /** Nodes' WireGuard public keys and interface addresses, by node name (this node's included). */
    public Map<String, WireguardEndpointUpdate> wireguardEndpoints() {
        return Collections.unmodifiableMap(wireguardEndpoints);
    }

    /** Nodes' IPv6 WireGuard public keys and interface addresses, by node name (this node's included). */
    public Map<String, DataplaneUpdate.WireguardEndpointV6Update> wireguardEndpointsV6() {
        return Collections.unmodifiableMap(wireguardEndpointsV6);
    }

    /** VXLAN tunnel endpoints by node name (this node's own included). */
    public Map<String, DataplaneUpdate.VtepUpdate> vteps() {
        return Collections.unmodifiableMap(vteps);
    }

    /** {@return the IPIP tunnel address of {@code node}} (only this node's is ever sent), if it has one. */
    public java.util.Optional<String> ipipTunnelAddress(String node) {
        return java.util.Optional.ofNullable(ipipTunnelAddresses.get(node))
                .map(DataplaneUpdate.IpipTunnelAddressUpdate::address);
    }

    /** {@return the advertised service ranges} (BGPConfiguration {@code default}; empty when none) */
    public List<String> serviceCidrs() {
        return serviceCidrs;
    }

    /** {@return the effective configuration}, Calico's defaults before the first ConfigUpdate */
    public FelixSettings config() {
        return config == null ? FelixSettings.defaults() : config.settings();
    }

    /** {@return whether a ConfigUpdate has been seen}: until then the backend is not known */
    public boolean hasConfig() {
        return config != null;
    }

    /** {@return whether InSync has been folded in} */
    public boolean inSync() {
        return inSync;
    }

    /** {@return a number that changes whenever a policy ID is added or removed}: equal values mean the same policy IDs. */
    public long policyKeysVersion() {
        return policyKeys;
    }

    public RuleSettings settings() {
        return settings;
    }

    /**
     * Records whether kube-proxy runs in IPVS mode ({@link KubeIpvs#detect}); the rules follow from the next
     * render. Set by the kernel dataplane when it starts, as Calico's felix decides it once at start-up.
     */
    public synchronized void kubeIpvs(boolean on) {
        kubeIpvs = on;
        settings = settings.withKubeIpvs(on);
    }

    public MarkBits marks() {
        return marks;
    }

    /** {@return the workload interface prefixes} ({@code interfacePrefix}, e.g. {@code [cali, tap]}) */
    public List<String> interfacePrefixes() {
        return interfacePrefixes;
    }

    // ---- Reading from any thread

    /**
     * {@return what {@code reader} makes of the model}, run under the model's lock (between two
     * batches); the reader must copy what it keeps: the accessors' views are live.
     */
    public synchronized <T> T read(Function<DataplaneModel, T> reader) {
        return reader.apply(this);
    }

    /** {@return the protocol violations so far, newest last} (the last 100); empty while the stream is correct */
    public synchronized List<String> errors() {
        return List.copyOf(errors);
    }

    /** {@return how many updates were skipped as protocol violations} */
    public long violations() {
        return violations;
    }

    /** {@return a number that changes with every batch folded in} (readers that cache a view compare it) */
    public long version() {
        return version;
    }

    public int ipSetCount() {
        return ipSetCount;
    }

    public int ipSetMemberCount() {
        return memberCount;
    }

    public int policyCount() {
        return policyCount;
    }

    public int endpointCount() {
        return endpointCount;
    }
}
