package calico.felix.calc;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.HostEndpoint;
import calico.api.model.KubernetesService;
import calico.api.model.KubernetesServiceSpec;
import calico.api.model.NetworkSet;
import calico.api.model.Protocol;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.felix.calc.DataplaneUpdate.FlowLookup;
import calico.felix.calc.DataplaneUpdate.FlowLookupType;
import calico.felix.calc.DataplaneUpdate.FlowLookupUpdate;
import calico.felix.calc.DataplaneUpdate.ServiceLookupUpdate;
import calico.felix.calc.DataplaneUpdate.ServicePortLookup;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The flow-log lookups: every remote workload endpoint, every host endpoint and every network
 * set by its addresses, so that flow logs can name the far end of a flow as Calico's collector
 * does (its endpoint and network-set lookups caches) instead of calling it a network; and every
 * Kubernetes Service by its addresses and ports (Calico's service lookups cache), so that they
 * can name the service a DNAT'd connection dialled.
 *
 * <p>Holds one compact {@link FlowLookupUpdate} or {@link ServiceLookupUpdate} per such resource
 * (its name, namespace, labels, addresses, service ports: nothing else of the resource), whether or
 * not flow logs are on, so that turning them
 * on emits them all; emits only while the effective configuration has {@code
 * flowLogsGoldmaneServer} set (so a node without flow logs sends nothing more to its dataplane
 * than before). Local workload endpoints are left out: they come as
 * {@link DataplaneUpdate.WorkloadEndpointUpdate}, with their policies.
 */
final class FlowLookupStage {

    /** Where the lookups go (the event sequencer). */
    interface LookupListener {
        void onLookupUpdate(FlowLookup u);

        void onLookupRemove(String key);
    }

    private final String hostname;
    private final LookupListener out;
    private final Map<String, FlowLookup> current = new HashMap<>();
    private boolean enabled;

    FlowLookupStage(String hostname, LookupListener out) {
        this.hostname = hostname;
        this.out = out;
    }

    void registerWith(Dispatcher d) {
        d.register(ResourceKind.WORKLOAD_ENDPOINT, this::onUpdate);
        d.register(ResourceKind.HOST_ENDPOINT, this::onUpdate);
        d.register(ResourceKind.NETWORK_SET, this::onUpdate);
        d.register(ResourceKind.GLOBAL_NETWORK_SET, this::onUpdate);
        d.register(ResourceKind.KUBERNETES_SERVICE, this::onUpdate);
    }

    /** The effective configuration: emitting starts (everything held) or stops (everything removed). */
    void onConfig(DataplaneUpdate.ConfigUpdate c) {
        boolean on = c.settings().flowLogsEnabled();
        if (on == enabled) {
            return;
        }
        enabled = on;
        if (on) {
            current.values().forEach(out::onLookupUpdate);
        } else {
            current.keySet().forEach(out::onLookupRemove);
        }
    }

    /** {@return how many resources are held} */
    int size() {
        return current.size();
    }

    private void onUpdate(Update u) {
        String key = key(u.key());
        FlowLookup now = u.value() instanceof KubernetesService svc ? service(key, svc) : lookup(key, u);
        if (now == null) {
            if (current.remove(key) != null && enabled) {
                out.onLookupRemove(key);
            }
            return;
        }
        if (!now.equals(current.put(key, now)) && enabled) {
            out.onLookupUpdate(now);
        }
    }

    static String key(ResourceKey k) {
        return k.namespace() == null || k.namespace().isEmpty() ? k.kind().kind() + "/" + k.name()
                : k.kind().kind() + "/" + k.namespace() + "/" + k.name();
    }

    /** {@return the lookup of a resource, or null when it is gone, local, or has no address} */
    private FlowLookupUpdate lookup(String key, Update u) {
        FlowLookupUpdate l = null;
        if (u.value() instanceof WorkloadEndpoint w && w.spec() != null && !hostname.equals(w.spec().node())) {
            l = new FlowLookupUpdate(key, FlowLookupType.REMOTE_WORKLOAD, w.metadata().name(),
                    w.metadata().namespace(), w.metadata().generateName(), w.metadata().labels(),
                    w.spec().ipNetworks());
        } else if (u.value() instanceof HostEndpoint h && h.spec() != null) {
            l = new FlowLookupUpdate(key, FlowLookupType.HOST_ENDPOINT, h.metadata().name(), "", "",
                    h.metadata().labels(), h.spec().expectedIPs());
        } else if (u.value() instanceof NetworkSet n && n.spec() != null) {
            l = new FlowLookupUpdate(key, FlowLookupType.NETWORK_SET, n.metadata().name(), n.metadata().namespace(), "",
                    n.metadata().labels(), n.spec().nets());
        } else if (u.value() instanceof GlobalNetworkSet g && g.spec() != null) {
            l = new FlowLookupUpdate(key, FlowLookupType.NETWORK_SET, g.metadata().name(), "", "",
                    g.metadata().labels(), g.spec().nets());
        }
        return l == null || l.nets().isEmpty() ? null : l;
    }

    /**
     * {@return the lookup of a Service}, or null when it has no port a client can dial: ports of a
     * protocol that has no port numbers, or that IP does not know, are left out.
     */
    private static ServiceLookupUpdate service(String key, KubernetesService svc) {
        if (svc.spec() == null) {
            return null;
        }
        List<String> ips = new ArrayList<>(svc.spec().clusterIPs());
        ips.addAll(svc.spec().externalIPs());
        ips.addAll(svc.spec().loadBalancerIngressIPs());
        List<ServicePortLookup> ports = new ArrayList<>();
        for (KubernetesServiceSpec.ServicePort p : svc.spec().ports()) {
            Protocol proto = Protocol.of(p.protocol());
            int port = p.port() == null ? 0 : p.port();
            int nodePort = p.nodePort() == null ? 0 : p.nodePort();
            if (proto.supportsPorts() && (port > 0 || nodePort > 0)) {
                ports.add(new ServicePortLookup(p.name(), proto.toNumber(), port, nodePort));
            }
        }
        return ports.isEmpty() ? null
                : new ServiceLookupUpdate(key, svc.metadata().namespace(), svc.metadata().name(), ips, ports);
    }

    List<FlowLookup> held() {
        return List.copyOf(current.values());
    }
}
