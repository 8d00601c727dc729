package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child started through {@link Tethered} outlives the thread that asked for it and dies with
 * its JVM when that JVM is killed (no shutdown hook runs): a real JVM, a real SIGKILL.
 */
class TetheredTest {

    @Test
    void aTetheredChildOutlivesItsCallersThreadAndDiesWithItsKilledJvm(@TempDir Path dir) throws Exception {
        // The child writes to a FIFO we read: the read ends when the child has exited (its descriptors closed),
        // an event we can wait for where its pid, a zombie nothing here reaps, would have to be polled.
        Path fifo = dir.resolve("child-out");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor()).isZero();
        CompletableFuture<InputStream> childOut = CompletableFuture.supplyAsync(() -> {
            try {
                return Files.newInputStream(fifo); // opens once the child's side is open
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        Process owner = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), TetheredOwner.class.getName(), fifo.toString()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        long child = -1;
        try {
            String line = new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertThat(line).as("the owner printed its child's pid").isNotNull().matches("\\d+");
            child = Long.parseLong(line);
            assertThat(running(child)).as("the child outlives the thread that asked for it").isTrue();

            owner.destroyForcibly();
            assertThat(owner.waitFor(30, TimeUnit.SECONDS)).as("the owner JVM killed").isTrue();
            InputStream fromChild = childOut.get(30, TimeUnit.SECONDS);
            CompletableFuture<Integer> end = CompletableFuture.supplyAsync(() -> {
                try {
                    return fromChild.read();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            assertThat(end.get(30, TimeUnit.SECONDS)).as("the child died with its killed JVM").isEqualTo(-1);
        } finally {
            owner.destroyForcibly();
            if (child > 0) {
                ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    /** Running: present and not a zombie (an orphan's zombie waits for whoever reaps it here). */
    private static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException gone) {
            return false;
        }
    }
}
