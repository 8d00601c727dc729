package calico.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DetachedProcessTest {

    private final String ns = TestNamespaces.uniquePrefix() + "proc";

    @TempDir
    Path run;

    @AfterEach
    void deleteNamespace() {
        Command.exec(List.of("ip", "netns", "delete", ns));
    }

    private static long pidIn(Path pidFile) throws Exception {
        return Long.parseLong(Files.readString(pidFile).strip().split(" ", 2)[0]);
    }

    @Test
    void runsInItsNamespaceOutlivesNothingItDoesNotOwnAndStops() throws Exception {
        Command.run("ip", "netns", "add", ns);
        DetachedProcess p = new DetachedProcess("sleeper", ns, List.of("sleep", "300"), Map.of("X", "1"), run);

        assertThat(p.start()).isTrue();
        long pid = pidIn(p.pidFile());
        assertThat(Files.readString(p.pidFile())).isEqualTo(pid + " sleep 300\n");
        // start returns once exec'd: the pid is sleep's own, inside the namespace.
        assertThat(p.pid()).contains(pid);
        assertThat(Command.run("ip", "netns", "identify", Long.toString(pid)).strip()).isEqualTo(ns);

        // A second launcher finds it from the pid file and starts nothing.
        DetachedProcess again = new DetachedProcess("sleeper", ns, List.of("sleep", "300"), Map.of(), run);
        assertThat(again.start()).isFalse();
        assertThat(Files.readString(again.pidFile())).startsWith(pid + " ");
        assertThat(Command.run("ip", "netns", "identify", Long.toString(again.pid().orElseThrow())).strip()).isEqualTo(ns);
        assertThat(Command.run("ps", "-o", "sid=", "-p", Long.toString(pid)).strip()).isEqualTo(Long.toString(pid));
        assertThat(again.exited()).isFalse();

        assertThat(again.stop(Duration.ofSeconds(5))).isTrue();
        assertThat(ProcessHandle.of(pid).map(h -> h.isAlive() && !DetachedProcess.zombie(pid)).orElse(false)).isFalse();
        assertThat(Files.exists(p.pidFile())).isFalse();
        assertThat(again.stop(Duration.ofSeconds(5))).isFalse();
    }

    @Test
    void aPidFileNamingAnotherProgramIsNeverSignalled() throws Exception {
        long self = ProcessHandle.current().pid();
        DetachedProcess p = new DetachedProcess("reused", null, List.of("sleep", "300"), Map.of(), run);
        Files.writeString(p.pidFile(), self + " sleep 300\n");

        assertThat(p.pid()).isEmpty();
        assertThat(p.stop(Duration.ofSeconds(1))).isFalse();
        assertThat(ProcessHandle.current().isAlive()).isTrue();
        assertThat(Files.exists(p.pidFile())).isFalse();
    }

    @Test
    void aProgramThatEndsIsSeenAsExitedWithItsLog() throws Exception {
        DetachedProcess p = new DetachedProcess("short", null, List.of("sh", "-c", "echo bye from $X; exit 3"),
                Map.of("X", "short"), run);
        p.start();
        ProcessHandle.of(pidIn(p.pidFile())).ifPresent(h -> h.onExit().orTimeout(30, TimeUnit.SECONDS).join());

        assertThat(p.exited()).isTrue();
        assertThat(p.pid()).isEmpty();
        assertThat(p.logTail(5)).contains("bye from short");
    }
}
