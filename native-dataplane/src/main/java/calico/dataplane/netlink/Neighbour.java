package calico.dataplane.netlink;

import java.net.InetAddress;
import java.util.Optional;

/**
 * A neighbour (ARP / NDP) entry.
 *
 * @param linkIndex the interface's ifindex
 * @param address   the neighbour's IP address
 * @param mac       its link-layer address ({@code aa:bb:cc:dd:ee:ff}); empty while unresolved
 * @param state     the NUD state bits ({@link #NUD_PERMANENT} for entries felix programs)
 */
public record Neighbour(int linkIndex, InetAddress address, Optional<String> mac, int state) {
    public static final int NUD_INCOMPLETE = 0x01;
    public static final int NUD_REACHABLE = 0x02;
    public static final int NUD_STALE = 0x04;
    public static final int NUD_FAILED = 0x20;
    public static final int NUD_NOARP = 0x40;
    public static final int NUD_PERMANENT = 0x80;

    public boolean permanent() {
        return (state & NUD_PERMANENT) != 0;
    }
}
