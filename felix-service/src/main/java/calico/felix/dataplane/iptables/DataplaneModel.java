package calico.felix.dataplane.iptables;

import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the calculation graph has told the driver so far: IP sets, active policies and
 * profiles, local workload endpoints and the settings the rules depend on. Updates are applied
 * in batch order; the renderer reads it. Host endpoints, routes and pools are not modelled yet.
 */
public final class DataplaneModel {

    /** An IP set's type and members. */
    public record IpSet(IpSetType type, Set<IpSetMember> members) {
        public IpSet {
            members = Set.copyOf(members);
        }
    }

    final Map<String, IpSet> ipSets = new TreeMap<>();
    final Map<PolicyId, CompiledPolicy> policies = new LinkedHashMap<>();
    final Map<String, CompiledPolicy> profiles = new TreeMap<>();
    final Map<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads = new TreeMap<>();
    MarkBits marks = MarkBits.defaults();
    String interfacePrefix = "cali";

    public DataplaneModel() {
    }

    /** Applies one update; unknown variants (hosts, pools, routes, host endpoints) are ignored here. */
    public void apply(DataplaneUpdate u) {
        switch (u) {
            case DataplaneUpdate.IpSetUpdate s -> ipSets.put(s.id(), new IpSet(s.type(), s.members()));
            case DataplaneUpdate.IpSetDeltaUpdate d -> {
                IpSet old = ipSets.get(d.id());
                if (old == null) {
                    throw new IllegalStateException("IpSetDeltaUpdate for unknown IP set " + d.id());
                }
                Set<IpSetMember> m = new HashSet<>(old.members());
                m.removeAll(d.removed());
                m.addAll(d.added());
                ipSets.put(d.id(), new IpSet(old.type(), m));
            }
            case DataplaneUpdate.IpSetRemove r -> ipSets.remove(r.id());
            case DataplaneUpdate.ActivePolicyUpdate p -> policies.put(p.id(), p.policy());
            case DataplaneUpdate.ActivePolicyRemove p -> policies.remove(p.id());
            case DataplaneUpdate.ActiveProfileUpdate p -> profiles.put(p.name(), p.profile());
            case DataplaneUpdate.ActiveProfileRemove p -> profiles.remove(p.name());
            case DataplaneUpdate.WorkloadEndpointUpdate w -> workloads.put(w.id(), w);
            case DataplaneUpdate.WorkloadEndpointRemove w -> workloads.remove(w.id());
            case DataplaneUpdate.ConfigUpdate c -> {
                marks = MarkBits.parse(c.values().get("iptablesMarkMask"));
                String prefix = c.values().get("interfacePrefix");
                interfacePrefix = prefix == null || prefix.isBlank() ? "cali" : prefix.split(",")[0].strip();
            }
            default -> {
                // host metadata, pools, routes, host endpoints, InSync: not used by these rules
            }
        }
    }
}
