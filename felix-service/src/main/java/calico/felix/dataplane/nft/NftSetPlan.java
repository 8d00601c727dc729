package calico.felix.dataplane.nft;

import calico.api.net.Cidr;
import calico.dataplane.nft.NftElem;
import calico.dataplane.nft.SetSpec;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Ruleset;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The named sets our table should hold for a model and its ruleset: every graph IP set in each
 * family the ruleset serves (members of that family only), graph sets the rules name but the
 * graph has not sent (empty: a rule allowing "members of X" then allows nobody, failing
 * closed), and the ruleset's driver sets. Members are kept as canonical strings ({@code
 * 10.0.0.1/32}, {@code 10.0.0.1,tcp:8080}) so a kernel listing can be compared with them.
 */
final class NftSetPlan {

    /** One named set: CIDRs (an interval set) or named-port triples (address . proto . port). */
    record NftSet(String name, IpFamily family, boolean namedPorts, SortedSet<String> members) {
        NftSet {
            Objects.requireNonNull(name, "name");
            members = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(members));
        }

        SetSpec spec() {
            int v = family == IpFamily.V4 ? 4 : 6;
            return namedPorts ? SetSpec.namedPorts(v) : SetSpec.cidrs(v);
        }

        boolean sameShape(NftSet o) {
            return family == o.family && namedPorts == o.namedPorts;
        }

        List<JsonNode> elements(Collection<String> ms) {
            List<JsonNode> out = new ArrayList<>(ms.size());
            for (String m : ms) {
                if (namedPorts) {
                    int comma = m.indexOf(',');
                    int colon = m.lastIndexOf(':');
                    out.add(NftElem.namedPort(m.substring(0, comma), m.substring(comma + 1, colon),
                            Integer.parseInt(m.substring(colon + 1))));
                } else {
                    out.add(NftElem.cidr(m));
                }
            }
            return out;
        }
    }

    private NftSetPlan() {
    }

    /** {@return the sets by kernel name} */
    static SortedMap<String, NftSet> plan(DataplaneModel model, Ruleset ruleset) {
        SortedMap<String, NftSet> out = new TreeMap<>();
        for (IpFamily f : ruleset.families()) {
            int version = f == IpFamily.V4 ? 4 : 6;
            model.ipSets().forEach((id, s) -> {
                boolean ports = s.type() == IpSetType.IP_AND_PORT;
                Set<String> members = new TreeSet<>();
                List<Cidr> nets = new ArrayList<>();
                for (IpSetMember m : s.members()) {
                    if (m.cidr().version() != version) {
                        continue;
                    }
                    if (ports) {
                        members.add(m.cidr().address() + "," + m.protocol() + ":" + m.port());
                    } else {
                        nets.add(m.cidr().network());
                    }
                }
                NftRuleFormatter.withoutContained(nets).forEach(c -> members.add(c.toString()));
                put(out, new NftSet(NftNames.set(f, id), f, ports, new TreeSet<>(members)));
            });
            for (String id : ruleset.graphSetIds()) {
                if (!model.ipSets().containsKey(id)) {
                    // Named-port set IDs start with "n:" in the calculation graph.
                    put(out, new NftSet(NftNames.set(f, id), f, id.startsWith("n:"), new TreeSet<>()));
                }
            }
            ruleset.driverSets().forEach((id, cidrs) -> {
                List<Cidr> nets = new ArrayList<>();
                for (String c : cidrs) {
                    Cidr cidr = Cidr.tryParseCidrOrIp(c).orElseThrow(
                            () -> new IllegalArgumentException("driver set " + id + ": not a CIDR: " + c));
                    if (cidr.version() == version) {
                        nets.add(cidr.network());
                    }
                }
                TreeSet<String> members = new TreeSet<>();
                NftRuleFormatter.withoutContained(nets).forEach(c -> members.add(c.toString()));
                put(out, new NftSet(NftNames.set(f, id), f, false, members));
            });
        }
        return out;
    }

    private static void put(Map<String, NftSet> out, NftSet s) {
        NftSet old = out.put(s.name(), s);
        if (old != null && !old.equals(s)) {
            throw new IllegalStateException("two sets render to the kernel name " + s.name());
        }
    }

    /**
     * {@return a listed element in our canonical member form}, or its JSON text when it is none
     * of ours (a range a stranger added), so it never equals a member.
     */
    static String canonical(JsonNode e, boolean namedPorts) {
        JsonNode v = e.has("elem") ? e.get("elem").get("val") : e;
        try {
            if (namedPorts && v.has("concat")) {
                JsonNode c = v.get("concat");
                return Cidr.parseCidrOrIp(c.get(0).asText()).address() + "," + c.get(1).asText() + ":" + c.get(2).asInt();
            }
            if (v.isTextual()) {
                return Cidr.parseCidrOrIp(v.asText()).toString();
            }
            if (v.has("prefix")) {
                JsonNode p = v.get("prefix");
                return Cidr.parse(p.get("addr").asText() + "/" + p.get("len").asInt()).toString();
            }
        } catch (RuntimeException e2) {
            // fall through: not a member shape of ours
        }
        return v.toString();
    }
}
