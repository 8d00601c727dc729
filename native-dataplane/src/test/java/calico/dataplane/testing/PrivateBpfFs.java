package calico.dataplane.testing;

import calico.controlplane.Owned;
import calico.dataplane.bpf.BpfFs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A bpffs a test mounts for its pins, never the machine's {@code /sys/fs/bpf}: a directory of the temp dir named
 * {@code calico-test-bpffs-p<pid>-<8 hex>} ({@link Owned}), unmounted and deleted on {@link #close()} (and by a
 * shutdown hook). Each new one first removes those of test JVMs that are gone (killed before their hooks ran).
 */
public final class PrivateBpfFs implements AutoCloseable {

    static final String PREFIX = "calico-test-bpffs";

    private final Path path;
    private final Thread cleanup;
    private boolean closed;

    private PrivateBpfFs(Path path) {
        this.path = path;
        this.cleanup = new Thread(() -> remove(path), "bpffs-cleanup-" + path.getFileName());
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /** {@return a new directory with a bpffs mounted on it} */
    public static PrivateBpfFs mount() {
        PrivateBpfFs fs = unmounted();
        BpfFs.ensureMounted(fs.path);
        return fs;
    }

    /** {@return a new empty directory where the code under test mounts its bpffs} (as felix's driver does) */
    public static PrivateBpfFs unmounted() {
        sweepLeftovers();
        Path dir = tempDir().resolve(Owned.name(PREFIX));
        try {
            Files.createDirectory(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        return new PrivateBpfFs(dir);
    }

    public Path path() {
        return path;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        remove(path);
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException ignored) {
            // already shutting down: the hook runs anyway
        }
    }

    /** Unmounts (lazily: pins in use go with their last user) and deletes the directory. */
    private static void remove(Path dir) {
        if (BpfFs.isBpfFs(dir)) {
            BpfFs.unmount(dir);
        }
        try {
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    /** Removes the private bpffs directories (mounted or not) of test JVMs that are gone. */
    static void sweepLeftovers() {
        for (Path dir : Owned.leftovers(tempDir(), PREFIX)) {
            try {
                remove(dir);
                System.err.println("PrivateBpfFs: removed " + dir + ", left by a test JVM that is gone");
            } catch (RuntimeException e) {
                System.err.println("PrivateBpfFs: cannot remove " + dir + ": " + e.getMessage());
            }
        }
    }

    private static Path tempDir() {
        return Path.of(System.getProperty("java.io.tmpdir"));
    }
}
