package calico.felix.dataplane.mtu;

import java.util.stream.IntStream;

/**
 * The MTUs felix derives from the host's MTU: one per encapsulation device, and the pod MTU the
 * CNI plugin gives new workload interfaces (Calico's {@code ConfigureDefaultMTUs} and
 * {@code determinePodMTU}). A device's MTU is its configured value ({@code ipipMTU},
 * {@code vxlanMTU}, {@code vxlanMTUV6}, {@code wireguardMTU}, {@code wireguardMTUV6}) or, when
 * that is 0, the host MTU less the encapsulation's overhead, whether or not the encapsulation is
 * on (as in Calico); the pod MTU is the smallest MTU among the encapsulations that are on, or the
 * host MTU when none is. Immutable; the VXLAN and WireGuard device managers read their MTU here.
 *
 * @param host        the detected host MTU ({@link HostMtu})
 * @param ipip        the {@code tunl0} MTU
 * @param vxlan       the {@code vxlan.calico} MTU
 * @param vxlanV6     the {@code vxlan-v6.calico} MTU
 * @param wireguard   the {@code wireguard.cali} MTU
 * @param wireguardV6 the {@code wg-v6.cali} MTU
 * @param pod         the workload interfaces' MTU: what felix writes to the MTU file
 */
public record Mtus(int host, int ipip, int vxlan, int vxlanV6, int wireguard, int wireguardV6, int pod) {

    /** IPv4 outer header. */
    public static final int IPIP_OVERHEAD = 20;
    /** Outer IPv4 (20) + UDP (8) + VXLAN (8) + inner Ethernet (14). */
    public static final int VXLAN_OVERHEAD = 50;
    /** As {@link #VXLAN_OVERHEAD} with a 40-byte IPv6 outer header. */
    public static final int VXLAN_V6_OVERHEAD = 70;
    /** Outer IPv4 (20) + UDP (8) + WireGuard header and tag (32). */
    public static final int WIREGUARD_OVERHEAD = 60;
    /** As {@link #WIREGUARD_OVERHEAD} with a 40-byte IPv6 outer header. */
    public static final int WIREGUARD_V6_OVERHEAD = 80;

    /** Which encapsulations are on (each decided elsewhere: FelixConfiguration, else the IP pools). */
    public record Enabled(boolean ipip, boolean vxlan, boolean vxlanV6, boolean wireguard, boolean wireguardV6) {
        public static final Enabled NONE = new Enabled(false, false, false, false, false);
    }

    /** The configured MTUs; 0 means "the host MTU less the overhead". */
    public record Configured(int ipip, int vxlan, int vxlanV6, int wireguard, int wireguardV6) {
        public static final Configured NONE = new Configured(0, 0, 0, 0, 0);

        public Configured {
            for (int m : new int[] {ipip, vxlan, vxlanV6, wireguard, wireguardV6}) {
                if (m < 0) {
                    throw new IllegalArgumentException("configured MTU: must be 0 (derive) or positive, was " + m);
                }
            }
        }
    }

    public Mtus {
        if (host <= 0) {
            throw new IllegalArgumentException("host MTU: must be positive, was " + host);
        }
    }

    /** {@return the MTUs for a host MTU}, the encapsulations that are on and what is configured. */
    public static Mtus of(int hostMtu, Enabled enabled, Configured configured) {
        int ipip = orDerived(configured.ipip(), hostMtu, IPIP_OVERHEAD);
        int vxlan = orDerived(configured.vxlan(), hostMtu, VXLAN_OVERHEAD);
        int vxlanV6 = orDerived(configured.vxlanV6(), hostMtu, VXLAN_V6_OVERHEAD);
        int wireguard = orDerived(configured.wireguard(), hostMtu, WIREGUARD_OVERHEAD);
        int wireguardV6 = orDerived(configured.wireguardV6(), hostMtu, WIREGUARD_V6_OVERHEAD);
        IntStream.Builder on = IntStream.builder();
        if (enabled.ipip()) {
            on.add(ipip);
        }
        if (enabled.vxlan()) {
            on.add(vxlan);
        }
        if (enabled.vxlanV6()) {
            on.add(vxlanV6);
        }
        if (enabled.wireguard()) {
            on.add(wireguard);
        }
        if (enabled.wireguardV6()) {
            on.add(wireguardV6);
        }
        // No encapsulation: the pod MTU is the host's. A configured MTU above the host's is kept
        // (Calico only warns): the operator may know the path better than the interfaces say.
        return new Mtus(hostMtu, ipip, vxlan, vxlanV6, wireguard, wireguardV6, on.build().min().orElse(hostMtu));
    }

    private static int orDerived(int configured, int hostMtu, int overhead) {
        return configured != 0 ? configured : hostMtu - overhead;
    }
}
