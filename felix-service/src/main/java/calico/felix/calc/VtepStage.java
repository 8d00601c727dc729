package calico.felix.calc;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ResourceKind;
import calico.libcalico.syncer.Update;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Node resources to {@link DataplaneUpdate.VtepUpdate}/{@code VtepRemove} (Calico's VXLAN
 * resolver, the VTEP half), keyed by node name.
 *
 * <p>A family's half is sent when the Node has both that family's VXLAN tunnel address and an
 * address of that family ({@code spec.bgp.ipv4Address}/{@code ipv6Address}, the parent device's);
 * a node with neither half has no VTEP. A Node without {@code vxlanTunnelMACAddr} (calico-node's
 * start-up never writes one) gets the MAC Calico's felix derives: the byte {@code 0x66} then the
 * first five bytes of SHA-1 of the node name ({@code name + "-v6"} for IPv6) — locally
 * administered and unicast, and the same on every node, so the owner's device and the others'
 * neighbour and FDB entries agree without anyone writing it down.
 */
public final class VtepStage {

    private static final Logger log = LoggerFactory.getLogger(VtepStage.class);

    private final InfraListener out;
    /** What was last sent per node: no-op suppression and remove-only-after-add. */
    private final Map<String, DataplaneUpdate.VtepUpdate> sent = new HashMap<>();

    public VtepStage(InfraListener out) {
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.NODE, this::onUpdate);
    }

    private void onUpdate(Update update) {
        String name = update.key().name();
        DataplaneUpdate.VtepUpdate next = update.value() instanceof Node node ? toVtep(name, node.spec()) : null;
        if (next == null) {
            if (sent.remove(name) != null) {
                out.onInfraUpdate(new DataplaneUpdate.VtepRemove(name));
            }
            return;
        }
        if (!next.equals(sent.put(name, next))) {
            out.onInfraUpdate(next);
        }
    }

    /** {@return the node's VTEP}, or null when it has no usable half. */
    static DataplaneUpdate.VtepUpdate toVtep(String name, NodeSpec spec) {
        if (spec == null) {
            return null;
        }
        NodeSpec.BGP bgp = spec.bgp();
        String parent4 = bgp == null ? null : HostMetadataStage.bareAddress(name, "ipv4Address", bgp.ipv4Address(), 4);
        String parent6 = bgp == null ? null : HostMetadataStage.bareAddress(name, "ipv6Address", bgp.ipv6Address(), 6);
        String tunnel4 = HostMetadataStage.bareAddress(name, "ipv4VXLANTunnelAddr", spec.ipv4VXLANTunnelAddr(), 4);
        String tunnel6 = HostMetadataStage.bareAddress(name, "ipv6VXLANTunnelAddr", spec.ipv6VXLANTunnelAddr(), 6);
        boolean v4 = tunnel4 != null && parent4 != null;
        boolean v6 = tunnel6 != null && parent6 != null;
        if (!v4 && !v6) {
            return null;
        }
        return new DataplaneUpdate.VtepUpdate(name,
                v4 ? mac(name, "vxlanTunnelMACAddr", spec.vxlanTunnelMACAddr(), name) : null,
                v4 ? tunnel4 : null, v4 ? parent4 : null,
                v6 ? mac(name, "vxlanTunnelMACAddrV6", spec.vxlanTunnelMACAddrV6(), name + "-v6") : null,
                v6 ? tunnel6 : null, v6 ? parent6 : null);
    }

    private static String mac(String node, String field, String given, String seed) {
        if (given != null && !given.isBlank()) {
            String m = given.trim().toLowerCase(java.util.Locale.ROOT).replace('-', ':');
            if (m.matches("[0-9a-f]{2}(:[0-9a-f]{2}){5}")) {
                return m;
            }
            log.warn("Node {} spec.{} \"{}\" is not a MAC address; using the derived one", node, field, given);
        }
        return derivedMac(seed);
    }

    /** {@return Calico's derived VTEP MAC for {@code seed}}: 0x66 ('f') then SHA-1(seed)[0..5]. */
    static String derivedMac(String seed) {
        try {
            byte[] sha = MessageDigest.getInstance("SHA-1").digest(seed.getBytes(StandardCharsets.UTF_8));
            byte[] mac = new byte[6];
            mac[0] = 'f';
            System.arraycopy(sha, 0, mac, 1, 5);
            return HexFormat.ofDelimiter(":").formatHex(mac);
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError("every JDK has SHA-1", e);
        }
    }
}
