package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A child started through {@link Tethered} outlives the thread that asked for it and dies with
 * its JVM when that JVM is killed (no shutdown hook runs): a real JVM, a real SIGKILL.
 */
class TetheredTest {

    @Test
    void aTetheredChildOutlivesItsCallersThreadAndDiesWithItsKilledJvm() throws Exception {
        Process owner = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), TetheredOwner.class.getName()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        long child = -1;
        try {
            String line = new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertThat(line).as("the owner printed its child's pid").isNotNull().matches("\\d+");
            child = Long.parseLong(line);
            assertThat(running(child)).as("the child outlives the thread that asked for it").isTrue();

            owner.destroyForcibly();
            assertThat(owner.waitFor(30, TimeUnit.SECONDS)).as("the owner JVM killed").isTrue();
            assertThat(awaitGone(child, Duration.ofSeconds(30))).as("the child died with its killed JVM").isTrue();
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

    private static boolean awaitGone(long pid, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (running(pid)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }
}
