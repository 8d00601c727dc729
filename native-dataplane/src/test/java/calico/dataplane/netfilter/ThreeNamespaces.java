package calico.dataplane.netfilter;

import calico.dataplane.testing.NetNs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * A client and a server namespace joined through a router namespace, the host felix would run
 * in: {@code client c0 (10.99.1.2, fd99:1::2) <-> hc router hs <-> s0 server (10.99.2.2,
 * fd99:2::2)}. The router forwards both families; everything is deleted on {@link #close()}.
 */
final class ThreeNamespaces implements AutoCloseable {
    static final String PREFIX = "flows-native";
    static final String CLIENT4 = "10.99.1.2";
    static final String SERVER4 = "10.99.2.2";
    static final String CLIENT6 = "fd99:1::2";
    static final String SERVER6 = "fd99:2::2";

    final NetNs client;
    final NetNs router;
    final NetNs server;

    ThreeNamespaces(String name) {
        NetNs c = null;
        NetNs r = null;
        NetNs s = null;
        try {
            c = NetNs.create(PREFIX + "-" + name + "c");
            r = NetNs.create(PREFIX + "-" + name + "r");
            s = NetNs.create(PREFIX + "-" + name + "s");
            r.veth("hc", c, "c0");
            r.veth("hs", s, "s0");
            address(c, "c0", CLIENT4 + "/24", CLIENT6 + "/64");
            address(r, "hc", "10.99.1.1/24", "fd99:1::1/64");
            address(r, "hs", "10.99.2.1/24", "fd99:2::1/64");
            address(s, "s0", SERVER4 + "/24", SERVER6 + "/64");
            c.exec("ip", "route", "add", "default", "via", "10.99.1.1");
            c.exec("ip", "-6", "route", "add", "default", "via", "fd99:1::1");
            s.exec("ip", "route", "add", "default", "via", "10.99.2.1");
            s.exec("ip", "-6", "route", "add", "default", "via", "fd99:2::1");
            r.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            r.exec("sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
            c.exec("sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647");
        } catch (RuntimeException e) {
            for (NetNs n : new NetNs[] {c, r, s}) {
                if (n != null) {
                    n.close();
                }
            }
            throw e;
        }
        client = c;
        router = r;
        server = s;
    }

    private static void address(NetNs ns, String dev, String v4, String v6) {
        ns.exec("ip", "addr", "add", v4, "dev", dev);
        ns.exec("ip", "addr", "add", v6, "dev", dev, "nodad");
    }

    /** {@return the router's ifindex of {@code dev}}. */
    int routerIfindex(String dev) {
        return Integer.parseInt(router.exec("cat", "/sys/class/net/" + dev + "/ifindex").trim());
    }

    /** Applies an nft script in the router (the test's own namespace, never the machine's). */
    void nft(String script) {
        try {
            Path file = Files.createTempFile("flows-native-", ".nft");
            try {
                Files.writeString(file, script);
                router.exec("nft", "-f", file.toString());
            } finally {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        for (NetNs n : List.of(client, router, server)) {
            n.close();
        }
    }

    /** {@return the namespaces under /run/netns left by these tests}. */
    static List<String> leftovers() {
        Path dir = Path.of("/run/netns");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(PREFIX + "-")).toList();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
