package calico.dataplane.wireguard;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A WireGuard device's configuration: what is read back from a device and what a dataplane
 * wants on it.
 *
 * @param privateKey {@code null} when the device has none
 * @param fwmark     the mark the device puts on its own (encrypted) packets, 0 = none
 * @param peers      by public key
 */
public record WireguardState(WireguardKey privateKey, int listenPort, int fwmark, Map<WireguardKey, WireguardPeer> peers) {

    public WireguardState {
        if (listenPort < 0 || listenPort > 65535) {
            throw new IllegalArgumentException("listenPort: " + listenPort + " is outside 0..65535");
        }
        peers.forEach((k, p) -> {
            if (!k.equals(p.publicKey())) {
                throw new IllegalArgumentException("peers: " + k + " maps to the peer of " + p.publicKey());
            }
        });
        TreeMap<String, WireguardPeer> sorted = new TreeMap<>();
        peers.values().forEach(p -> sorted.put(p.publicKey().base64(), p));
        java.util.LinkedHashMap<WireguardKey, WireguardPeer> byKey = new java.util.LinkedHashMap<>();
        sorted.values().forEach(p -> byKey.put(p.publicKey(), p));
        peers = java.util.Collections.unmodifiableMap(byKey);
    }

    /** {@return the public key of {@link #privateKey}}, {@code null} when there is none */
    public WireguardKey publicKey() {
        return privateKey == null ? null : privateKey.publicKey();
    }

    /** A device with a key and no peers. */
    public static WireguardState of(WireguardKey privateKey, int listenPort, int fwmark) {
        return new WireguardState(Objects.requireNonNull(privateKey, "privateKey"), listenPort, fwmark, Map.of());
    }
}
