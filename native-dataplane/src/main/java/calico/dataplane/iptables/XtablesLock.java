package calico.dataplane.iptables;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.UncheckedIOException;
import java.io.IOException;
import java.time.Duration;

/**
 * Takes the xtables lock the way iptables does: {@code flock(LOCK_EX)} on the lock file. This
 * must be {@code flock(2)} through JNA, not {@link java.nio.channels.FileChannel#lock}: Java's
 * file locks are POSIX record locks ({@code fcntl}), which on Linux do not conflict with
 * {@code flock}, so iptables would not see them at all.
 *
 * <p>Do not hold this lock while running an {@code iptables-legacy-restore} of version 1.8 or
 * later: that binary takes the same lock itself and would wait for us, i.e. deadlock until its
 * timeout. It is for serialising with other xtables users around work that does not lock.
 */
public final class XtablesLock {

    private static final int O_RDONLY = 0;
    private static final int O_CREAT = 0100;
    private static final int O_CLOEXEC = 02000000;
    private static final int LOCK_EX = 2;
    private static final int LOCK_NB = 4;
    private static final int LOCK_UN = 8;
    private static final int EINTR = 4;
    private static final int EWOULDBLOCK = 11;

    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int open(String path, int flags, int mode);

        int flock(int fd, int operation);

        int close(int fd);
    }

    private final XtablesLockSettings settings;

    public XtablesLock(XtablesLockSettings settings) {
        this.settings = settings;
    }

    /** A held lock; closing releases it. */
    public static final class Held implements AutoCloseable {
        private int fd;

        private Held(int fd) {
            this.fd = fd;
        }

        @Override
        public synchronized void close() {
            if (fd >= 0) {
                LibC.INSTANCE.flock(fd, LOCK_UN);
                LibC.INSTANCE.close(fd);
                fd = -1;
            }
        }
    }

    /**
     * Tries at once, then every probe interval until the timeout; a zero timeout tries once.
     *
     * @throws XtablesLockBusyException if the lock is still held when the timeout passes
     * @throws UncheckedIOException if the lock file cannot be opened or locked for another reason
     */
    public Held acquire() {
        String path = settings.lockFile().toString();
        int fd = LibC.INSTANCE.open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            throw new UncheckedIOException(new IOException("cannot open xtables lock file " + path + ": errno " + Native.getLastError()));
        }
        long start = System.nanoTime();
        long deadline = start + settings.timeout().toNanos();
        while (true) {
            if (LibC.INSTANCE.flock(fd, LOCK_EX | LOCK_NB) == 0) {
                return new Held(fd);
            }
            int errno = Native.getLastError();
            if (errno != EWOULDBLOCK && errno != EINTR) {
                LibC.INSTANCE.close(fd);
                throw new UncheckedIOException(new IOException("flock on xtables lock file " + path + " failed: errno " + errno));
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                LibC.INSTANCE.close(fd);
                throw new XtablesLockBusyException(settings.lockFile(), Duration.ofNanos(now - start));
            }
            try {
                Thread.sleep(Math.max(1, Math.min(settings.probeInterval().toMillis(), (deadline - now) / 1_000_000 + 1)));
            } catch (InterruptedException e) {
                LibC.INSTANCE.close(fd);
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for xtables lock " + path, e);
            }
        }
    }
}
