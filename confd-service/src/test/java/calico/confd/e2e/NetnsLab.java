package calico.confd.e2e;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.confd.Await;
import calico.dataplane.testing.NetNs;
import calico.libcalico.bird.BirdControl;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Network namespaces for real BGP: {@code n} node namespaces, each with {@code eth0} =
 * {@code 10.99.0.<i>/24} and {@code fd99::<i>/64}, all joined by a bridge that lives in its own namespace (nothing is
 * created in the root namespace). Each node can run one BIRD with its own config, socket and
 * pid file under {@code dir}. {@link #close()} stops every BIRD and deletes every namespace; what a
 * test JVM killed first left (BIRD runs in its node's namespace) the next fixture's sweep ends and
 * deletes ({@code NetNs.newName}).
 */
final class NetnsLab implements AutoCloseable {

    private final String prefix;
    private final Path dir;
    private final int n;
    private final List<String> namespaces = new ArrayList<>();
    private final Process[] birds;

    NetnsLab(Path dir, int n) throws IOException, InterruptedException {
        this(dir, n, "confd");
    }

    /**
     * @param namePrefix the start of every namespace's name; an owned part follows
     *                   ({@code NetNs.newName}: a killed test JVM's namespaces are deleted by the next fixture)
     */
    NetnsLab(Path dir, int n, String namePrefix) throws IOException, InterruptedException {
        this.prefix = NetNs.newName(namePrefix);
        this.dir = dir;
        this.n = n;
        this.birds = new Process[n + 1];
        String br = prefix + "-br";
        try {
            add(br);
            ip("-n", br, "link", "add", "br0", "type", "bridge");
            ip("-n", br, "link", "set", "br0", "up");
            for (int i = 1; i <= n; i++) {
                String ns = ns(i);
                add(ns);
                ip("-n", br, "link", "add", "v" + i, "type", "veth", "peer", "name", "eth0", "netns", ns);
                ip("-n", br, "link", "set", "v" + i, "master", "br0", "up");
                ip("-n", ns, "link", "set", "lo", "up");
                ip("-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0");
                ip("-n", ns, "addr", "add", address6(i) + "/64", "dev", "eth0", "nodad");
                ip("-n", ns, "link", "set", "eth0", "up");
                Files.createDirectories(nodeDir(i));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private void add(String ns) throws IOException, InterruptedException {
        ip("netns", "add", ns);
        namespaces.add(ns);
    }

    String ns(int i) {
        return prefix + "-n" + i;
    }

    static String address(int i) {
        return "10.99.0." + i;
    }

    static String address6(int i) {
        return "fd99::" + i;
    }

    Path nodeDir(int i) {
        return dir.resolve("node-" + i);
    }

    Path config(int i) {
        return nodeDir(i).resolve("bird.cfg");
    }

    Path socket(int i) {
        return nodeDir(i).resolve("bird.ctl");
    }

    BirdControl control(int i) {
        return new BirdControl(socket(i), Duration.ofSeconds(10));
    }

    /** Starts BIRD in node {@code i}'s namespace on its config file; returns once its socket answers. */
    void startBird(int i) throws IOException, InterruptedException {
        birds[i] = new ProcessBuilder("ip", "netns", "exec", ns(i), "bird", "-f", "-c", config(i).toString(),
                "-s", socket(i).toString(), "-P", nodeDir(i).resolve("bird.pid").toString())
                .redirectErrorStream(true).redirectOutput(nodeDir(i).resolve("bird.log").toFile()).start();
        Process bird = birds[i];
        try {
            // An IOException from the control socket is "not up yet"; BIRD's exit ends the wait.
            Await.until("BIRD in " + ns(i) + " answering on " + socket(i), Duration.ofSeconds(30), () -> {
                if (!bird.isAlive()) {
                    throw new IllegalStateException("BIRD in " + ns(i) + " exited: " + log(i));
                }
                control(i).command("show status");
                return true;
            });
        } catch (IllegalStateException exited) {
            throw new IOException(exited.getMessage());
        } catch (IOException | InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    String log(int i) throws IOException {
        Path l = nodeDir(i).resolve("bird.log");
        return Files.exists(l) ? Files.readString(l) : "";
    }

    /** {@return node i's kernel routes installed by BIRD} */
    String birdRoutes(int i) throws IOException, InterruptedException {
        return ip("-n", ns(i), "route", "show", "proto", "bird");
    }

    /** {@return node i's IPv6 kernel routes installed by BIRD} */
    String birdRoutes6(int i) throws IOException, InterruptedException {
        return ip("-n", ns(i), "-6", "route", "show", "proto", "bird");
    }

    /** Skips the calling test where it cannot run: BIRD 2 is not installed, or not root (namespaces). */
    static void assumeBirdAndRoot() {
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/bird")), "needs BIRD 2");
        assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root for network namespaces");
    }

    /** Closes what a BGP test started, in the order given, skipping what it never got to start. */
    static void closeAll(AutoCloseable... started) throws Exception {
        for (AutoCloseable c : started) {
            if (c != null) {
                c.close();
            }
        }
    }

    static String ip(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add("ip");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
        return out;
    }

    @Override
    public void close() {
        for (Process p : birds) {
            if (p != null) {
                // ip netns exec execs bird, so this is BIRD itself.
                p.destroy();
                try {
                    if (!p.waitFor(10, TimeUnit.SECONDS)) {
                        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        for (String ns : namespaces) {
            try {
                ip("netns", "del", ns);
            } catch (IOException | InterruptedException e) {
                System.err.println("could not delete namespace " + ns + ": " + e.getMessage());
            }
        }
        namespaces.clear();
    }
}
