package calico.dataplane.netlink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The per-interface sysctls felix sets on workload and host interfaces, written to
 * {@code /proc/sys/net/...} directly (no {@code sysctl} command).
 *
 * <p>{@code /proc/sys/net} resolves against the network namespace of the <em>thread</em> that
 * opens the file, so a write made from a thread that has {@code setns()}'d into a namespace
 * lands in that namespace. Every call opens and closes its file on the calling thread.
 */
public final class Sysctls {
    private final Path root;

    /** Uses the real {@code /proc/sys}. */
    public Sysctls() {
        this(Path.of("/proc/sys"));
    }

    /** Uses {@code root} in place of {@code /proc/sys}. */
    public Sysctls(Path root) {
        this.root = root;
    }

    /** {@code net.ipv4.conf.<iface>.proxy_arp}: answer ARP for addresses routed elsewhere. */
    public void setProxyArp(String iface, boolean on) {
        write("net/ipv4/conf/" + checkName(iface) + "/proxy_arp", on ? "1" : "0");
    }

    /** {@code net.ipv4.neigh.<iface>.proxy_delay} in jiffies-as-ms; felix sets 0. */
    public void setProxyDelay(String iface, int value) {
        if (value < 0) {
            throw new IllegalArgumentException("proxy_delay: " + value + " is negative");
        }
        write("net/ipv4/neigh/" + checkName(iface) + "/proxy_delay", Integer.toString(value));
    }

    /** {@code net.ipv4.conf.<iface>.forwarding}. */
    public void setIpv4Forwarding(String iface, boolean on) {
        write("net/ipv4/conf/" + checkName(iface) + "/forwarding", on ? "1" : "0");
    }

    /** {@code net.ipv6.conf.<iface>.forwarding}. */
    public void setIpv6Forwarding(String iface, boolean on) {
        write("net/ipv6/conf/" + checkName(iface) + "/forwarding", on ? "1" : "0");
    }

    /** {@code net.ipv4.conf.<iface>.rp_filter}: 0 off, 1 strict, 2 loose. */
    public void setRpFilter(String iface, int mode) {
        if (mode < 0 || mode > 2) {
            throw new IllegalArgumentException("rp_filter: " + mode + " is not 0, 1 or 2");
        }
        write("net/ipv4/conf/" + checkName(iface) + "/rp_filter", Integer.toString(mode));
    }

    /** {@code net.ipv4.conf.<iface>.route_localnet}. */
    public void setRouteLocalnet(String iface, boolean on) {
        write("net/ipv4/conf/" + checkName(iface) + "/route_localnet", on ? "1" : "0");
    }

    /** {@return the trimmed value of {@code key}} in slash form, e.g. {@code net/ipv4/ip_forward}. */
    public String read(String key) {
        Path p = resolve(key);
        try {
            return Files.readString(p, StandardCharsets.US_ASCII).trim();
        } catch (NoSuchFileException e) {
            throw new UncheckedIOException("read sysctl " + key + ": no such key (missing interface?)", e);
        } catch (IOException e) {
            throw new UncheckedIOException("read sysctl " + key + ": " + e.getMessage(), e);
        }
    }

    /** Writes {@code value} to {@code key} in slash form; never creates files. */
    public void write(String key, String value) {
        Path p = resolve(key);
        try {
            Files.writeString(p, value + "\n", StandardCharsets.US_ASCII, StandardOpenOption.WRITE);
        } catch (NoSuchFileException e) {
            throw new UncheckedIOException("write sysctl " + key + "=" + value + ": no such key (missing interface?)", e);
        } catch (IOException e) {
            throw new UncheckedIOException("write sysctl " + key + "=" + value + ": " + e.getMessage(), e);
        }
    }

    private Path resolve(String key) {
        if (key == null || key.isEmpty() || key.startsWith("/") || key.contains("..")) {
            throw new IllegalArgumentException("sysctl key: '" + key + "' must be a relative path under /proc/sys");
        }
        return root.resolve(key);
    }

    private static String checkName(String iface) {
        if (iface == null || iface.isEmpty() || iface.length() > 15 || iface.contains("/")
                || iface.equals(".") || iface.equals("..")) {
            throw new IllegalArgumentException("interface name: '" + iface + "' is not a valid Linux interface name");
        }
        return iface;
    }
}
