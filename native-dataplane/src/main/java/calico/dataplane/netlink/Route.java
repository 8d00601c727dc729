package calico.dataplane.netlink;

import java.net.InetAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * A route, as listed and as given to add/replace/delete. Build one with the factories and
 * the {@code with*} methods:
 * <pre>{@code
 * Route.via(IpPrefix.parse("0.0.0.0/0"), InetAddress.getByName("169.254.1.1"), eth0).withOnlink()
 * Route.device(IpPrefix.parse("10.65.0.3/32"), caliIndex)   // scope link
 * Route.blackhole(IpPrefix.parse("10.65.0.0/26")).inTable(100)
 * }</pre>
 *
 * @param destination the destination prefix (host bits must be zero)
 * @param gateway     the next hop, empty for a directly connected or blackhole route
 * @param linkIndex   the output interface's ifindex, 0 for none
 * @param table       the routing table (254 main; any value up to 2^32-1)
 * @param type        unicast, blackhole, ...
 * @param scope       {@link #SCOPE_UNIVERSE}, {@link #SCOPE_LINK}, {@link #SCOPE_HOST}
 * @param protocol    who installed it (2 kernel, 3 boot, 4 static; felix may use its own number)
 * @param priority    the metric; 0 means "not set" (the kernel's default, 1024 for IPv6)
 * @param onlink      the next hop is on the link even though no address says so
 */
public record Route(IpPrefix destination, Optional<InetAddress> gateway, int linkIndex, long table, Type type,
                    int scope, int protocol, int priority, boolean onlink) {

    public static final int TABLE_MAIN = 254;
    public static final int TABLE_LOCAL = 255;
    public static final int SCOPE_UNIVERSE = 0;
    public static final int SCOPE_LINK = 253;
    public static final int SCOPE_HOST = 254;
    public static final int PROTOCOL_KERNEL = 2;
    public static final int PROTOCOL_BOOT = 3;
    public static final int PROTOCOL_STATIC = 4;

    /** Route types, in kernel order (RTN_UNSPEC = 0 ... RTN_XRESOLVE = 11). */
    public enum Type {
        UNSPEC, UNICAST, LOCAL, BROADCAST, ANYCAST, MULTICAST, BLACKHOLE, UNREACHABLE, PROHIBIT, THROW, NAT, XRESOLVE;

        static Type fromCode(int code) {
            Type[] all = values();
            return code >= 0 && code < all.length ? all[code] : UNSPEC;
        }
    }

    public Route {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(gateway, "gateway");
        Objects.requireNonNull(type, "type");
        gateway.ifPresent(g -> {
            if (IpPrefix.bits(g) != IpPrefix.bits(destination.address())) {
                throw new IllegalArgumentException("gateway: " + g.getHostAddress()
                        + " is not the same IP family as destination " + destination);
            }
        });
        if (linkIndex < 0) {
            throw new IllegalArgumentException("linkIndex: " + linkIndex + " is negative");
        }
        if (table < 0 || table > 0xffffffffL) {
            throw new IllegalArgumentException("table: " + table + " is outside 0..4294967295");
        }
        if (scope < 0 || scope > 255) {
            throw new IllegalArgumentException("scope: " + scope + " is outside 0..255");
        }
        if (protocol < 0 || protocol > 255) {
            throw new IllegalArgumentException("protocol: " + protocol + " is outside 0..255");
        }
    }

    /** {@code <dst> via <gateway> dev <linkIndex>} in main, scope universe; linkIndex 0 lets the kernel pick. */
    public static Route via(IpPrefix destination, InetAddress gateway, int linkIndex) {
        return new Route(destination, Optional.of(gateway), linkIndex, TABLE_MAIN, Type.UNICAST, SCOPE_UNIVERSE,
                PROTOCOL_BOOT, 0, false);
    }

    /** {@code <dst> dev <linkIndex> scope link} in main: a directly connected route, e.g. to a workload. */
    public static Route device(IpPrefix destination, int linkIndex) {
        return new Route(destination, Optional.empty(), linkIndex, TABLE_MAIN, Type.UNICAST, SCOPE_LINK,
                PROTOCOL_BOOT, 0, false);
    }

    /** {@code blackhole <dst>} in main. */
    public static Route blackhole(IpPrefix destination) {
        return new Route(destination, Optional.empty(), 0, TABLE_MAIN, Type.BLACKHOLE, SCOPE_UNIVERSE,
                PROTOCOL_BOOT, 0, false);
    }

    public Route inTable(long newTable) {
        return new Route(destination, gateway, linkIndex, newTable, type, scope, protocol, priority, onlink);
    }

    public Route withProtocol(int newProtocol) {
        return new Route(destination, gateway, linkIndex, table, type, scope, newProtocol, priority, onlink);
    }

    public Route withPriority(int newPriority) {
        return new Route(destination, gateway, linkIndex, table, type, scope, protocol, newPriority, onlink);
    }

    public Route withScope(int newScope) {
        return new Route(destination, gateway, linkIndex, table, type, newScope, protocol, priority, onlink);
    }

    /** Marks the gateway as on-link ({@code default via 169.254.1.1 dev eth0 onlink}). */
    public Route withOnlink() {
        return new Route(destination, gateway, linkIndex, table, type, scope, protocol, priority, true);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        if (type != Type.UNICAST) {
            s.append(type.name().toLowerCase()).append(' ');
        }
        s.append(destination);
        gateway.ifPresent(g -> s.append(" via ").append(g.getHostAddress()));
        if (linkIndex != 0) {
            s.append(" dev ").append(linkIndex);
        }
        if (table != TABLE_MAIN) {
            s.append(" table ").append(table);
        }
        if (onlink) {
            s.append(" onlink");
        }
        return s.toString();
    }
}
