package calico.felix.dataplane;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.ActivePolicyRemove;
import calico.felix.calc.DataplaneUpdate.ActivePolicyUpdate;
import calico.felix.calc.DataplaneUpdate.ActiveProfileRemove;
import calico.felix.calc.DataplaneUpdate.ActiveProfileUpdate;
import calico.felix.calc.DataplaneUpdate.ConfigUpdate;
import calico.felix.calc.FelixSettings;
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
import calico.felix.calc.PolicyId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A compacted copy of the calculation graph's stream: the latest update per key (config, each
 * host, pool, IP set with its deltas folded in, policy, profile, workload and host endpoint,
 * route), removes dropping their key, and whether {@code InSync} was seen. {@link #snapshot()}
 * is one batch equal in effect to everything added so far, in the graph's output order (config
 * and infrastructure, IP sets, policies, profiles, endpoints, routes, InSync), so a freshly
 * started policy driver can be fed the whole state at once.
 *
 * <p>Memory is one entry per live key, the same order as the driver's own model. Not
 * thread-safe: the dataplane thread owns it.
 */
public final class GraphReplay {

    private static final Logger log = LoggerFactory.getLogger(GraphReplay.class);

    private ConfigUpdate config;
    private final Map<String, HostMetadataUpdate> hosts = new LinkedHashMap<>();
    private final Map<String, IpPoolUpdate> pools = new LinkedHashMap<>();
    private final Map<String, IpSetUpdate> ipSets = new LinkedHashMap<>();
    private final Map<PolicyId, ActivePolicyUpdate> policies = new LinkedHashMap<>();
    private final Map<String, ActiveProfileUpdate> profiles = new LinkedHashMap<>();
    private final Map<String, WorkloadEndpointUpdate> workloads = new LinkedHashMap<>();
    private final Map<String, HostEndpointUpdate> hostEndpoints = new LinkedHashMap<>();
    private final Map<String, RouteUpdate> routes = new LinkedHashMap<>();
    private boolean inSync;

    /** Folds a batch in, in order. */
    public void add(List<DataplaneUpdate> batch) {
        batch.forEach(this::add);
    }

    /** Folds one update in. */
    public void add(DataplaneUpdate u) {
        if (u instanceof ConfigUpdate c) {
            config = c;
        } else if (u instanceof HostMetadataUpdate h) {
            hosts.put(h.hostname(), h);
        } else if (u instanceof HostMetadataRemove h) {
            hosts.remove(h.hostname());
        } else if (u instanceof IpPoolUpdate p) {
            pools.put(p.name(), p);
        } else if (u instanceof IpPoolRemove p) {
            pools.remove(p.name());
        } else if (u instanceof IpSetUpdate s) {
            ipSets.put(s.id(), s);
        } else if (u instanceof IpSetDeltaUpdate d) {
            IpSetUpdate old = ipSets.get(d.id());
            if (old == null) {
                // A protocol violation upstream; the drivers reject it too. Nothing to fold into.
                log.warn("IP set delta for unknown IP set {}: not replayed", d.id());
                return;
            }
            Set<IpSetMember> members = new HashSet<>(old.members());
            members.removeAll(d.removed());
            members.addAll(d.added());
            ipSets.put(d.id(), new IpSetUpdate(d.id(), old.type(), members));
        } else if (u instanceof IpSetRemove s) {
            ipSets.remove(s.id());
        } else if (u instanceof ActivePolicyUpdate p) {
            policies.put(p.id(), p);
        } else if (u instanceof ActivePolicyRemove p) {
            policies.remove(p.id());
        } else if (u instanceof ActiveProfileUpdate p) {
            profiles.put(p.name(), p);
        } else if (u instanceof ActiveProfileRemove p) {
            profiles.remove(p.name());
        } else if (u instanceof WorkloadEndpointUpdate w) {
            workloads.put(w.id(), w);
        } else if (u instanceof WorkloadEndpointRemove w) {
            workloads.remove(w.id());
        } else if (u instanceof HostEndpointUpdate h) {
            hostEndpoints.put(h.id(), h);
        } else if (u instanceof HostEndpointRemove h) {
            hostEndpoints.remove(h.id());
        } else if (u instanceof RouteUpdate r) {
            routes.put(r.dst(), r);
        } else if (u instanceof RouteRemove r) {
            routes.remove(r.dst());
        } else if (u instanceof InSync) {
            inSync = true;
        }
    }

    /** {@return one batch equal in effect to everything added}: sets before the rules naming them, rules before endpoints. */
    public List<DataplaneUpdate> snapshot() {
        List<DataplaneUpdate> out = new ArrayList<>(size() + 2);
        if (config != null) {
            out.add(config);
        }
        out.addAll(hosts.values());
        out.addAll(pools.values());
        out.addAll(ipSets.values());
        out.addAll(policies.values());
        out.addAll(profiles.values());
        out.addAll(workloads.values());
        out.addAll(hostEndpoints.values());
        out.addAll(routes.values());
        if (inSync) {
            out.add(new InSync());
        }
        return out;
    }

    /** {@return the latest effective configuration}, Calico's defaults before the first ConfigUpdate. */
    public FelixSettings settings() {
        return config == null ? FelixSettings.defaults() : config.settings();
    }

    /** {@return whether a ConfigUpdate has been seen}: until then the backend is not known. */
    public boolean hasConfig() {
        return config != null;
    }

    /** {@return whether InSync has been seen} */
    public boolean inSync() {
        return inSync;
    }

    /** {@return the number of live keys held} */
    public int size() {
        return hosts.size() + pools.size() + ipSets.size() + policies.size() + profiles.size() + workloads.size()
                + hostEndpoints.size() + routes.size();
    }
}
