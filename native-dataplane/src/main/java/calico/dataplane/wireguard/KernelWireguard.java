package calico.dataplane.wireguard;

import calico.dataplane.netlink.GenericNetlinkSocket;
import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.VethLinks;
import java.util.List;
import java.util.Optional;

/**
 * WireGuard devices of the kernel's {@code wireguard} module: made with rtnetlink ({@code ip
 * link add ... type wireguard}) and configured over the {@code wireguard} generic netlink
 * family, as Calico's felix does. Used only where the family exists ({@link #available}).
 */
public final class KernelWireguard implements WireguardBackend {

    private static final String FAMILY = "wireguard";

    private final GenericNetlinkSocket genl = new GenericNetlinkSocket();
    private final VethLinks links = new VethLinks();
    private final int family;

    public KernelWireguard() {
        family = genl.familyId(FAMILY).orElseThrow(() -> {
            close();
            return new IllegalStateException("the kernel has no 'wireguard' generic netlink family (no module)");
        });
    }

    /** {@return whether this namespace's kernel has the {@code wireguard} generic netlink family} */
    public static boolean available() {
        try (GenericNetlinkSocket s = new GenericNetlinkSocket()) {
            return s.familyId(FAMILY).isPresent();
        }
    }

    @Override
    public String name() {
        return "kernel";
    }

    @Override
    public boolean ensureDevice(String ifname) {
        try {
            links.createLink(ifname, FAMILY);
            return true;
        } catch (NetlinkException e) {
            if (e.alreadyExists()) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public Optional<WireguardState> read(String ifname) {
        try {
            List<java.nio.ByteBuffer> replies = genl.request("get WireGuard device " + ifname, family,
                    GenericNetlinkSocket.NLM_F_DUMP, WireguardNetlink.get(ifname));
            return Optional.of(WireguardNetlink.parseGet(replies));
        } catch (NetlinkException e) {
            if (e.errno() == calico.dataplane.netlink.Errno.ENODEV) {
                return Optional.empty();
            }
            throw e;
        }
    }

    @Override
    public void apply(String ifname, WireguardChange change) {
        if (!change.isEmpty()) {
            genl.request("set WireGuard device " + ifname, family, 0, WireguardNetlink.set(ifname, change));
        }
    }

    @Override
    public boolean deleteDevice(String ifname) {
        return links.deleteLink(ifname);
    }

    @Override
    public void close() {
        genl.close();
        links.close();
    }
}
