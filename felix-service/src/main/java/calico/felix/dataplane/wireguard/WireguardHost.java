package calico.felix.dataplane.wireguard;

import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * What the WireGuard managers need from felix beyond the model: which node this is (to tell its
 * own WireGuard endpoint from its peers'), where wireguard-go's API sockets go in a named
 * namespace, and who publishes this node's public keys, IPv4 and IPv6 ({@code null} when
 * WireGuard of that family is off or the key is gone); the listeners are called on the dataplane
 * thread and must not block.
 */
public record WireguardHost(String hostname, Path socketDir, Consumer<String> publicKeyListener,
                            Consumer<String> publicKeyV6Listener) {

    /** No node name: WireGuard is never programmed (an enabled {@code wireguardEnabled} is logged). */
    public static final WireguardHost NONE = new WireguardHost("", Path.of("/run/calico/wireguard"), k -> {
    });

    /** IPv4 only: the IPv6 key is told to nobody. */
    public WireguardHost(String hostname, Path socketDir, Consumer<String> publicKeyListener) {
        this(hostname, socketDir, publicKeyListener, k -> {
        });
    }

    /** Calico's default base directory for per-namespace wireguard-go sockets. */
    public static Path socketDirFor(String netns) {
        return Path.of("/run/calico/wireguard", netns == null || netns.isBlank() ? "own" : netns.trim());
    }
}
