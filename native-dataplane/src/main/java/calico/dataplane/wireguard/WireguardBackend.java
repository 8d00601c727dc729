package calico.dataplane.wireguard;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Makes, configures, reads and removes WireGuard devices in one network namespace: the kernel's
 * module over generic netlink ({@link KernelWireguard}) or Debian's {@code wireguard-go} over its
 * userspace API socket ({@link UserspaceWireguard}). {@link #choose} picks one, once; callers
 * never ask which. Like the netlink classes, an instance belongs to the thread (and so the
 * namespace) that made it and is not thread-safe.
 */
public interface WireguardBackend extends AutoCloseable {

    /** {@return {@code kernel} or {@code wireguard-go}}: for logs and status */
    String name();

    /** Makes device {@code ifname} when it is missing (down, no key); {@return whether it was made} */
    boolean ensureDevice(String ifname);

    /** {@return the device's configuration}, empty when there is no such device */
    Optional<WireguardState> read(String ifname);

    /** Changes the device as {@code change} says; nothing is sent for an empty change. */
    void apply(String ifname, WireguardChange change);

    /** Removes the device; {@return false when there was none} */
    boolean deleteDevice(String ifname);

    @Override
    void close();

    /**
     * {@return the kernel backend when this namespace's kernel has the {@code wireguard} generic
     * netlink family, else the userspace one}: fails, naming both, when neither is there.
     *
     * @param commandPrefix runs a command in the namespace ({@code ip netns exec <ns>}), empty for our own
     * @param socketDir     where the userspace devices' API sockets are reached (see {@link UserspaceWireguard})
     */
    static WireguardBackend choose(List<String> commandPrefix, Path socketDir) {
        if (KernelWireguard.available()) {
            return new KernelWireguard();
        }
        if (UserspaceWireguard.installed()) {
            return new UserspaceWireguard(commandPrefix, socketDir);
        }
        throw new IllegalStateException("WireGuard: the kernel has no wireguard module (no 'wireguard' generic "
                + "netlink family) and wireguard-go is not on PATH");
    }
}
