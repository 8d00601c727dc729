package calico.felix.dataplane.rules;

import calico.api.net.Cidr;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The kernel sets a ruleset needs, by kernel name: every graph set split by family (a set
 * holds one family's members), graph sets a rule names that the graph has not sent (programmed
 * empty, so the rule fails closed), and the driver's own sets. Shared by both drivers so they
 * program the same sets under the same names.
 */
public final class SetPlan {

    /** One kernel set: its family, what its members are, and its members. */
    public record DesiredSet(IpFamily family, IpSetType type, Set<IpSetMember> members) {
        public DesiredSet {
            members = Set.copyOf(members);
        }
    }

    private SetPlan() {
    }

    public static SortedMap<String, DesiredSet> of(DataplaneModel model, Ruleset ruleset) {
        SortedMap<String, DesiredSet> out = new TreeMap<>();
        for (IpFamily f : ruleset.families()) {
            model.ipSets().forEach((id, s) -> out.put(Names.ipSet(f, id),
                    new DesiredSet(f, s.type(), inFamily(s.members(), f))));
            for (String id : ruleset.graphSetIds()) {
                if (!model.ipSets().containsKey(id)) {
                    out.putIfAbsent(Names.ipSet(f, id), new DesiredSet(f,
                            id.startsWith("n:") ? IpSetType.IP_AND_PORT : IpSetType.NET, Set.of()));
                }
            }
            ruleset.driverSets().forEach((id, cidrs) -> out.put(Names.ipSet(f, id), new DesiredSet(f, IpSetType.NET,
                    cidrs.stream().filter(c -> IpFamily.of(c) == f).map(c -> IpSetMember.net(Cidr.parse(c)))
                            .collect(Collectors.toSet()))));
        }
        return out;
    }

    private static Set<IpSetMember> inFamily(Set<IpSetMember> members, IpFamily f) {
        int v = f == IpFamily.V6 ? 6 : 4;
        return members.stream().filter(m -> m.cidr().version() == v).collect(Collectors.toSet());
    }
}
