package calico.felix.calc;

import java.util.List;
import java.util.stream.Stream;

/**
 * A policy or profile as the dataplane programs it.
 *
 * @param inbound  rules for traffic towards the endpoint (v3 {@code ingress})
 * @param outbound rules for traffic from the endpoint (v3 {@code egress})
 * @param staged   reported for visibility only; never enforced
 */
public record CompiledPolicy(List<CompiledRule> inbound, List<CompiledRule> outbound, boolean staged) {

    public CompiledPolicy {
        inbound = List.copyOf(inbound);
        outbound = List.copyOf(outbound);
    }

    /** {@return every IP set ID the rules refer to} (with repeats) */
    public Stream<String> ipSetIds() {
        return Stream.concat(inbound.stream(), outbound.stream()).flatMap(CompiledRule::ipSetIds);
    }
}
