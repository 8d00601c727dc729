package calico.felix.flows;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.FlowLookupType;
import calico.felix.calc.DataplaneUpdate.FlowLookupUpdate;
import calico.felix.flows.FlowEndpoint.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The far ends flow logs can name besides the local endpoints: remote workload endpoints and
 * host endpoints by address, network sets by longest-prefix match, as Calico's collector looks
 * them up (endpoints first, then network sets, then a public or private network); and the
 * Kubernetes Services connections dialled before DNAT ({@link ServiceIndex}).
 *
 * <p>Written by the thread that applies batches ({@link #apply}), read by the collector's threads
 * ({@link #endpoint}, {@link #networkSet}): concurrent maps, no lock; a lookup racing an update
 * sees the old or the new entry. Memory: one {@link FlowEndpoint} per resource and one map entry
 * per address or CIDR of it; nothing is kept for a resource once removed.
 */
final class FlowLookups {

    /** Entries by key, to remove their addresses again. */
    private final Map<String, Entry> byKey = new ConcurrentHashMap<>();
    private final Prefixes endpoints = new Prefixes();
    private final Prefixes networkSets = new Prefixes();
    private final ServiceIndex services = new ServiceIndex();

    private record Entry(FlowEndpoint endpoint, List<Cidr> nets, boolean networkSet) {
    }

    /** Applies a lookup update or remove; other updates are ignored. */
    void apply(DataplaneUpdate u) {
        if (u instanceof DataplaneUpdate.ServiceLookupUpdate s) {
            services.apply(s);
        } else if (u instanceof FlowLookupUpdate l) {
            remove(l.key());
            List<Cidr> nets = new ArrayList<>();
            l.nets().forEach(n -> Cidr.tryParseCidrOrIp(n).map(Cidr::network).ifPresent(nets::add));
            FlowEndpoint e = endpoint(l);
            boolean set = l.type() == FlowLookupType.NETWORK_SET;
            Entry entry = new Entry(e, List.copyOf(nets), set);
            byKey.put(l.key(), entry);
            nets.forEach(c -> (set ? networkSets : endpoints).put(c, l.key(), e));
        } else if (u instanceof DataplaneUpdate.FlowLookupRemove r) {
            remove(r.key());
            services.remove(r.key());
        }
    }

    private void remove(String key) {
        Entry old = byKey.remove(key);
        if (old != null) {
            old.nets().forEach(c -> (old.networkSet() ? networkSets : endpoints).remove(c, key));
        }
    }

    private static FlowEndpoint endpoint(FlowLookupUpdate l) {
        List<String> labels = FlowEndpoint.labelStrings(l.labels());
        return switch (l.type()) {
            case REMOTE_WORKLOAD -> new FlowEndpoint(Type.WORKLOAD,
                    FlowEndpoint.workloadName(l.namespace() + "/" + l.name(), l.generateName()), l.namespace(),
                    List.of(), List.of(), List.of(), false, labels);
            case HOST_ENDPOINT -> new FlowEndpoint(Type.HOST_ENDPOINT, l.name(), "", List.of(), List.of(), List.of(),
                    false, labels);
            case NETWORK_SET -> new FlowEndpoint(Type.NETWORK_SET, l.name(), l.namespace(), List.of(), List.of(),
                    List.of(), false, labels);
        };
    }

    /** {@return the remote workload or host endpoint holding {@code ip}, or null} (most specific net first) */
    FlowEndpoint endpoint(IpAddress ip) {
        return endpoints.longestMatch(ip);
    }

    /** {@return the network set with the longest prefix containing {@code ip}, or null} */
    FlowEndpoint networkSet(IpAddress ip) {
        return networkSets.longestMatch(ip);
    }

    /** {@return the labels of the host endpoint with {@code name}, or null when not known} */
    List<String> hostEndpointLabels(String name) {
        Entry e = byKey.get("HostEndpoint/" + name);
        return e == null ? null : e.endpoint().labels();
    }

    /** {@return the service dialled at {@code address:port} (before DNAT), or null} ({@link ServiceIndex#lookup}) */
    ServiceIndex.ServiceName service(java.net.InetAddress address, int port, int protocol) {
        return services.lookup(address, port, protocol);
    }

    int size() {
        return byKey.size() + services.size();
    }

    /**
     * CIDRs by prefix length, longest first: a lookup masks the address once per length in use
     * (at most 33 or 129), so its cost does not grow with the number of entries. Several
     * resources with the same CIDR: the one with the smallest key answers (deterministic).
     */
    private static final class Prefixes {
        private final NavigableMap<Integer, Map<Cidr, ConcurrentSkipListMap<String, FlowEndpoint>>> v4 =
                new ConcurrentSkipListMap<Integer, Map<Cidr, ConcurrentSkipListMap<String, FlowEndpoint>>>()
                        .descendingMap();
        private final NavigableMap<Integer, Map<Cidr, ConcurrentSkipListMap<String, FlowEndpoint>>> v6 =
                new ConcurrentSkipListMap<Integer, Map<Cidr, ConcurrentSkipListMap<String, FlowEndpoint>>>()
                        .descendingMap();

        private NavigableMap<Integer, Map<Cidr, ConcurrentSkipListMap<String, FlowEndpoint>>> family(int version) {
            return version == 4 ? v4 : v6;
        }

        void put(Cidr c, String key, FlowEndpoint e) {
            family(c.version()).computeIfAbsent(c.prefixLength(), x -> new ConcurrentHashMap<>())
                    .computeIfAbsent(c, x -> new ConcurrentSkipListMap<>()).put(key, e);
        }

        void remove(Cidr c, String key) {
            Map<Cidr, ConcurrentSkipListMap<String, FlowEndpoint>> len = family(c.version()).get(c.prefixLength());
            if (len == null) {
                return;
            }
            len.computeIfPresent(c, (x, m) -> {
                m.remove(key);
                return m.isEmpty() ? null : m;
            });
            if (len.isEmpty()) {
                family(c.version()).remove(c.prefixLength(), len);
            }
        }

        FlowEndpoint longestMatch(IpAddress ip) {
            for (Map.Entry<Integer, Map<Cidr, ConcurrentSkipListMap<String, FlowEndpoint>>> len
                    : family(ip.version()).entrySet()) {
                ConcurrentSkipListMap<String, FlowEndpoint> m = len.getValue()
                        .get(new Cidr(ip.mask(len.getKey()), len.getKey()));
                if (m != null) {
                    Map.Entry<String, FlowEndpoint> first = m.firstEntry();
                    if (first != null) {
                        return first.getValue();
                    }
                }
            }
            return null;
        }
    }
}
