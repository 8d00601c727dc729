package calico.felix.app;

import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.ActivePolicyRemove;
import calico.felix.calc.DataplaneUpdate.ActivePolicyUpdate;
import calico.felix.calc.DataplaneUpdate.ActiveProfileRemove;
import calico.felix.calc.DataplaneUpdate.ActiveProfileUpdate;
import calico.felix.calc.DataplaneUpdate.ConfigUpdate;
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
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointRemove;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-memory dataplane: holds what a real dataplane would have programmed and enforces the
 * graph's output protocol (see {@code felix-service/DESIGN.md}, invariant 4). A violating update
 * is logged, recorded in {@link #errors()} and skipped, so the state stays what a correct stream
 * would have produced up to that point; nothing throws.
 *
 * <p>Written by one thread (the syncer's), read by many (admin API, metrics): every method is
 * synchronized and readers get immutable copies.
 */
public final class ModelDataplane implements Dataplane {

    private static final Logger log = LoggerFactory.getLogger(ModelDataplane.class);
    private static final int KEPT_ERRORS = 100;

    /** An IP set as programmed. */
    public record IpSet(String id, IpSetType type, Set<IpSetMember> members) {
        public IpSet {
            members = Set.copyOf(members);
        }
    }

    private final Map<String, IpSetType> ipSetTypes = new TreeMap<>();
    private final Map<String, Set<IpSetMember>> ipSetMembers = new HashMap<>();
    private final Map<PolicyId, CompiledPolicy> policies = new HashMap<>();
    private final Map<String, CompiledPolicy> profiles = new TreeMap<>();
    private final Map<String, WorkloadEndpointUpdate> workloads = new TreeMap<>();
    private final Map<String, HostEndpointUpdate> hostEndpoints = new TreeMap<>();
    private final Map<String, RouteUpdate> routes = new TreeMap<>();
    private final Map<String, IpPoolUpdate> pools = new TreeMap<>();
    private final Map<String, HostMetadataUpdate> hosts = new TreeMap<>();
    private final Deque<String> errors = new ArrayDeque<>();
    private Map<String, String> config = Map.of();
    private boolean inSync;
    private long violations;
    private int memberCount;

    @Override
    public synchronized void apply(List<DataplaneUpdate> batch) {
        for (DataplaneUpdate u : batch) {
            String violation = applyOne(u);
            if (violation != null) {
                violations++;
                log.error("Dataplane protocol violation, update skipped: {}", violation);
                errors.addLast(violation);
                if (errors.size() > KEPT_ERRORS) {
                    errors.removeFirst();
                }
            }
        }
    }

    /** {@return null when applied, else why the update was rejected}. */
    private String applyOne(DataplaneUpdate u) {
        if (u instanceof IpSetUpdate s) {
            Set<IpSetMember> old = ipSetMembers.put(s.id(), new HashSet<>(s.members()));
            memberCount += s.members().size() - (old == null ? 0 : old.size());
            ipSetTypes.put(s.id(), s.type());
        } else if (u instanceof IpSetDeltaUpdate d) {
            Set<IpSetMember> members = ipSetMembers.get(d.id());
            if (members == null) {
                return "delta for unknown IP set " + d.id();
            }
            for (IpSetMember m : d.removed()) {
                if (!members.contains(m)) {
                    return "delta removes absent member " + m + " of IP set " + d.id();
                }
            }
            for (IpSetMember m : d.added()) {
                if (members.contains(m) && !d.removed().contains(m)) {
                    return "delta adds present member " + m + " to IP set " + d.id();
                }
            }
            members.removeAll(d.removed());
            members.addAll(d.added());
            memberCount += d.added().size() - d.removed().size();
        } else if (u instanceof IpSetRemove r) {
            if (!ipSetMembers.containsKey(r.id())) {
                return "remove of unknown IP set " + r.id();
            }
            if (referencedIpSets().anyMatch(r.id()::equals)) {
                return "remove of IP set " + r.id() + " still used by a rule";
            }
            memberCount -= ipSetMembers.remove(r.id()).size();
            ipSetTypes.remove(r.id());
        } else if (u instanceof ActivePolicyUpdate p) {
            String missing = missingIpSet(p.policy());
            if (missing != null) {
                return "policy " + p.id() + " refers to unknown IP set " + missing;
            }
            policies.put(p.id(), p.policy());
        } else if (u instanceof ActivePolicyRemove p) {
            if (!policies.containsKey(p.id())) {
                return "remove of unknown policy " + p.id();
            }
            if (endpointPolicies().anyMatch(p.id()::equals)) {
                return "remove of policy " + p.id() + " still used by an endpoint";
            }
            policies.remove(p.id());
        } else if (u instanceof ActiveProfileUpdate p) {
            String missing = missingIpSet(p.profile());
            if (missing != null) {
                return "profile " + p.name() + " refers to unknown IP set " + missing;
            }
            profiles.put(p.name(), p.profile());
        } else if (u instanceof ActiveProfileRemove p) {
            if (!profiles.containsKey(p.name())) {
                return "remove of unknown profile " + p.name();
            }
            if (workloads.values().stream().anyMatch(w -> w.profileIds().contains(p.name()))
                    || hostEndpoints.values().stream().anyMatch(h -> h.profileIds().contains(p.name()))) {
                return "remove of profile " + p.name() + " still used by an endpoint";
            }
            profiles.remove(p.name());
        } else if (u instanceof WorkloadEndpointUpdate w) {
            String missing = missingRef(w.profileIds(), w.ingress(), w.egress());
            if (missing != null) {
                return "workload endpoint " + w.id() + " refers to unknown " + missing;
            }
            workloads.put(w.id(), w);
        } else if (u instanceof WorkloadEndpointRemove w) {
            if (workloads.remove(w.id()) == null) {
                return "remove of unknown workload endpoint " + w.id();
            }
        } else if (u instanceof HostEndpointUpdate h) {
            String missing = missingRef(h.profileIds(), h.ingress(), h.egress());
            if (missing != null) {
                return "host endpoint " + h.id() + " refers to unknown " + missing;
            }
            hostEndpoints.put(h.id(), h);
        } else if (u instanceof HostEndpointRemove h) {
            if (hostEndpoints.remove(h.id()) == null) {
                return "remove of unknown host endpoint " + h.id();
            }
        } else if (u instanceof InSync) {
            if (inSync) {
                return "InSync received twice";
            }
            inSync = true;
        } else if (u instanceof ConfigUpdate c) {
            config = c.settings().effective();
        } else if (u instanceof RouteUpdate r) {
            routes.put(r.dst(), r);
        } else if (u instanceof RouteRemove r) {
            if (routes.remove(r.dst()) == null) {
                return "remove of unknown route " + r.dst();
            }
        } else if (u instanceof IpPoolUpdate p) {
            pools.put(p.name(), p);
        } else if (u instanceof IpPoolRemove p) {
            if (pools.remove(p.name()) == null) {
                return "remove of unknown IP pool " + p.name();
            }
        } else if (u instanceof HostMetadataUpdate h) {
            hosts.put(h.hostname(), h);
        } else if (u instanceof HostMetadataRemove h) {
            if (hosts.remove(h.hostname()) == null) {
                return "remove of unknown host " + h.hostname();
            }
        }
        return null;
    }

    private Stream<String> referencedIpSets() {
        return Stream.concat(policies.values().stream(), profiles.values().stream()).flatMap(CompiledPolicy::ipSetIds);
    }

    private Stream<PolicyId> endpointPolicies() {
        return Stream.concat(
                workloads.values().stream().flatMap(w -> Stream.concat(w.ingress().stream(), w.egress().stream())),
                hostEndpoints.values().stream().flatMap(h -> Stream.concat(h.ingress().stream(), h.egress().stream())))
                .flatMap(t -> t.policies().stream());
    }

    private String missingIpSet(CompiledPolicy p) {
        return p.ipSetIds().filter(id -> !ipSetMembers.containsKey(id)).findFirst().orElse(null);
    }

    private String missingRef(List<String> profileIds, List<TierPolicies> in, List<TierPolicies> out) {
        for (String p : profileIds) {
            if (!profiles.containsKey(p)) {
                return "profile " + p;
            }
        }
        return Stream.concat(in.stream(), out.stream()).flatMap(t -> t.policies().stream())
                .filter(id -> !policies.containsKey(id)).findFirst().map(id -> "policy " + id).orElse(null);
    }

    @Override
    public synchronized boolean inSync() {
        return inSync;
    }

    @Override
    public synchronized List<String> errors() {
        return List.copyOf(errors);
    }

    public synchronized long violations() {
        return violations;
    }

    public synchronized Map<String, WorkloadEndpointUpdate> workloadEndpoints() {
        return Map.copyOf(workloads);
    }

    public synchronized Map<String, HostEndpointUpdate> hostEndpoints() {
        return Map.copyOf(hostEndpoints);
    }

    public synchronized Map<PolicyId, CompiledPolicy> policies() {
        return Map.copyOf(policies);
    }

    public synchronized Map<String, CompiledPolicy> profiles() {
        return Map.copyOf(profiles);
    }

    /** {@return the IP sets by id} (members copied). */
    public synchronized Map<String, IpSet> ipSets() {
        Map<String, IpSet> out = new TreeMap<>();
        ipSetMembers.forEach((id, m) -> out.put(id, new IpSet(id, ipSetTypes.get(id), m)));
        return out;
    }

    public synchronized IpSet ipSet(String id) {
        Set<IpSetMember> m = ipSetMembers.get(id);
        return m == null ? null : new IpSet(id, ipSetTypes.get(id), m);
    }

    public synchronized int ipSetCount() {
        return ipSetMembers.size();
    }

    public synchronized int ipSetMemberCount() {
        return memberCount;
    }

    public synchronized int policyCount() {
        return policies.size();
    }

    public synchronized int endpointCount() {
        return workloads.size() + hostEndpoints.size();
    }

    public synchronized Map<String, RouteUpdate> routes() {
        return Map.copyOf(routes);
    }

    public synchronized Map<String, IpPoolUpdate> pools() {
        return Map.copyOf(pools);
    }

    public synchronized Map<String, HostMetadataUpdate> hosts() {
        return Map.copyOf(hosts);
    }

    public synchronized Map<String, String> config() {
        return config;
    }
}
