package calico.felix.calc;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.HostEndpoint;
import calico.api.model.NetworkSet;
import calico.api.model.Protocol;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.api.net.Cidr;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Computes the members of every IP set an active rule uses, from every endpoint and network set
 * in the cluster (all nodes), and reports member-level changes.
 *
 * <p>Members are reference counted: two items with the same address (a duplicate IP) keep it in
 * the set until both are gone. An IP set exists while at least one active rule refers to it
 * ({@link #ref}/{@link #unref} counts).
 */
final class IpSetMemberCalculator implements LabelInheritanceIndex.LabelListener {

    private static final Logger LOG = LoggerFactory.getLogger(IpSetMemberCalculator.class);

    interface IpSetListener {
        void onIpSetAdded(String id, IpSetType type);

        void onMemberAdded(String id, IpSetMember member);

        void onMemberRemoved(String id, IpSetMember member);

        void onIpSetRemoved(String id);
    }

    /** What an item contributes: its addresses or nets, and its named ports. */
    private record Source(List<Cidr> cidrs, List<NamedPort> ports) {
    }

    private record NamedPort(String name, String protocol, int port) {
    }

    private final IpSetListener listener;
    /** IP set ID → items its selector matches (all nodes). */
    private final SelectorIndex<String, ResourceKey> index;
    private final Map<String, IpSetSpec> specs = new HashMap<>();
    private final Map<String, Integer> refs = new HashMap<>();
    private final Map<ResourceKey, Source> sources = new HashMap<>();
    /** IP set ID → its members, each with how many matching items contribute it. */
    private final Map<String, MemberCounts> members = new HashMap<>();

    IpSetMemberCalculator(IpSetListener listener) {
        this.listener = listener;
        this.index = new SelectorIndex<>(new SelectorIndex.MatchListener<>() {
            @Override
            public void onMatchStarted(String id, ResourceKey item) {
                contribute(id, sources.get(item), +1);
            }

            @Override
            public void onMatchStopped(String id, ResourceKey item) {
                contribute(id, sources.get(item), -1);
            }
        });
    }

    void registerWith(Dispatcher d) {
        d.register(ResourceKind.WORKLOAD_ENDPOINT, this::onSource);
        d.register(ResourceKind.HOST_ENDPOINT, this::onSource);
        d.register(ResourceKind.NETWORK_SET, this::onSource);
        d.register(ResourceKind.GLOBAL_NETWORK_SET, this::onSource);
    }

    @Override
    public void onLabels(ResourceKey item, Map<String, String> labels) {
        index.updateLabels(item, labels);
    }

    /** An active rule now uses this IP set. */
    void ref(IpSetSpec spec) {
        int n = refs.merge(spec.id(), 1, Integer::sum);
        if (n == 1) {
            specs.put(spec.id(), spec);
            members.put(spec.id(), new MemberCounts(spec.id(), listener));
            listener.onIpSetAdded(spec.id(), spec.type());
            index.updateSelector(spec.id(), spec.selector());
        }
    }

    /** An active rule no longer uses this IP set. */
    void unref(String id) {
        Integer n = refs.get(id);
        if (n == null) {
            throw new IllegalStateException("unref of unknown IP set " + id);
        }
        if (n > 1) {
            refs.put(id, n - 1);
            return;
        }
        refs.remove(id);
        // Drop the selector without member-level noise: the whole set goes.
        members.remove(id);
        specs.remove(id);
        index.deleteSelector(id);
        listener.onIpSetRemoved(id);
    }

    private void onSource(Update u) {
        ResourceKey key = u.key();
        Source old = sources.get(key);
        Source now = u.value() == null ? null : source(u);
        if (Objects.equals(old, now)) {
            return;
        }
        Set<String> matched = index.selectorsMatching(key);
        for (String id : matched) {
            contribute(id, old, -1);
        }
        if (now == null) {
            sources.remove(key);
        } else {
            sources.put(key, now);
        }
        for (String id : matched) {
            contribute(id, now, +1);
        }
    }

    private void contribute(String id, Source src, int delta) {
        MemberCounts m = members.get(id);
        if (src == null || m == null) {
            return; // the set is being removed, or the item has no addresses (yet)
        }
        m.contribute(membersOf(specs.get(id), src), delta);
    }

    private static List<IpSetMember> membersOf(IpSetSpec spec, Source src) {
        List<IpSetMember> out = new ArrayList<>();
        if (spec.type() == IpSetType.NET) {
            Set<Cidr> seen = new HashSet<>();
            for (Cidr c : src.cidrs()) {
                if (seen.add(c)) {
                    out.add(IpSetMember.net(c));
                }
            }
            return out;
        }
        Set<IpSetMember> seen = new HashSet<>();
        for (NamedPort p : src.ports()) {
            if (p.name().equals(spec.portName()) && p.protocol().equals(spec.protocol())) {
                for (Cidr c : src.cidrs()) {
                    if (c.isSingleAddress()) {
                        IpSetMember m = new IpSetMember(c, p.protocol(), p.port());
                        if (seen.add(m)) {
                            out.add(m);
                        }
                    }
                }
            }
        }
        return out;
    }

    private static Source source(Update u) {
        List<Cidr> cidrs = new ArrayList<>();
        List<NamedPort> ports = new ArrayList<>();
        if (u.value() instanceof WorkloadEndpoint w && w.spec() != null) {
            w.spec().ipNetworks().forEach(n -> parse(u.key(), n, cidrs));
            w.spec().ports().forEach(p -> {
                if (p.name() != null && p.port() != null) {
                    ports.add(new NamedPort(p.name(), proto(p.protocol()), p.port()));
                }
            });
        } else if (u.value() instanceof HostEndpoint h && h.spec() != null) {
            h.spec().expectedIPs().forEach(n -> parse(u.key(), n, cidrs));
            h.spec().ports().forEach(p -> {
                if (p.name() != null && p.port() != null) {
                    ports.add(new NamedPort(p.name(), proto(p.protocol()), p.port()));
                }
            });
        } else if (u.value() instanceof NetworkSet n && n.spec() != null) {
            n.spec().nets().forEach(s -> parse(u.key(), s, cidrs));
        } else if (u.value() instanceof GlobalNetworkSet g && g.spec() != null) {
            g.spec().nets().forEach(s -> parse(u.key(), s, cidrs));
        }
        return new Source(List.copyOf(cidrs), List.copyOf(ports));
    }

    private static String proto(Protocol p) {
        return p == null ? "tcp" : p.toString().toLowerCase(Locale.ROOT);
    }

    private static void parse(ResourceKey key, String text, List<Cidr> out) {
        try {
            out.add(Cidr.parseCidrOrIp(text).network());
        } catch (IllegalArgumentException e) {
            LOG.warn("{}: address {} ignored: {}", key, text, e.getMessage());
        }
    }
}
