package calico.dataplane.netlink;

import java.net.InetAddress;
import java.util.Objects;

/**
 * A bridge forwarding entry on a VXLAN device ({@code bridge fdb ... dst <ip> self permanent}):
 * frames for {@code mac} are sent, encapsulated, to the underlay address {@code destination}.
 *
 * @param linkIndex   the VXLAN device's ifindex
 * @param mac         the remote VTEP's MAC ({@code aa:bb:cc:dd:ee:ff})
 * @param destination the remote node's underlay address
 * @param state       the NUD state bits ({@link Neighbour#NUD_PERMANENT} for entries felix programs)
 */
public record FdbEntry(int linkIndex, String mac, InetAddress destination, int state) {
    public FdbEntry {
        Objects.requireNonNull(mac, "mac");
        Objects.requireNonNull(destination, "destination");
    }

    public boolean permanent() {
        return (state & Neighbour.NUD_PERMANENT) != 0;
    }
}
