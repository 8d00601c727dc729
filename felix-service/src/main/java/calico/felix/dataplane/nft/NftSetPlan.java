package calico.felix.dataplane.nft;

import calico.api.net.Cidr;
import calico.dataplane.nft.NftElem;
import calico.dataplane.nft.SetSpec;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.SetPlan;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The named sets our table should hold: {@link SetPlan}'s (every graph set per family, graph
 * sets the rules name but the graph has not sent as empty sets, the driver's sets), in nft
 * shapes. Members are kept as canonical strings ({@code 10.0.0.1/32}, {@code
 * 10.0.0.1,tcp:8080}) so a kernel listing can be compared with them.
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

    /** {@return {@link SetPlan}'s set {@code name} in nft shape}, CIDR members made interval-set safe */
    static NftSet of(String name, SetPlan.DesiredSet s) {
        boolean ports = s.type() == IpSetType.IP_AND_PORT;
        TreeSet<String> members = new TreeSet<>();
        List<Cidr> nets = new ArrayList<>();
        for (IpSetMember m : s.members()) {
            if (ports) {
                members.add(m.toString()); // address,proto:port
            } else {
                nets.add(m.cidr().network());
            }
        }
        // An interval set refuses overlapping elements: keep only the outermost nets.
        NftRuleFormatter.withoutContained(nets).forEach(c -> members.add(c.toString()));
        return new NftSet(name, s.family(), ports, members);
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
