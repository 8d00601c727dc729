package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IpsetFamily;
import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetType;
import calico.felix.calc.IpSetType;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.SetPlan;
import java.util.Collections;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The sets every family's rules need, in ipset syntax: {@link SetPlan}'s (graph sets split by
 * family, referenced but unsent graph sets empty, the pool sets) and the net sets the formatter
 * made. A graph set the model still holds as the same object reuses last time's members (the
 * same instance, so comparing is cheap): that cache is the only state here. Never touches the
 * kernel.
 */
final class IptablesSetPlan {

    /** A set as we program it: family, type and members in ipset's input syntax. */
    record DesiredSet(IpsetFamily family, IpsetType type, Set<String> members) {
    }

    /** A model without graph sets: {@link SetPlan} over it plans only the unsent and driver sets. */
    private static final DataplaneModel EMPTY = new DataplaneModel();

    /** Each graph set's members in one family, as ipset input, while the model holds the same set object. */
    private Map<DataplaneModel.IpSet, Map<IpFamily, Set<String>>> memberCache = new IdentityHashMap<>();

    /** {@return every set the rendered families need}, by kernel name */
    Map<String, DesiredSet> desiredSets(DataplaneModel model, Map<IpFamily, ChainRenderer.Rendered> rendered) {
        Map<String, DesiredSet> out = new TreeMap<>();
        Map<DataplaneModel.IpSet, Map<IpFamily, Set<String>>> cache = new IdentityHashMap<>();
        rendered.forEach((f, r) -> {
            IpsetFamily kf = f == IpFamily.V6 ? IpsetFamily.INET6 : IpsetFamily.INET;
            model.ipSets().forEach((id, s) -> {
                Map<IpFamily, Set<String>> byFamily = cache.computeIfAbsent(s,
                        k -> memberCache.getOrDefault(k, new EnumMap<>(IpFamily.class)));
                Set<String> members = byFamily.computeIfAbsent(f, k -> {
                    int v = k == IpFamily.V6 ? 6 : 4;
                    Set<String> m = new TreeSet<>();
                    s.members().forEach(x -> {
                        if (x.cidr().version() == v) {
                            m.add(x.toString());
                        }
                    });
                    return Collections.unmodifiableSet(m);
                });
                out.put(Names.ipSet(f, id), new DesiredSet(kf, kernelType(s.type()), members));
            });
            SetPlan.of(EMPTY, r.ruleset()).forEach((name, s) -> {
                if (!out.containsKey(name)) { // unsent graph sets (empty) and the driver's pool sets
                    Set<String> members = new TreeSet<>();
                    s.members().forEach(m -> members.add(m.toString()));
                    out.put(name, new DesiredSet(kf, kernelType(s.type()), members));
                }
            });
            r.netSets().forEach((name, members) -> out.put(name, new DesiredSet(kf, IpsetType.HASH_NET, members)));
        });
        memberCache = cache;
        return out;
    }

    /** Whether a kernel set is ours in one of {@code fs}: its family prefix or its swap temporary's. */
    static boolean ownedSet(String name, Set<IpFamily> fs) {
        return (fs.contains(IpFamily.V4) && (name.startsWith(Names.IPSET_V4_PREFIX)
                || name.startsWith(Names.IPSET_V4_TEMP_PREFIX)))
                || (fs.contains(IpFamily.V6) && (name.startsWith(Names.IPSET_V6_PREFIX)
                || name.startsWith(Names.IPSET_V6_TEMP_PREFIX)));
    }

    private static IpsetType kernelType(IpSetType t) {
        return t == IpSetType.IP_AND_PORT ? IpsetType.HASH_IP_PORT : IpsetType.HASH_NET;
    }

    /** Whether {@code kernel} (as {@code ipset save} listed it; null when absent) is {@code wanted}: same type and family, same members. */
    static boolean holds(IpsetInfo kernel, DesiredSet wanted) {
        return kernel != null && kernel.type() == wanted.type() && kernel.family() == wanted.family()
                && kernel.members().equals(normalised(wanted));
    }

    /** Our members as {@code ipset save} prints them: a hash:net host entry loses its {@code /32} or {@code /128}. */
    private static Set<String> normalised(DesiredSet s) {
        Set<String> out = new TreeSet<>();
        s.members().forEach(m -> {
            if (m.endsWith("/32") && s.family() == IpsetFamily.INET) {
                out.add(m.substring(0, m.length() - 3));
            } else if (m.endsWith("/128") && s.family() == IpsetFamily.INET6) {
                out.add(m.substring(0, m.length() - 4));
            } else {
                out.add(m);
            }
        });
        return out;
    }
}
