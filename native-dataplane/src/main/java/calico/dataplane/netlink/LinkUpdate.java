package calico.dataplane.netlink;

/**
 * One change to a network interface as rtnetlink announces it ({@code RTM_NEWLINK} /
 * {@code RTM_DELLINK}).
 *
 * @param name    the interface name (may be empty for an odd message without {@code IFLA_IFNAME})
 * @param index   the ifindex; a re-created interface gets a new one
 * @param up      whether the administrative {@code IFF_UP} flag is set (false for a deletion)
 * @param deleted whether the interface is gone ({@code RTM_DELLINK})
 */
public record LinkUpdate(String name, int index, boolean up, boolean deleted) {
}
