package calico.felix.dataplane.rules;

import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
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
 * profiles, local workload and host endpoints, IP pools (for NAT) and the settings the rules
 * depend on. Updates are applied in batch order; the renderer reads it. Routes and host
 * metadata are not modelled (the route manager owns them).
 */
public final class DataplaneModel {

    /** An IP set's type and members. */
    public record IpSet(IpSetType type, Set<IpSetMember> members) {
        public IpSet {
            members = Set.copyOf(members);
        }
    }

    private final Map<String, IpSet> ipSets = new TreeMap<>();
    private final Map<PolicyId, CompiledPolicy> policies = new LinkedHashMap<>();
    private final Map<String, CompiledPolicy> profiles = new TreeMap<>();
    private final Map<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads = new TreeMap<>();
    private final Map<String, DataplaneUpdate.HostEndpointUpdate> hostEndpoints = new TreeMap<>();
    private final Map<String, DataplaneUpdate.IpPoolUpdate> pools = new TreeMap<>();
    private final Map<String, DataplaneUpdate.HostMetadataUpdate> hosts = new TreeMap<>();
    private RuleSettings settings = RuleSettings.defaults();
    private MarkBits marks = MarkBits.defaults();
    private java.util.List<String> interfacePrefixes = FelixSettings.defaults().interfacePrefixes();
    /** Changes whenever a policy ID is added or removed (not when a policy is updated). */
    private long policyKeys;

    public DataplaneModel() {
    }

    public Map<String, IpSet> ipSets() {
        return java.util.Collections.unmodifiableMap(ipSets);
    }

    public Map<PolicyId, CompiledPolicy> policies() {
        return java.util.Collections.unmodifiableMap(policies);
    }

    public Map<String, CompiledPolicy> profiles() {
        return java.util.Collections.unmodifiableMap(profiles);
    }

    public Map<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads() {
        return java.util.Collections.unmodifiableMap(workloads);
    }

    public Map<String, DataplaneUpdate.HostEndpointUpdate> hostEndpoints() {
        return java.util.Collections.unmodifiableMap(hostEndpoints);
    }

    /** IP pools by name (disabled ones included: they still hold workloads, as in Calico). */
    public Map<String, DataplaneUpdate.IpPoolUpdate> pools() {
        return java.util.Collections.unmodifiableMap(pools);
    }

    /** Calico hosts by name (their addresses: the sources IPIP/VXLAN may come from). */
    public Map<String, DataplaneUpdate.HostMetadataUpdate> hosts() {
        return java.util.Collections.unmodifiableMap(hosts);
    }

    /** {@return a number that changes whenever a policy ID is added or removed}: equal values mean the same policy IDs. */
    public long policyKeysVersion() {
        return policyKeys;
    }

    public RuleSettings settings() {
        return settings;
    }

    public MarkBits marks() {
        return marks;
    }

    /** {@return the workload interface prefixes} ({@code interfacePrefix}, e.g. {@code [cali, tap]}) */
    public java.util.List<String> interfacePrefixes() {
        return interfacePrefixes;
    }

    /** Applies one update; routes and InSync are ignored here. */
    public void apply(DataplaneUpdate u) {
        if (u instanceof DataplaneUpdate.IpSetUpdate s) {
            ipSets.put(s.id(), new IpSet(s.type(), s.members()));
        } else if (u instanceof DataplaneUpdate.IpSetDeltaUpdate d) {
            IpSet old = ipSets.get(d.id());
            if (old == null) {
                throw new IllegalStateException("IpSetDeltaUpdate for unknown IP set " + d.id());
            }
            Set<IpSetMember> m = new HashSet<>(old.members());
            m.removeAll(d.removed());
            m.addAll(d.added());
            ipSets.put(d.id(), new IpSet(old.type(), m));
        } else if (u instanceof DataplaneUpdate.IpSetRemove r) {
            ipSets.remove(r.id());
        } else if (u instanceof DataplaneUpdate.ActivePolicyUpdate p) {
            if (policies.put(p.id(), p.policy()) == null) {
                policyKeys++;
            }
        } else if (u instanceof DataplaneUpdate.ActivePolicyRemove p) {
            if (policies.remove(p.id()) != null) {
                policyKeys++;
            }
        } else if (u instanceof DataplaneUpdate.ActiveProfileUpdate p) {
            profiles.put(p.name(), p.profile());
        } else if (u instanceof DataplaneUpdate.ActiveProfileRemove p) {
            profiles.remove(p.name());
        } else if (u instanceof DataplaneUpdate.WorkloadEndpointUpdate w) {
            workloads.put(w.id(), w);
        } else if (u instanceof DataplaneUpdate.WorkloadEndpointRemove w) {
            workloads.remove(w.id());
        } else if (u instanceof DataplaneUpdate.HostEndpointUpdate h) {
            hostEndpoints.put(h.id(), h);
        } else if (u instanceof DataplaneUpdate.HostEndpointRemove h) {
            hostEndpoints.remove(h.id());
        } else if (u instanceof DataplaneUpdate.IpPoolUpdate p) {
            pools.put(p.name(), p);
        } else if (u instanceof DataplaneUpdate.IpPoolRemove p) {
            pools.remove(p.name());
        } else if (u instanceof DataplaneUpdate.HostMetadataUpdate h) {
            hosts.put(h.hostname(), h);
        } else if (u instanceof DataplaneUpdate.HostMetadataRemove h) {
            hosts.remove(h.hostname());
        } else if (u instanceof DataplaneUpdate.ConfigUpdate c) {
            marks = MarkBits.fromMask(c.settings().iptablesMarkMask());
            settings = RuleSettings.from(c.settings());
            interfacePrefixes = c.settings().interfacePrefixes();
        }
        // routes, InSync: not used by these rules
    }
}
