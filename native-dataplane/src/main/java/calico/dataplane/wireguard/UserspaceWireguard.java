package calico.dataplane.wireguard;

import calico.dataplane.netlink.VethLinks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WireGuard devices run by Debian's {@code wireguard-go}, configured over its userspace API
 * socket {@code <socketDir>/<ifname>.sock} with the JDK's Unix domain sockets.
 *
 * <p><b>Socket paths.</b> wireguard-go always listens on {@code /var/run/wireguard/<ifname>.sock},
 * a path of the mount namespace, not of the network namespace: two nodes in two network
 * namespaces of one machine, both with Calico's {@code wireguard.cali}, would take the same
 * socket. So in a named network namespace the daemon is started by {@code ip netns exec} (which
 * gives the command a private mount namespace) with {@code socketDir} bind-mounted on
 * {@code /var/run/wireguard} first: the daemon writes its socket into {@code socketDir}, which
 * we reach from our own mount namespace, and every node keeps Calico's interface name. Without a
 * namespace (felix in its own), {@code socketDir} is {@code /var/run/wireguard} itself.
 *
 * <p>The daemon forks itself into the background once the device and socket exist and lives
 * as long as the device: removing the link makes it exit. A device that vanished (the daemon
 * died) reads as absent and is made again by the next {@link #ensureDevice}.
 */
public final class UserspaceWireguard implements WireguardBackend {

    private static final Logger log = LoggerFactory.getLogger(UserspaceWireguard.class);
    static final Path DEFAULT_SOCKET_DIR = Path.of("/var/run/wireguard");
    private static final long START_TIMEOUT_SECONDS = 20;

    private final List<String> commandPrefix;
    private final Path socketDir;
    private final VethLinks links = new VethLinks();

    /**
     * @param commandPrefix {@code ip netns exec <ns>} for a named namespace, empty for our own
     * @param socketDir     this namespace's own socket directory (ignored without a prefix)
     */
    public UserspaceWireguard(List<String> commandPrefix, Path socketDir) {
        this.commandPrefix = List.copyOf(commandPrefix);
        this.socketDir = commandPrefix.isEmpty() ? DEFAULT_SOCKET_DIR : socketDir;
    }

    /** {@return whether wireguard-go is on PATH} */
    public static boolean installed() {
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "wireguard-go"))) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String name() {
        return "wireguard-go";
    }

    /** {@return the API socket of device {@code ifname}} */
    public Path socket(String ifname) {
        return socketDir.resolve(ifname + ".sock");
    }

    @Override
    public boolean ensureDevice(String ifname) {
        if (read(ifname).isPresent()) {
            return false;
        }
        // A link without a daemon behind it (or a stale socket) is removed first.
        links.deleteLink(ifname);
        try {
            Files.createDirectories(socketDir);
            Files.deleteIfExists(socket(ifname));
            List<String> cmd = new ArrayList<>(commandPrefix);
            if (commandPrefix.isEmpty()) {
                cmd.addAll(List.of("wireguard-go", ifname));
            } else {
                cmd.addAll(List.of("sh", "-c", "mkdir -p " + DEFAULT_SOCKET_DIR + " && mount --bind \"$0\" "
                        + DEFAULT_SOCKET_DIR + " && exec wireguard-go \"$1\"", socketDir.toString(), ifname));
            }
            Path logFile = socketDir.resolve(ifname + ".log");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())).start();
            if (!p.waitFor(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("wireguard-go " + ifname + ": not started after "
                        + START_TIMEOUT_SECONDS + " s (log: " + logFile + ")");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("wireguard-go " + ifname + " exited with " + p.exitValue() + ": "
                        + tail(logFile));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("wireguard-go " + ifname + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("wireguard-go " + ifname + ": interrupted while starting", e);
        }
        if (read(ifname).isEmpty()) {
            throw new IllegalStateException("wireguard-go " + ifname + " started but " + socket(ifname) + " does not answer");
        }
        log.info("Started wireguard-go for {} (API socket {})", ifname, socket(ifname));
        return true;
    }

    private static String tail(Path logFile) {
        try {
            List<String> lines = Files.readAllLines(logFile);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    @Override
    public Optional<WireguardState> read(String ifname) {
        Optional<String> answer = exchange(ifname, Uapi.GET);
        return answer.map(Uapi::parseGet);
    }

    @Override
    public void apply(String ifname, WireguardChange change) {
        if (change.isEmpty()) {
            return;
        }
        String answer = exchange(ifname, Uapi.set(change))
                .orElseThrow(() -> new IllegalStateException("WireGuard device " + ifname + " is gone (no "
                        + socket(ifname) + ")"));
        int errno = Uapi.errno(answer);
        if (errno != 0) {
            // wireguard-go answers with a negated errno (-98: EADDRINUSE, the port is still held).
            throw new IllegalStateException("WireGuard device " + ifname + ": set refused with errno " + Math.abs(errno));
        }
    }

    /** {@return the daemon's answer to {@code request}}, empty when nothing listens on the socket */
    private Optional<String> exchange(String ifname, String request) {
        Path sock = socket(ifname);
        if (!Files.exists(sock)) {
            return Optional.empty();
        }
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            try {
                ch.connect(UnixDomainSocketAddress.of(sock));
            } catch (IOException refused) {
                return Optional.empty(); // a socket file left by a dead daemon
            }
            ByteBuffer out = ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII));
            while (out.hasRemaining()) {
                ch.write(out);
            }
            StringBuilder in = new StringBuilder();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            // The answer ends with an empty line; the daemon keeps the connection open for more.
            while (!in.toString().endsWith("\n\n")) {
                buf.clear();
                if (ch.read(buf) < 0) {
                    break;
                }
                buf.flip();
                in.append(StandardCharsets.US_ASCII.decode(buf));
            }
            return Optional.of(in.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("WireGuard userspace API " + sock + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean deleteDevice(String ifname) {
        boolean deleted = links.deleteLink(ifname);
        try {
            Files.deleteIfExists(socket(ifname));
        } catch (IOException e) {
            log.warn("Could not remove {}: {}", socket(ifname), e.getMessage());
        }
        return deleted;
    }

    @Override
    public void close() {
        links.close();
    }
}
