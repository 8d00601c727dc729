package calico.felix.dataplane.rules;

import calico.felix.calc.FelixSettings;

/**
 * How natOutgoing pools' traffic leaving the pools is masqueraded ({@code cali-nat-outgoing}).
 *
 * @param excludeHosts {@code natOutgoingExclusions: IPPoolsAndHostIPs}: traffic to a Calico host's address
 *                     ({@code all-hosts-net}) is not masqueraded either
 * @param minPort      with {@code maxPort}, {@code natPortRange}: TCP and UDP get source ports from this
 *                     range; 0: the kernel's choice
 */
public record NatOutgoing(boolean excludeHosts, int minPort, int maxPort) {

    /** Calico's defaults: exclude the pools only, any port. */
    public static final NatOutgoing DEFAULT = new NatOutgoing(false, 0, 0);

    /**
     * {@return the NAT settings of the effective configuration}. A {@code natPortRange} whose upper
     * end is 0 means "unset", as in Calico; a lower end of 0 becomes 1.
     */
    public static NatOutgoing from(FelixSettings s) {
        int min = s.natPortRange().map(p -> p.minPort()).orElse(0);
        int max = s.natPortRange().map(p -> p.maxPort()).orElse(0);
        return max == 0 ? new NatOutgoing(s.natOutgoingExcludesHosts(), 0, 0)
                : new NatOutgoing(s.natOutgoingExcludesHosts(), Math.max(1, min), max);
    }

    /** {@return the masquerade target for protocols that have ports ({@code withPorts}) or for the rest} */
    Target.Masquerade masquerade(boolean withPorts) {
        // Fully random port choice, as Calico's felix renders it wherever the kernel has it (3.14+).
        return withPorts && maxPort > 0 ? new Target.Masquerade(minPort, maxPort, true)
                : new Target.Masquerade(0, 0, true);
    }
}
