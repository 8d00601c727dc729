package calico.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code down} on real namespaces and processes: everything goes, whatever node count it was made with. */
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

    @Test
    void statusSaysWhatIsStoppedAndMissing() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        boolean ok = new Nodes(settings(1), Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8)).status();

        assertThat(ok).isFalse();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("felix-node-1     stopped")
                .contains("node-1           network namespace " + prefix + "node-1 missing");
    }
}
