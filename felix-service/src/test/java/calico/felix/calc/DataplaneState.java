package calico.felix.calc;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A model dataplane for tests: applies the emitted stream update by update and fails (throws
 * {@link AssertionError}) on any protocol violation: a rule naming an IP set the dataplane does
 * not have, a delta for an unknown set or a member that is (not) there, removing a set a rule
 * still uses, an endpoint naming an unknown policy or profile, removing what is still referenced
 * or was never sent.
 */
final class DataplaneState {

    record IpSet(IpSetType type, Set<IpSetMember> members) {
    }

    final Map<String, IpSet> ipSets = new TreeMap<>();
    final Map<PolicyId, CompiledPolicy> policies = new HashMap<>();
    final Map<String, CompiledPolicy> profiles = new TreeMap<>();
    final Map<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads = new TreeMap<>();
    final Map<String, DataplaneUpdate.HostEndpointUpdate> hostEndpoints = new TreeMap<>();
    final Map<String, DataplaneUpdate> infra = new TreeMap<>();
    boolean inSync;
    int updates;

    void apply(List<DataplaneUpdate> batch) {
        batch.forEach(this::apply);
    }

    void apply(DataplaneUpdate u) {
        updates++;
        if (u instanceof DataplaneUpdate.IpSetUpdate s) {
            ipSets.put(s.id(), new IpSet(s.type(), new HashSet<>(s.members())));
        } else if (u instanceof DataplaneUpdate.IpSetDeltaUpdate d) {
            IpSet s = ipSets.get(d.id());
            check(s != null, "delta for unknown IP set " + d.id());
            check(!d.added().isEmpty() || !d.removed().isEmpty(), "empty delta for " + d.id());
            for (IpSetMember m : d.removed()) {
                check(s.members().remove(m), "delta removes absent member " + m + " of " + d.id());
            }
            for (IpSetMember m : d.added()) {
                check(s.members().add(m), "delta adds present member " + m + " to " + d.id());
            }
        } else if (u instanceof DataplaneUpdate.IpSetRemove r) {
            check(ipSets.containsKey(r.id()), "remove of unknown IP set " + r.id());
            check(referencedIpSets().noneMatch(r.id()::equals), "remove of IP set " + r.id() + " still in use");
            ipSets.remove(r.id());
        } else if (u instanceof DataplaneUpdate.ActivePolicyUpdate p) {
            checkIpSets(p.policy(), p.id().toString());
            policies.put(p.id(), p.policy());
        } else if (u instanceof DataplaneUpdate.ActivePolicyRemove p) {
            check(policies.containsKey(p.id()), "remove of unknown policy " + p.id());
            check(endpointPolicies().noneMatch(p.id()::equals), "remove of policy " + p.id() + " still in use");
            policies.remove(p.id());
        } else if (u instanceof DataplaneUpdate.ActiveProfileUpdate p) {
            checkIpSets(p.profile(), p.name());
            profiles.put(p.name(), p.profile());
        } else if (u instanceof DataplaneUpdate.ActiveProfileRemove p) {
            check(profiles.containsKey(p.name()), "remove of unknown profile " + p.name());
            check(workloads.values().stream().noneMatch(w -> w.profileIds().contains(p.name()))
                    && hostEndpoints.values().stream().noneMatch(h -> h.profileIds().contains(p.name())),
                    "remove of profile " + p.name() + " still in use");
            profiles.remove(p.name());
        } else if (u instanceof DataplaneUpdate.WorkloadEndpointUpdate w) {
            checkRefs(w.profileIds(), w.ingress(), w.egress(), w.id());
            workloads.put(w.id(), w);
        } else if (u instanceof DataplaneUpdate.WorkloadEndpointRemove w) {
            check(workloads.remove(w.id()) != null, "remove of unknown workload " + w.id());
        } else if (u instanceof DataplaneUpdate.HostEndpointUpdate h) {
            checkRefs(h.profileIds(), h.ingress(), h.egress(), h.id());
            hostEndpoints.put(h.id(), h);
        } else if (u instanceof DataplaneUpdate.HostEndpointRemove h) {
            check(hostEndpoints.remove(h.id()) != null, "remove of unknown host endpoint " + h.id());
        } else if (u instanceof DataplaneUpdate.InSync) {
            check(!inSync, "InSync sent twice");
            inSync = true;
        } else {
            infra.put(u.getClass().getSimpleName() + ":" + u, u);
        }
    }

    private java.util.stream.Stream<String> referencedIpSets() {
        return java.util.stream.Stream.concat(policies.values().stream(), profiles.values().stream())
                .flatMap(CompiledPolicy::ipSetIds);
    }

    private java.util.stream.Stream<PolicyId> endpointPolicies() {
        return java.util.stream.Stream.concat(
                workloads.values().stream().flatMap(w -> java.util.stream.Stream.concat(w.ingress().stream(), w.egress().stream())),
                hostEndpoints.values().stream().flatMap(h -> java.util.stream.Stream.concat(h.ingress().stream(), h.egress().stream())))
                .flatMap(t -> t.policies().stream());
    }

    private void checkIpSets(CompiledPolicy p, String what) {
        p.ipSetIds().forEach(id -> check(ipSets.containsKey(id), what + " refers to unknown IP set " + id));
    }

    private void checkRefs(List<String> profileIds, List<TierPolicies> in, List<TierPolicies> out, String what) {
        for (String p : profileIds) {
            check(profiles.containsKey(p), what + " refers to unknown profile " + p);
        }
        for (List<TierPolicies> dir : List.of(in, out)) {
            for (TierPolicies t : dir) {
                for (PolicyId id : t.policies()) {
                    check(policies.containsKey(id), what + " refers to unknown policy " + id);
                }
            }
        }
    }

    private static void check(boolean ok, String violation) {
        if (!ok) {
            throw new AssertionError("protocol violation: " + violation);
        }
    }

    /** {@return the members of a set as strings, sorted}, for readable assertions. */
    List<String> members(String id) {
        IpSet s = ipSets.get(id);
        return s == null ? null : s.members().stream().map(IpSetMember::toString).sorted().toList();
    }

    /** {@return a value-comparable snapshot} (IP sets, policies, profiles, endpoints). */
    Snapshot snapshot() {
        Map<String, Set<IpSetMember>> sets = new TreeMap<>();
        ipSets.forEach((k, v) -> sets.put(k, Set.copyOf(v.members())));
        return new Snapshot(sets, Map.copyOf(policies), Map.copyOf(profiles), Map.copyOf(workloads),
                Map.copyOf(hostEndpoints));
    }

    record Snapshot(Map<String, Set<IpSetMember>> ipSets, Map<PolicyId, CompiledPolicy> policies,
                    Map<String, CompiledPolicy> profiles, Map<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads,
                    Map<String, DataplaneUpdate.HostEndpointUpdate> hostEndpoints) {
    }
}
