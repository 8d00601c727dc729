package calico.felix.dataplane.mtu;

import calico.dataplane.netlink.Link;
import java.util.Collection;
import java.util.regex.Pattern;

/**
 * Calico's host MTU detection ({@code findHostMTU}): the smallest MTU among the links whose name
 * matches {@code mtuIfacePattern} (searched, not anchored: Calico's default pattern anchors
 * itself with {@code ^}) and that are up; {@value #FALLBACK} when none matches (the smallest
 * among common clouds, as Calico). "Up" is the administrative {@code IFF_UP} flag that
 * {@link Link#up()} reports; Calico reads the operational state.
 */
public final class HostMtu {

    /** Used when no interface matches: Calico's choice. */
    public static final int FALLBACK = 1460;

    private HostMtu() {
    }

    /** {@return the host MTU among {@code links}} by {@code pattern}. */
    public static int detect(Collection<Link> links, Pattern pattern) {
        return links.stream().filter(Link::up).filter(l -> pattern.matcher(l.name()).find())
                .mapToInt(Link::mtu).filter(m -> m > 0).min().orElse(FALLBACK);
    }
}
