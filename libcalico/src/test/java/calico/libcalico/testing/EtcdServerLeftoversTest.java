package calico.libcalico.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A test JVM killed with its etcd running (SIGKILL: no shutdown hook, no close) leaves nothing
 * that lasts: etcd dies with it, and the next etcd's start removes its directory from tmpfs.
 */
class EtcdServerLeftoversTest {

    @Test
    void aKilledJvmsEtcdDiesWithItAndTheNextStartRemovesItsDirectory() throws Exception {
        Process owner = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), EtcdServerOwner.class.getName()))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line;
        try {
            line = new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8)).readLine();
        } finally {
            owner.destroyForcibly();
        }
        assertThat(line).as("the owner printed its etcd's pid and directory").isNotNull().matches("\\d+ /.+");
        long etcd = Long.parseLong(line.substring(0, line.indexOf(' ')));
        Path left = Path.of(line.substring(line.indexOf(' ') + 1));
        assertThat(owner.waitFor(30, TimeUnit.SECONDS)).as("the owner killed").isTrue();

        Await.until("etcd (pid " + etcd + ") gone with its killed JVM", Duration.ofSeconds(30), () -> !running(etcd));
        assertThat(left).as("left behind until the next start").isDirectory();

        try (EtcdServer next = EtcdServer.startOnTmpfs()) {
            assertThat(left).as("removed by the next start").doesNotExist();
            assertThat(next.directory()).isDirectory();
        }
    }

    /** Running: present and not a zombie (an orphan's zombie waits for whoever reaps it here). */
    private static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (java.io.IOException gone) {
            return false;
        }
    }
}
