package calico.felix.calc;

import java.util.List;
import java.util.stream.Stream;

/**
 * A policy or profile as the dataplane programs it.
 *
 * @param inbound  rules for traffic towards the endpoint (v3 {@code ingress})
 * @param outbound rules for traffic from the endpoint (v3 {@code egress})
 * @param staged   reported for visibility only; never enforced
 * @param deletes  for a staged {@code stagedAction: Delete}, the enforced policy it would delete
 *                 (the pending trace skips both); {@code null} otherwise
 */
public record CompiledPolicy(List<CompiledRule> inbound, List<CompiledRule> outbound, boolean staged,
                             PolicyId deletes) {

    public CompiledPolicy {
        inbound = List.copyOf(inbound);
        outbound = List.copyOf(outbound);
        if (deletes != null && (!staged || !inbound.isEmpty() || !outbound.isEmpty())) {
            throw new IllegalArgumentException("a staged delete is staged and has no rules");
        }
    }

    public CompiledPolicy(List<CompiledRule> inbound, List<CompiledRule> outbound, boolean staged) {
        this(inbound, outbound, staged, null);
    }

    /** {@return the staged delete of {@code target}}: no rules of its own. */
    static CompiledPolicy stagedDelete(PolicyId target) {
        return new CompiledPolicy(List.of(), List.of(), true, target);
    }

    /** {@return every IP set ID the rules refer to} (with repeats) */
    public Stream<String> ipSetIds() {
        // Loops, not nested flatMaps: the dataplane asks for every new policy (a catch-up: thousands).
        List<String> out = new java.util.ArrayList<>();
        for (List<CompiledRule> rules : List.of(inbound, outbound)) {
            for (CompiledRule r : rules) {
                r.addIpSetIds(out);
            }
        }
        return out.stream();
    }
}
