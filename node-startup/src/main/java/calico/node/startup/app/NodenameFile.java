package calico.node.startup.app;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The file where start-up leaves the node's name for the CNI plugin ({@code nodename_file}), as
 * calico-node does once the Node is saved. Written only when it does not already hold the name, so a
 * start-up without write access to a file someone else wrote (the chart's install-cni runs as root,
 * start-up does not) succeeds; replaced whole (a temporary file renamed), so a reader never sees half.
 */
final class NodenameFile {

    /** Calico's path. */
    static final Path DEFAULT = Path.of("/var/lib/calico/nodename");

    private NodenameFile() {
    }

    /** {@return whether {@code file} was written}: false when it already held {@code nodeName}. */
    static boolean write(Path file, String nodeName) {
        try {
            if (Files.isRegularFile(file) && Files.readString(file, StandardCharsets.UTF_8).equals(nodeName)) {
                return false;
            }
            Path dir = file.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, ".nodename", ".tmp");
            try {
                Files.writeString(tmp, nodeName, StandardCharsets.UTF_8);
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(tmp);
            }
            return true;
        } catch (IOException | RuntimeException e) {
            // No cause: start-up prints its failure's root message, and this one names the variable.
            throw new IllegalStateException("node.nodename-file (CALICO_NODENAME_FILE): cannot write " + file + ": " + e);
        }
    }
}
