package calico.felix.flows;

import calico.api.net.IpAddress;
import calico.felix.calc.DataplaneUpdate.ServiceLookupUpdate;
import calico.felix.calc.DataplaneUpdate.ServicePortLookup;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kubernetes Services by what a client dials, to name the service behind a DNAT'd connection as
 * Calico's collector does: (address, port, protocol) for each cluster IP, external IP and
 * load-balancer ingress IP times each service port; failing that, (port, protocol) for each
 * NodePort, whatever the address (kube-proxy opens NodePorts on every local address).
 *
 * <p>Where several services, or several ports of one service, share a key, the fields they
 * disagree on read {@code *} (Calico's rule); adding and removing use the same keys, computed
 * from the same update, so a removed service leaves nothing behind.
 *
 * <p>Written by the thread that applies batches, read by the collector's threads: each key maps
 * to an immutable {@link Slot} replaced whole, so a lookup sees the old or the new one. Memory:
 * one slot per (address, port, protocol) and per (NodePort, protocol) of the services, nothing
 * per connection; a lookup is at most two hash probes.
 */
final class ServiceIndex {

    /** What a flow report names: {@code dest_service_namespace}, {@code _name}, {@code _port_name}. */
    record ServiceName(String namespace, String name, String portName) {

        static final String ANY = "*";

        /** {@return the fields both name, {@code *} where they differ} */
        ServiceName merge(ServiceName o) {
            return new ServiceName(namespace.equals(o.namespace) ? namespace : ANY, name.equals(o.name) ? name : ANY,
                    portName.equals(o.portName) ? portName : ANY);
        }
    }

    private record AddressKey(IpAddress ip, int port, int protocol) {
    }

    private record NodePortKey(int port, int protocol) {
    }

    /** The services answering one key (by service key) and their merged name. */
    private record Slot(Map<String, ServiceName> byService, ServiceName merged) {

        static Slot of(Map<String, ServiceName> byService) {
            ServiceName m = null;
            for (ServiceName n : byService.values()) {
                m = m == null ? n : m.merge(n);
            }
            return new Slot(Map.copyOf(byService), m);
        }
    }

    /** What each service contributed, to take exactly that out again. */
    private record Contribution(Map<AddressKey, ServiceName> addresses, Map<NodePortKey, ServiceName> nodePorts) {
    }

    private final Map<String, Contribution> byService = new ConcurrentHashMap<>();
    private final Map<AddressKey, Slot> byAddress = new ConcurrentHashMap<>();
    private final Map<NodePortKey, Slot> byNodePort = new ConcurrentHashMap<>();

    /** Adds or replaces a service. */
    void apply(ServiceLookupUpdate u) {
        Contribution c = contribution(u);
        Contribution old = byService.get(u.key());
        if (c.equals(old)) {
            return; // a no-op re-send: nothing to move
        }
        if (old != null) {
            remove(u.key());
        }
        byService.put(u.key(), c);
        c.addresses().forEach((k, n) -> byAddress.compute(k, (x, s) -> with(s, u.key(), n)));
        c.nodePorts().forEach((k, n) -> byNodePort.compute(k, (x, s) -> with(s, u.key(), n)));
    }

    /** Removes a service; an unknown key is ignored. */
    void remove(String serviceKey) {
        Contribution old = byService.remove(serviceKey);
        if (old != null) {
            old.addresses().keySet().forEach(k -> byAddress.computeIfPresent(k, (x, s) -> without(s, serviceKey)));
            old.nodePorts().keySet().forEach(k -> byNodePort.computeIfPresent(k, (x, s) -> without(s, serviceKey)));
        }
    }

    /**
     * {@return the service a connection dialled at {@code address:port} (before DNAT) over
     * {@code protocol}}: by address first, else by NodePort; null when none.
     */
    ServiceName lookup(InetAddress address, int port, int protocol) {
        Slot s = byAddress.get(new AddressKey(IpAddress.of(address.getAddress()), port, protocol));
        if (s == null) {
            s = byNodePort.get(new NodePortKey(port, protocol));
        }
        return s == null ? null : s.merged();
    }

    /** {@return how many services are indexed} */
    int size() {
        return byService.size();
    }

    /** {@return how many keys are indexed} (address keys plus NodePort keys), for tests of the memory bound */
    int keys() {
        return byAddress.size() + byNodePort.size();
    }

    private static Contribution contribution(ServiceLookupUpdate u) {
        Map<AddressKey, ServiceName> addresses = new HashMap<>();
        Map<NodePortKey, ServiceName> nodePorts = new HashMap<>();
        for (ServicePortLookup p : u.ports()) {
            ServiceName n = new ServiceName(u.namespace(), u.name(), p.name());
            if (p.port() > 0) {
                for (String ip : u.ips()) {
                    IpAddress.tryParse(ip).ifPresent(a -> addresses.merge(new AddressKey(a, p.port(), p.protocol()), n,
                            ServiceName::merge));
                }
            }
            if (p.nodePort() > 0) {
                nodePorts.merge(new NodePortKey(p.nodePort(), p.protocol()), n, ServiceName::merge);
            }
        }
        return new Contribution(Map.copyOf(addresses), Map.copyOf(nodePorts));
    }

    private static Slot with(Slot s, String serviceKey, ServiceName n) {
        Map<String, ServiceName> m = new HashMap<>(s == null ? Map.of() : s.byService());
        m.put(serviceKey, n);
        return Slot.of(m);
    }

    private static Slot without(Slot s, String serviceKey) {
        Map<String, ServiceName> m = new HashMap<>(s.byService());
        m.remove(serviceKey);
        return m.isEmpty() ? null : Slot.of(m);
    }
}
