package calico.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The xtables lock against another process holding {@code flock} on a temporary lock file. */
class XtablesLockTest {

    @TempDir
    Path dir;

    @Test
    void waitsThenFailsNamingTheLockFileAndSucceedsOnceReleased() throws Exception {
        Path file = dir.resolve("xtables.lock");
        XtablesLockSettings settings = new XtablesLockSettings(file, Duration.ofMillis(400), Duration.ofMillis(10));
        // -o: the lock stays with flock itself, not its sleep child, so killing flock releases it
        Process holder = new ProcessBuilder("flock", "-o", file.toString(), "sleep", "30").start();
        try {
            awaitHeld(file);
            long start = System.nanoTime();
            assertThatThrownBy(() -> new XtablesLock(settings).acquire())
                    .isInstanceOfSatisfying(XtablesLockBusyException.class, e -> {
                        assertThat(e.lockFile()).isEqualTo(file);
                        assertThat(e.retryable()).isTrue();
                        assertThat(e.getMessage()).contains(file.toString()).contains("held by another process");
                    });
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
        } finally {
            holder.descendants().forEach(ProcessHandle::destroy);
            holder.destroy();
            holder.waitFor(5, TimeUnit.SECONDS);
        }
        try (XtablesLock.Held held = new XtablesLock(settings).acquire()) {
            // while we hold it, another process cannot take it
            assertThat(new ProcessBuilder("flock", "-n", file.toString(), "true").start().waitFor()).isEqualTo(1);
        }
        assertThat(new ProcessBuilder("flock", "-n", file.toString(), "true").start().waitFor()).isZero();
    }

    @Test
    void aJavaFileChannelLockIsInvisibleToFlockWhichIsWhyWeUseFlock() throws IOException {
        Path file = dir.resolve("fcntl.lock");
        XtablesLockSettings settings = new XtablesLockSettings(file, Duration.ZERO, Duration.ofMillis(10));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock fcntlLock = ch.lock()) {
            // POSIX record locks and flock do not conflict on Linux: iptables would ignore a FileChannel lock
            try (XtablesLock.Held held = new XtablesLock(settings).acquire()) {
                assertThat(fcntlLock.isValid()).isTrue();
            }
        }
    }

    private static void awaitHeld(Path file) throws Exception {
        for (int i = 0; i < 200; i++) {
            if (new ProcessBuilder("flock", "-n", file.toString(), "true").start().waitFor() != 0) {
                return;
            }
            Thread.sleep(10);
        }
        throw new AssertionError("flock holder never took " + file);
    }
}
