package calico.felix.calc;

import calico.api.model.Action;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.List;

/**
 * A reference evaluation of the emitted state, as a dataplane would apply it, for end-to-end
 * semantic tests: does the state allow a TCP packet from one address to a port on another?
 */
final class Verdicts {

    private final DataplaneState state;

    Verdicts(DataplaneState state) {
        this.state = state;
    }

    /** Traffic into a local workload: its ingress tiers, then its profiles. */
    boolean ingressAllowed(String wepId, String srcIp, String dstIp, int port) {
        DataplaneUpdate.WorkloadEndpointUpdate w = state.workloads.get(wepId);
        return decide(w.ingress(), w.profileIds(), true, srcIp, dstIp, port);
    }

    /** Traffic out of a local workload. */
    boolean egressAllowed(String wepId, String srcIp, String dstIp, int port) {
        DataplaneUpdate.WorkloadEndpointUpdate w = state.workloads.get(wepId);
        return decide(w.egress(), w.profileIds(), false, srcIp, dstIp, port);
    }

    private boolean decide(List<TierPolicies> tiers, List<String> profiles, boolean inbound, String src, String dst,
                           int port) {
        tierLoop:
        for (TierPolicies t : tiers) {
            if (!t.enforced()) {
                continue;
            }
            for (PolicyId id : t.policies()) {
                if (id.staged()) {
                    continue;
                }
                CompiledPolicy p = state.policies.get(id);
                Action a = first(inbound ? p.inbound() : p.outbound(), src, dst, port);
                if (a == Action.Allow) {
                    return true;
                } else if (a == Action.Deny) {
                    return false;
                } else if (a == Action.Pass) {
                    continue tierLoop;
                }
            }
            if (t.defaultAction() != Action.Pass) {
                return false;
            }
        }
        for (String name : profiles) {
            CompiledPolicy p = state.profiles.get(name);
            Action a = first(inbound ? p.inbound() : p.outbound(), src, dst, port);
            if (a == Action.Allow) {
                return true;
            } else if (a == Action.Deny) {
                return false;
            }
        }
        return false;
    }

    private Action first(List<CompiledRule> rules, String src, String dst, int port) {
        for (CompiledRule r : rules) {
            if (r.action() != Action.Log && matches(r, src, dst, port)) {
                return r.action();
            }
        }
        return null;
    }

    private boolean matches(CompiledRule r, String src, String dst, int port) {
        if (r.protocol() != null && !r.protocol().equalsIgnoreCase("tcp")) {
            return false;
        }
        if (r.notProtocol() != null && r.notProtocol().equalsIgnoreCase("tcp")) {
            return false;
        }
        return side(r.source(), src, -1) && side(r.destination(), dst, port);
    }

    private boolean side(CompiledRule.Side s, String ip, int port) {
        IpAddress a = IpAddress.parse(ip);
        if (!s.nets().isEmpty() && s.nets().stream().noneMatch(n -> Cidr.parse(n).contains(a))) {
            return false;
        }
        if (s.notNets().stream().anyMatch(n -> Cidr.parse(n).contains(a))) {
            return false;
        }
        if (!s.ipSetIds().stream().allMatch(id -> inNetSet(id, a))) {
            return false;
        }
        if (s.notIpSetIds().stream().anyMatch(id -> inNetSet(id, a))) {
            return false;
        }
        boolean anyPort = s.ports().isEmpty() && s.namedPortIpSetIds().isEmpty();
        if (!anyPort) {
            if (port < 0) {
                return false;
            }
            boolean numeric = s.ports().stream().anyMatch(p -> inRange(p, port));
            boolean named = s.namedPortIpSetIds().stream().anyMatch(id -> state.ipSets.get(id).members().stream()
                    .anyMatch(m -> m.cidr().contains(a) && m.port() == port));
            if (!numeric && !named) {
                return false;
            }
        }
        if (port >= 0 && s.notPorts().stream().anyMatch(p -> inRange(p, port))) {
            return false;
        }
        return true;
    }

    private boolean inNetSet(String id, IpAddress a) {
        return state.ipSets.get(id).members().stream().anyMatch(m -> m.cidr().contains(a));
    }

    private static boolean inRange(String p, int port) {
        int colon = p.indexOf(':');
        if (colon < 0) {
            return Integer.parseInt(p) == port;
        }
        return port >= Integer.parseInt(p.substring(0, colon)) && port <= Integer.parseInt(p.substring(colon + 1));
    }
}
