package calico.dataplane.netlink;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The namespaces under /run/netns whose names start with a test's prefix. */
final class NetNsLeftovers {
    private NetNsLeftovers() {
    }

    static List<String> named(String prefix) {
        Path dir = Path.of("/run/netns");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix + "-")).toList();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
