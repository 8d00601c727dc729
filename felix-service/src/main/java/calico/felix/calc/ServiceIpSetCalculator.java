package calico.felix.calc;

import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesEndpointSliceSpec;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.LoggerFactory;

/**
 * Computes the members of the IP sets that active rules' {@code services} matches use, from the
 * cluster's EndpointSlices ({@code KubernetesEndpointSlice}, presented only by the kubernetes
 * datastore), as Calico's felix service index does: a slice belongs to the service its
 * {@code kubernetes.io/service-name} label names, in its own namespace; every listed endpoint
 * address counts, whatever its conditions. A {@code svc:} set holds (address, protocol, port) for
 * each address and each port with a number (a port without one contributes nothing); a
 * {@code svcnoport:} set the addresses alone.
 *
 * <p>Members are reference counted across slices (two slices may list the same address); a set
 * exists while an active rule refers to it ({@link #ref}/{@link #unref}), and slices of services no
 * active rule names are only indexed. Emits through the same listener as the selector sets.
 */
final class ServiceIpSetCalculator {

    private final OnceLog warnings = new OnceLog(LoggerFactory.getLogger(ServiceIpSetCalculator.class));

    /** What one slice contributes: its service ({@code namespace/name}), addresses and numbered ports. */
    private record Slice(String service, List<Cidr> addresses, List<PortNumber> ports) {
    }

    private record PortNumber(String protocol, int port) {
    }

    private final IpSetMemberCalculator.IpSetListener listener;
    private final Map<ResourceKey, Slice> slices = new HashMap<>();
    private final Map<String, Set<ResourceKey>> slicesByService = new HashMap<>();
    private final Map<String, IpSetSpec> specs = new HashMap<>();
    private final Map<String, Integer> refs = new HashMap<>();
    /** Service → IDs of the active sets of that service (with and without ports). */
    private final Map<String, Set<String>> setsByService = new HashMap<>();
    /** Set ID → its members, each with how many slices contribute it. */
    private final Map<String, MemberCounts> members = new HashMap<>();

    ServiceIpSetCalculator(IpSetMemberCalculator.IpSetListener listener) {
        this.listener = listener;
    }

    void registerWith(Dispatcher d) {
        d.register(ResourceKind.KUBERNETES_ENDPOINT_SLICE, this::onSlice);
    }

    /** An active rule now uses this service set. */
    void ref(IpSetSpec spec) {
        if (refs.merge(spec.id(), 1, Integer::sum) > 1) {
            return;
        }
        specs.put(spec.id(), spec);
        members.put(spec.id(), new MemberCounts(spec.id(), listener));
        setsByService.computeIfAbsent(spec.service(), s -> new HashSet<>()).add(spec.id());
        listener.onIpSetAdded(spec.id(), spec.type());
        for (ResourceKey k : slicesByService.getOrDefault(spec.service(), Set.of())) {
            contribute(spec.id(), slices.get(k), +1);
        }
    }

    /** An active rule no longer uses this service set. */
    void unref(String id) {
        Integer n = refs.get(id);
        if (n == null) {
            throw new IllegalStateException("unref of unknown service IP set " + id);
        }
        if (n > 1) {
            refs.put(id, n - 1);
            return;
        }
        refs.remove(id);
        IpSetSpec spec = specs.remove(id);
        members.remove(id); // the whole set goes: no member-level removes
        Set<String> ids = setsByService.get(spec.service());
        ids.remove(id);
        if (ids.isEmpty()) {
            setsByService.remove(spec.service());
        }
        listener.onIpSetRemoved(id);
    }

    private void onSlice(Update u) {
        ResourceKey key = u.key();
        Slice old = slices.get(key);
        Slice now = u.value() instanceof KubernetesEndpointSlice s ? slice(key, s) : null;
        if (Objects.equals(old, now)) {
            return;
        }
        // New members first, then the old ones out: an address that stays is never removed.
        if (now != null) {
            slices.put(key, now);
            slicesByService.computeIfAbsent(now.service(), s -> new HashSet<>()).add(key);
            setsByService.getOrDefault(now.service(), Set.of()).forEach(id -> contribute(id, now, +1));
        } else {
            slices.remove(key);
        }
        if (old != null) {
            setsByService.getOrDefault(old.service(), Set.of()).forEach(id -> contribute(id, old, -1));
            if (now == null || !now.service().equals(old.service())) {
                Set<ResourceKey> keys = slicesByService.get(old.service());
                keys.remove(key);
                if (keys.isEmpty()) {
                    slicesByService.remove(old.service());
                }
            }
        }
    }

    private void contribute(String id, Slice slice, int delta) {
        members.get(id).contribute(membersOf(specs.get(id), slice), delta);
    }

    private static Set<IpSetMember> membersOf(IpSetSpec spec, Slice slice) {
        Set<IpSetMember> out = new LinkedHashSet<>();
        for (Cidr a : slice.addresses()) {
            if (spec.type() == IpSetType.NET) {
                out.add(IpSetMember.net(a));
            } else {
                slice.ports().forEach(p -> out.add(new IpSetMember(a, p.protocol(), p.port())));
            }
        }
        return out;
    }

    private Slice slice(ResourceKey key, KubernetesEndpointSlice s) {
        KubernetesEndpointSliceSpec spec = s.spec();
        String service = key.namespace() + "/" + (spec == null ? "" : spec.serviceName());
        List<Cidr> addresses = new ArrayList<>();
        List<PortNumber> ports = new ArrayList<>();
        if (spec != null) {
            for (KubernetesEndpointSliceSpec.Endpoint e : spec.endpoints()) {
                for (String a : e.addresses()) {
                    try {
                        Cidr c = Cidr.parseCidrOrIp(a).network();
                        if (!addresses.contains(c)) {
                            addresses.add(c);
                        }
                    } catch (IllegalArgumentException bad) {
                        warnings.warn("{}: endpoint address {} ignored: {}", key, a, bad.getMessage());
                    }
                }
            }
            for (KubernetesEndpointSliceSpec.EndpointPort p : spec.ports()) {
                if (p.port() != null) { // Kubernetes' "all ports": no member, as Calico
                    ports.add(new PortNumber(p.protocol().toLowerCase(Locale.ROOT), p.port()));
                }
            }
        }
        return new Slice(service, List.copyOf(addresses), List.copyOf(ports));
    }
}
