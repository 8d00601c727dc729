package calico.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code down} on real namespaces and processes: everything goes, whatever node count it was made with.
 * {@code up}'s wait on real processes: counted in each process's CPU time ({@link ReadinessWait}), not by the clock.
 */
class NodesTest {

    private final String prefix = TestNamespaces.uniquePrefix();

    @TempDir
    Path run;

    @AfterEach
    void deleteEverythingOfThisTest() {
        TestNamespaces.deleteAll(prefix);
    }

    private Settings settings(int nodes) {
        return Main.parse(new ArrayDeque<>(List.of("--run-dir", run.toString(), "--prefix", prefix, "--nodes", Integer.toString(nodes))));
    }

    @Test
    void downStopsEveryNodesProcessesAndDeletesEveryRecordedNamespaceEvenOfMoreNodesThanItWasToldOf() throws Exception {
        Settings three = settings(3);
        three.topology().create();
        // Stand-ins for each node's services: processes with the services' names, in the nodes' namespaces.
        List<Long> pids = new ArrayList<>();
        for (Node n : three.topology().nodes()) {
            for (String service : List.of("felix", "cni", "confd", "bird")) {
                DetachedProcess p = new DetachedProcess(service + "-" + n.name(), n.namespace(), List.of("sleep", "300"), Map.of(), run);
                p.start();
                pids.add(p.pid().orElseThrow());
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        // down with --nodes 1 still finds node-2 and node-3 from the records.
        new Nodes(settings(1), Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8)).down();

        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(h -> h.isAlive() && !DetachedProcess.zombie(pid)).orElse(false))
                    .as("pid %d stopped", pid).isFalse();
        }
        try (var files = Files.list(run)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".pid"))).isEmpty();
        }
        assertThat(Command.run("ip", "netns", "list")).doesNotContain(prefix);
        assertThat(run.resolve("netns").toFile().list()).isEmpty();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("stopping bird-node-3 (pid ")
                .contains("deleted network namespaces " + prefix + "node-1, " + prefix + "node-2, " + prefix + "node-3, " + prefix + "underlay");
    }

    private NodeServices.Service shell(String name, String script, java.util.function.BooleanSupplier mayStart,
                                       java.util.function.BooleanSupplier ready) {
        return new NodeServices.Service(new DetachedProcess(name, null, List.of("sh", "-c", script), Map.of(), run), mayStart, ready);
    }

    @Test
    void upWaitsForAProcessSlowByTheClockButIdleAndStartsTheNextOnceItMay() {
        Path config = run.resolve("bird.cfg");
        Path birdReady = run.resolve("bird-ready");
        // confd: idle for 1.5 s (past the 300 ms CPU budget by the clock), then writes BIRD's file and is ready.
        NodeServices.Service confd = shell("confd-node-1", "sleep 1.5; touch '" + config + "'; sleep 300", () -> true,
                () -> Files.exists(config));
        NodeServices.Service bird = shell("bird-node-1", "touch '" + birdReady + "'; sleep 300", () -> Files.exists(config),
                () -> Files.exists(birdReady));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            new Nodes(settings(1), Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8))
                    .startAndAwait(List.of(confd, bird), new ReadinessWait.Budget(Duration.ofMillis(300), Duration.ofSeconds(120)));
        } finally {
            confd.process().stop(Duration.ofSeconds(5));
            bird.process().stop(Duration.ofSeconds(5));
        }
        String said = out.toString(StandardCharsets.UTF_8);
        assertThat(said).contains("confd-node-1 ready after", "bird-node-1 ready after");
        assertThat(said.indexOf("starting bird-node-1")).as("BIRD started once confd's file was there")
                .isGreaterThan(said.indexOf("starting confd-node-1"));
    }

    @Test
    void upGivesUpOnAProcessThatSpendsItsCpuBudgetWithoutBecomingReady() {
        NodeServices.Service felix = shell("felix-node-1", "while :; do :; done", () -> true, () -> false);
        try {
            assertThatThrownBy(() -> new Nodes(settings(1), Map.of(), new PrintStream(new ByteArrayOutputStream(), true,
                    StandardCharsets.UTF_8)).startAndAwait(List.of(felix), new ReadinessWait.Budget(Duration.ofMillis(500),
                    Duration.ofSeconds(600))))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("felix-node-1 not ready after").hasMessageContaining("of its CPU (budget: 0 s of CPU");
        } finally {
            felix.process().stop(Duration.ofSeconds(5));
        }
    }

    @Test
    void upSaysAtOnceWhenAProcessExits() {
        NodeServices.Service cni = shell("cni-node-1", "echo no socket for you; exit 3", () -> true, () -> false);
        assertThatThrownBy(() -> new Nodes(settings(1), Map.of(), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8)).startAndAwait(List.of(cni), ReadinessWait.Budget.DEFAULT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cni-node-1 exited during start-up");
    }

    @Test
    void statusSaysWhatIsStoppedAndMissing() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        boolean ok = new Nodes(settings(1), Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8)).status();

        assertThat(ok).isFalse();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("felix-node-1     stopped")
                .contains("node-1           network namespace " + prefix + "node-1 missing");
    }
}
