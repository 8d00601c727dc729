package calico.felix.calc;

import calico.api.model.Action;
import calico.api.model.Rule;
import java.util.List;

/**
 * A v3 rule with every selector, namespace selector, service-account match and named port
 * replaced by IP set IDs; what remains are literal nets, ports and protocol fields.
 *
 * <p>A packet matches when every non-empty field matches: it must be in each of
 * {@code *IpSetIds}, in none of {@code not*IpSetIds}, and when named-port sets are present its
 * port must match a numeric port or one named-port set.
 */
public record CompiledRule(
        Action action,
        Integer ipVersion,
        String protocol,
        String notProtocol,
        Rule.IcmpFields icmp,
        Rule.IcmpFields notIcmp,
        Side source,
        Side destination,
        Rule.HttpMatch http) {

    /** The source or destination half of a rule. */
    public record Side(List<String> nets, List<String> notNets, List<String> ports, List<String> notPorts,
                       List<String> ipSetIds, List<String> notIpSetIds, List<String> namedPortIpSetIds,
                       List<String> notNamedPortIpSetIds) {
        public Side {
            nets = List.copyOf(nets);
            notNets = List.copyOf(notNets);
            ports = List.copyOf(ports);
            notPorts = List.copyOf(notPorts);
            ipSetIds = List.copyOf(ipSetIds);
            notIpSetIds = List.copyOf(notIpSetIds);
            namedPortIpSetIds = List.copyOf(namedPortIpSetIds);
            notNamedPortIpSetIds = List.copyOf(notNamedPortIpSetIds);
        }

        public static final Side ANY = new Side(List.of(), List.of(), List.of(), List.of(), List.of(), List.of(),
                List.of(), List.of());
    }

    /** Adds every IP set this rule refers to, source side first, to {@code out} ({@link CompiledPolicy#ipSetIds}). */
    void addIpSetIds(java.util.Collection<String> out) {
        for (Side s : List.of(source, destination)) {
            out.addAll(s.ipSetIds());
            out.addAll(s.notIpSetIds());
            out.addAll(s.namedPortIpSetIds());
            out.addAll(s.notNamedPortIpSetIds());
        }
    }
}
