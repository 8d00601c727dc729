package calico.libcalico.bird;

/**
 * One route of {@code show route all}.
 *
 * @param table       BIRD's table ({@code master4}, {@code master6})
 * @param destination the prefix
 * @param kind        {@code unicast}, {@code blackhole}, {@code unreachable} or {@code prohibit}
 * @param protocol    the protocol that gave it ({@code Mesh_10_99_0_2}, {@code static1}, ...)
 * @param primary     whether BIRD selected it ({@code *}): the one exported to the kernel
 * @param gateway     the next hop ({@code via}), or null
 * @param iface       the device ({@code on}/{@code dev}), or null
 */
public record BirdRoute(String table, String destination, String kind, String protocol, boolean primary,
                        String gateway, String iface) {

    /** {@return whether the destination is IPv6} */
    public boolean ipv6() {
        return destination.indexOf(':') >= 0;
    }

    BirdRoute withNextHop(String newGateway, String newIface) {
        return new BirdRoute(table, destination, kind, protocol, primary, newGateway, newIface);
    }
}
