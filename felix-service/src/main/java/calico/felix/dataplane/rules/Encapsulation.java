package calico.felix.dataplane.rules;

import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.FelixSettings;
import java.util.Collection;

/**
 * Which encapsulations are on: the one decision that the routes to other nodes, the MTUs and
 * the rules accepting tunnel traffic all read (Calico's felix {@code EncapsulationCalculator}).
 * {@code ipipEnabled} / {@code vxlanEnabled} when set; else whether any pool of the family uses
 * the mode (a mode other than {@code Never}). IPIP and {@code vxlan.calico} count IPv4 pools,
 * {@code vxlan-v6.calico} IPv6 pools; an explicit {@code vxlanEnabled: false} turns both VXLAN
 * devices off. A disabled pool counts, as in Calico: it only stops new allocations, and the
 * workloads it already holds still need their tunnels.
 *
 * @param ipip    {@code tunl0}
 * @param vxlan   {@code vxlan.calico} (IPv4)
 * @param vxlanV6 {@code vxlan-v6.calico} (IPv6)
 */
public record Encapsulation(boolean ipip, boolean vxlan, boolean vxlanV6) {

    public static final Encapsulation NONE = new Encapsulation(false, false, false);

    /** {@return what is on} for these settings and pools. */
    public static Encapsulation of(FelixSettings s, Collection<IpPoolUpdate> pools) {
        boolean ipip = s.ipipEnabled().orElseGet(() -> pools.stream()
                .anyMatch(p -> uses(p.ipipMode()) && family(p) == IpFamily.V4));
        boolean vxlan = s.vxlanEnabled().orElseGet(() -> pools.stream()
                .anyMatch(p -> uses(p.vxlanMode()) && family(p) == IpFamily.V4));
        boolean vxlanV6 = s.vxlanEnabled().orElse(true) && pools.stream()
                .anyMatch(p -> uses(p.vxlanMode()) && family(p) == IpFamily.V6);
        return new Encapsulation(ipip, vxlan, vxlanV6);
    }

    /** {@return what is on} for the model's settings and pools. */
    public static Encapsulation of(DataplaneModel model) {
        return of(model.config(), model.pools().values());
    }

    private static IpFamily family(IpPoolUpdate p) {
        return p.cidr() == null || p.cidr().isBlank() ? null : IpFamily.of(p.cidr());
    }

    private static boolean uses(String mode) {
        return mode != null && !mode.isBlank() && !mode.equalsIgnoreCase("Never");
    }
}
