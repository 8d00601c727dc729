package calico.felix.dataplane.mtu;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Objects;

/**
 * The file the CNI plugin reads the pod MTU from (Calico: {@code /var/lib/calico/mtu}, the bare
 * number). Written whole through a temporary file and a rename in the same directory, so a CNI
 * ADD reading it at that moment sees the old number or the new one, never half of one.
 */
public record MtuFile(Path path) {

    public MtuFile {
        Objects.requireNonNull(path, "path");
    }

    /** Writes {@code mtu}, creating the directory. */
    public void write(int mtu) {
        try {
            Path dir = path.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "." + path.getFileName(), ".tmp");
            try {
                Files.writeString(tmp, Integer.toString(mtu), StandardCharsets.US_ASCII);
                try {
                    Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
            Files.setPosixFilePermissions(path, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        } catch (IOException e) {
            throw new UncheckedIOException("MTU file " + path + ": " + e.getMessage(), e);
        }
    }
}
