package calico.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./calico}'s wait for typha (issue 29): it returns once the process is ready, at once when it exits,
 * and counts the process's own CPU time, so a process that is slow by the clock but not busy (a starved JVM on
 * a loaded machine) is waited for, while one that burns its budget without becoming ready is not.
 */
class ReadinessWaitTest {

    @TempDir
    Path dir;

    private static Process shell(String script) throws IOException {
        return new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
    }

    @Test
    void readyOnceTheProcessSaysSoThoughTheClockPassedTheCpuBudget() throws Exception {
        Path flag = dir.resolve("ready");
        // Idle for 1.5 s, then ready: slow by the clock (past a 300 ms budget), but using no CPU meanwhile.
        Process p = shell("sleep 1.5; touch '" + flag + "'; sleep 60");
        try {
            ReadinessWait.Outcome o = ReadinessWait.await(ReadinessWait.Watched.pid(p.pid()), () -> Files.exists(flag),
                    new ReadinessWait.Budget(Duration.ofMillis(300), Duration.ofSeconds(120)));
            assertThat(o).isInstanceOf(ReadinessWait.Ready.class);
            assertThat(((ReadinessWait.Ready) o).after()).as("the clock ran past the CPU budget").isGreaterThan(Duration.ofMillis(300));
        } finally {
            p.destroyForcibly().waitFor();
        }
    }

    @Test
    void aProcessThatExitsEndsTheWaitAtOnce() throws Exception {
        Process p = shell("sleep 0.3; exit 3");
        ReadinessWait.Outcome o = ReadinessWait.await(ReadinessWait.Watched.pid(p.pid()), () -> false,
                new ReadinessWait.Budget(Duration.ofSeconds(600), Duration.ofSeconds(600)));
        assertThat(o).isInstanceOf(ReadinessWait.Exited.class);
        assertThat(o.describe()).contains("exited before it was ready");
    }

    @Test
    void aBusyProcessNeverReadyRunsOutOfItsCpuBudget() throws Exception {
        Process p = shell("while :; do :; done");
        try {
            ReadinessWait.Outcome o = ReadinessWait.await(ReadinessWait.Watched.pid(p.pid()), () -> false,
                    new ReadinessWait.Budget(Duration.ofMillis(500), Duration.ofSeconds(600)));
            assertThat(o).isInstanceOf(ReadinessWait.OutOfBudget.class);
            ReadinessWait.OutOfBudget out = (ReadinessWait.OutOfBudget) o;
            assertThat(out.cpuUsed()).isGreaterThan(Duration.ofMillis(500));
            assertThat(o.describe()).contains("budget: 0 s of CPU");
        } finally {
            p.destroyForcibly().waitFor();
        }
    }

    @Test
    void anIdleProcessNeverReadyMeetsTheWallCap() throws Exception {
        Process p = shell("sleep 60");
        try {
            ReadinessWait.Outcome o = ReadinessWait.await(ReadinessWait.Watched.pid(p.pid()), () -> false,
                    new ReadinessWait.Budget(Duration.ofSeconds(600), Duration.ofSeconds(1)));
            assertThat(o).isInstanceOf(ReadinessWait.OutOfBudget.class);
            assertThat(((ReadinessWait.OutOfBudget) o).after()).isGreaterThan(Duration.ofSeconds(1));
        } finally {
            p.destroyForcibly().waitFor();
        }
    }

    @Test
    void theCommandNamesABadOption() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = Main.awaitReady(new ArrayDeque<>(List.of("typha", "--pid", "1", "--port", "70000")),
                new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(rc).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("await-ready --port: required, between 1 and 65535");
        assertThatThrownBy(() -> new ReadinessWait.Budget(Duration.ZERO, Duration.ofSeconds(1)))
                .hasMessageContaining("await-ready --cpu: must be a positive");
    }
}
