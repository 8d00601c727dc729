package calico.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The nodes' network: an underlay namespace ({@code <prefix>underlay}) holding a bridge with the
 * gateway address, and one namespace per node ({@code <prefix>node-<i>}) whose {@code eth0} is
 * plugged into the bridge, with the node's address, forwarding on and a default route to the
 * gateway. Nothing is created in the caller's own namespace.
 *
 * <p>Every namespace this class creates is recorded as an empty file named after it in
 * {@code recordDir} (the convention of {@code ./calico}: {@code .calico-run/netns/}), before it
 * is created; a namespace is reused only when recorded, and {@link #delete()} deletes only
 * recorded namespaces with this prefix. {@link #create()} is idempotent: each step looks first,
 * so a second call changes nothing and a half-made topology is completed.
 */
final class Topology {

    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]*");
    static final String BRIDGE = "br0";

    private final String prefix;
    private final int nodes;
    private final Underlay underlay;
    private final Path recordDir;

    /** The underlay subnet: {@code <base>.<i>} for node i, {@code <base>.254} the gateway on the bridge. */
    record Underlay(String base, int prefixLength) {
        Underlay {
            if (!base.matches("\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}")) {
                throw new IllegalArgumentException("--underlay: '" + base + "' is not the first three octets of a /24, e.g. 172.31.255");
            }
        }

        static final Underlay DEFAULT = new Underlay("172.31.255", 24);

        String gateway() {
            return base + ".254";
        }
    }

    Topology(String prefix, int nodes, Underlay underlay, Path recordDir) {
        if (!NAME.matcher(prefix).matches()) {
            throw new IllegalArgumentException("--prefix: '" + prefix + "' must match " + NAME.pattern());
        }
        if (nodes < 1 || nodes > 200) {
            throw new IllegalArgumentException("--nodes: must be between 1 and 200, got " + nodes);
        }
        this.prefix = prefix;
        this.nodes = nodes;
        this.underlay = underlay;
        this.recordDir = recordDir;
    }

    String underlayNamespace() {
        return prefix + "underlay";
    }

    List<Node> nodes() {
        List<Node> list = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            list.add(new Node(i, "node-" + i, prefix + "node-" + i, underlay.base() + "." + i, underlay.prefixLength()));
        }
        return list;
    }

    /** Creates what is missing; returns the namespaces it created (empty: everything was there). */
    List<String> create() {
        List<String> made = new ArrayList<>();
        String u = underlayNamespace();
        if (namespace(u)) {
            made.add(u);
        }
        if (!link(u, BRIDGE)) {
            Command.run("ip", "-n", u, "link", "add", BRIDGE, "type", "bridge");
        }
        Command.run("ip", "-n", u, "addr", "replace", underlay.gateway() + "/" + underlay.prefixLength(), "dev", BRIDGE);
        Command.run("ip", "-n", u, "link", "set", BRIDGE, "up");
        for (Node n : nodes()) {
            if (namespace(n.namespace())) {
                made.add(n.namespace());
            }
            String port = "n" + n.index();
            if (!link(n.namespace(), Node.UPLINK)) {
                // A half-made pair (its underlay end left alone) goes first.
                if (link(u, port)) {
                    Command.run("ip", "-n", u, "link", "del", port);
                }
                // A fixed MAC per node: a re-made uplink keeps it, so the other nodes' ARP entries stay right.
                Command.run("ip", "-n", u, "link", "add", port, "type", "veth", "peer", "name", Node.UPLINK,
                        "address", String.format("02:ca:1c:0:%x:%x", n.index() >> 8, n.index() & 0xff), "netns", n.namespace());
                // Another node may hold a failed ARP entry for this address from while it was gone: resolve afresh.
                for (Node other : nodes()) {
                    if (other.index() != n.index() && exists(other.namespace())) {
                        Command.exec(List.of("ip", "-n", other.namespace(), "neigh", "flush", "to", n.address()));
                    }
                }
            }
            Command.run("ip", "-n", u, "link", "set", port, "master", BRIDGE, "up");
            Command.run("ip", "netns", "exec", n.namespace(), "sysctl", "-qw", "net.ipv4.ip_forward=1");
            Command.run("ip", "-n", n.namespace(), "addr", "replace", n.cidr(), "dev", Node.UPLINK);
            Command.run("ip", "-n", n.namespace(), "link", "set", Node.UPLINK, "up");
            // Pods ARP for 169.254.1.1; the node's proxy ARP answers only for an address it routes out
            // of another interface, so the node needs a default route.
            Command.run("ip", "-n", n.namespace(), "route", "replace", "default", "via", underlay.gateway(),
                    "dev", Node.UPLINK);
        }
        return made;
    }

    /**
     * Deletes every recorded namespace of this prefix (nodes first, then the underlay), whatever
     * the node count it was made with; returns their names.
     */
    List<String> delete() {
        List<String> deleted = new ArrayList<>();
        List<String> recorded = recorded();
        recorded.sort((a, b) -> Boolean.compare(a.equals(underlayNamespace()), b.equals(underlayNamespace())));
        for (String ns : recorded) {
            if (exists(ns)) {
                Command.run("ip", "netns", "delete", ns);
            }
            try {
                Files.deleteIfExists(recordDir.resolve(ns));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove the record " + recordDir.resolve(ns), e);
            }
            deleted.add(ns);
        }
        return deleted;
    }

    /** {@return the highest node index among the recorded namespaces} (0 when none is recorded). */
    int highestRecordedNode() {
        Pattern node = nodeNamespace();
        return recorded().stream().map(node::matcher).filter(Matcher::matches)
                .mapToInt(m -> Integer.parseInt(m.group(1))).max().orElse(0);
    }

    /** {@return the recorded namespaces of this topology} (its node namespaces and its underlay). */
    List<String> recorded() {
        if (!Files.isDirectory(recordDir)) {
            return new ArrayList<>();
        }
        Pattern node = nodeNamespace();
        try (Stream<Path> files = Files.list(recordDir)) {
            return new ArrayList<>(files.map(p -> p.getFileName().toString())
                    .filter(n -> n.equals(underlayNamespace()) || node.matcher(n).matches())
                    .sorted().toList());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + recordDir, e);
        }
    }

    /** {@code <prefix>node-<i>}, the index in group 1. */
    private Pattern nodeNamespace() {
        return Pattern.compile(Pattern.quote(prefix + "node-") + "(\\d+)");
    }

    static boolean exists(String ns) {
        return Files.exists(Path.of("/run/netns", ns));
    }

    /** Creates {@code ns} unless it exists and is ours; true when it created it. */
    private boolean namespace(String ns) {
        Path record = recordDir.resolve(ns);
        if (exists(ns)) {
            if (Files.exists(record)) {
                return false;
            }
            throw new IllegalStateException("network namespace " + ns + " exists but was not created here (no "
                    + record + "); delete it or choose another prefix");
        }
        try {
            Files.createDirectories(recordDir);
            Files.writeString(record, "");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record " + record, e);
        }
        Command.run("ip", "netns", "add", ns);
        Command.run("ip", "-n", ns, "link", "set", "lo", "up");
        return true;
    }

    private static boolean link(String ns, String name) {
        return Command.exec(List.of("ip", "-n", ns, "link", "show", name)).ok();
    }
}
