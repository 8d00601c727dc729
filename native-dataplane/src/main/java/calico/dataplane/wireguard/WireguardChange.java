package calico.dataplane.wireguard;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What must change on a device to turn one {@link WireguardState} into another: only the
 * settings that differ, the peers to remove and the peers to (re)write whole. Peers that are
 * already right are left alone, so their sessions (handshakes) survive every other change.
 *
 * @param privateKey  {@code null}: unchanged
 * @param listenPort  {@code null}: unchanged
 * @param fwmark      {@code null}: unchanged
 * @param removePeers public keys to remove
 * @param setPeers    peers to add or replace (endpoint, keepalive and the allowed IPs replaced)
 */
public record WireguardChange(WireguardKey privateKey, Integer listenPort, Integer fwmark,
                              List<WireguardKey> removePeers, List<WireguardPeer> setPeers) {

    public WireguardChange {
        removePeers = List.copyOf(removePeers);
        setPeers = List.copyOf(setPeers);
    }

    /** {@return the change from {@code current} (null: a device read as empty) to {@code desired}} */
    public static WireguardChange between(WireguardState current, WireguardState desired) {
        Objects.requireNonNull(desired, "desired");
        WireguardState now = current != null ? current : new WireguardState(null, 0, 0, java.util.Map.of());
        List<WireguardKey> remove = new ArrayList<>();
        now.peers().keySet().forEach(k -> {
            if (!desired.peers().containsKey(k)) {
                remove.add(k);
            }
        });
        List<WireguardPeer> set = new ArrayList<>();
        desired.peers().forEach((k, p) -> {
            if (!p.equals(now.peers().get(k))) {
                set.add(p);
            }
        });
        return new WireguardChange(
                Objects.equals(now.privateKey(), desired.privateKey()) ? null : desired.privateKey(),
                now.listenPort() == desired.listenPort() ? null : desired.listenPort(),
                now.fwmark() == desired.fwmark() ? null : desired.fwmark(),
                remove, set);
    }

    public boolean isEmpty() {
        return privateKey == null && listenPort == null && fwmark == null && removePeers.isEmpty() && setPeers.isEmpty();
    }
}
