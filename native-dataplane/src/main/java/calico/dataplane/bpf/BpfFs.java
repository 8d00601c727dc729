package calico.dataplane.bpf;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The BPF filesystem that pinned maps live on: {@link #ensureMounted} mounts one where there is
 * none (as Calico's felix does at {@code /sys/fs/bpf}); tests mount a private one on a directory
 * of their own and {@link #unmount} it, so their pins never meet the machine's.
 */
public final class BpfFs {

    /** statfs(2) f_type of a bpffs. */
    static final long BPF_FS_MAGIC = 0xcafe4a11L;

    /** The libc calls of this package. */
    interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int close(int fd);

        int statfs(String path, byte[] buf);

        int mount(String source, String target, String type, long flags, String data);

        int umount2(String target, int flags);
    }

    private BpfFs() {
    }

    /** {@return whether {@code dir} is on a bpffs} (false when it does not exist) */
    public static boolean isBpfFs(Path dir) {
        byte[] buf = new byte[120];
        if (LibC.INSTANCE.statfs(dir.toString(), buf) != 0) {
            return false;
        }
        return (ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN).getLong() & 0xffffffffL) == BPF_FS_MAGIC;
    }

    /** Creates {@code mountPoint} if needed and mounts a bpffs there unless one is there already. */
    public static void ensureMounted(Path mountPoint) {
        if (isBpfFs(mountPoint)) {
            return;
        }
        try {
            Files.createDirectories(mountPoint);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + mountPoint + " for the BPF filesystem", e);
        }
        if (LibC.INSTANCE.mount("bpf", mountPoint.toString(), "bpf", 0, "mode=0700") != 0) {
            throw new BpfException("mounting a BPF filesystem on " + mountPoint, Native.getLastError());
        }
    }

    /** Unmounts the bpffs at {@code mountPoint} (lazily: pins in use go when their last user does). */
    public static void unmount(Path mountPoint) {
        if (LibC.INSTANCE.umount2(mountPoint.toString(), 2 /* MNT_DETACH */) != 0) {
            throw new BpfException("unmounting " + mountPoint, Native.getLastError());
        }
    }

    /** Removes the pinned objects in {@code pinDir} (a pin is a file; the map goes when nothing else holds it). */
    public static void removePins(Path pinDir) {
        if (!Files.isDirectory(pinDir)) {
            return;
        }
        try (Stream<Path> pins = Files.list(pinDir)) {
            for (Path p : pins.toList()) {
                if (Files.isDirectory(p)) {
                    removePins(p); // tcx links: unpinned, they detach
                } else {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(pinDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the pins in " + pinDir, e);
        }
    }
}
