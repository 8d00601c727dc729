package calico.dataplane.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.bpf.BpfFs;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A test JVM killed with SIGKILL (a surefire fork killed on timeout) runs no shutdown hook: its namespaces,
 * bpffs mounts and the processes it started stay. The next fixture that starts removes them (the processes in a
 * namespace it deletes, and theirs), and nothing of a test JVM that still runs.
 */
class LeftoversSweepTest {

    /** A child JVM that made a namespace and a bpffs (their names read from its output). */
    private record Owner(Process process, String netns, Path bpffs, String suffixed, List<ProcessHandle> processes) {

        static Owner start() throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            Process p = new ProcessBuilder(java, "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", classpath,
                    LeftoverOwner.class.getName()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String netns = field(out.readLine(), "netns ", p);
            Path bpffs = Path.of(field(out.readLine(), "bpffs ", p));
            String suffixed = field(out.readLine(), "suffixed ", p);
            // The daemon it started in its namespace and the daemon's child, in a namespace of its own.
            List<ProcessHandle> processes = Stream.of(field(out.readLine(), "processes ", p).split(" "))
                    .map(pid -> ProcessHandle.of(Long.parseLong(pid)).orElseThrow()).toList();
            return new Owner(p, netns, bpffs, suffixed, processes);
        }

        private static String field(String line, String key, Process p) {
            if (line == null || !line.startsWith(key)) {
                p.destroyForcibly();
                throw new IllegalStateException("the owner JVM said " + line + ", expected \"" + key + "…\"");
            }
            return line.substring(key.length());
        }

        boolean netnsExists() {
            return Files.exists(Path.of("/run/netns", netns));
        }

        boolean suffixedExists() {
            return Files.exists(Path.of("/run/netns", suffixed));
        }

        /** Ends it as a normal exit would (stdin closed: it closes both), or kills it if it does not. */
        void stop() throws Exception {
            process.getOutputStream().close();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }

    @Test
    void aStartingFixtureRemovesWhatAKilledJvmLeftAndNothingOfALiveOne() throws Exception {
        assumeTrue(NetNs.available(), "needs root for namespaces and mounts");
        Owner killed = Owner.start();
        Owner live = Owner.start();
        try {
            List<ProcessHandle> killedsProcesses = killed.processes();
            List<ProcessHandle> livesProcesses = live.processes();
            killed.process().destroyForcibly().waitFor(); // SIGKILL: no shutdown hook runs
            assertThat(killedsProcesses).as("the killed JVM's daemon and its child run on").allMatch(ProcessHandle::isAlive);
            assertThat(killed.netnsExists()).as("the killed JVM's namespace is left behind").isTrue();
            assertThat(killed.suffixedExists()).isTrue();
            assertThat(BpfFs.isBpfFs(killed.bpffs())).as("the killed JVM's bpffs is left mounted").isTrue();

            try (NetNs ns = NetNs.create("calico-sweep")) {
                assertThat(killed.netnsExists()).as("a new namespace swept the dead JVM's").isFalse();
                assertThat(killedsProcesses).as("and ended the processes in it, and theirs")
                        .noneMatch(ProcessHandle::isAlive);
                assertThat(livesProcesses).as("a live JVM's processes run on").hasSize(2).allMatch(ProcessHandle::isAlive);
                assertThat(killed.suffixedExists()).as("and its namespace named <owned name>-<suffix>").isFalse();
                assertThat(live.netnsExists()).as("a live JVM's namespace is untouched").isTrue();
                assertThat(live.suffixedExists()).as("a live JVM's suffixed namespace is untouched").isTrue();
                assertThat(BpfFs.isBpfFs(killed.bpffs())).as("namespaces sweep only namespaces").isTrue();
            }
            try (PrivateBpfFs fs = PrivateBpfFs.mount()) {
                assertThat(BpfFs.isBpfFs(killed.bpffs())).as("a new bpffs unmounted the dead JVM's").isFalse();
                assertThat(killed.bpffs()).as("and deleted its directory").doesNotExist();
                assertThat(BpfFs.isBpfFs(live.bpffs())).as("a live JVM's bpffs stays mounted").isTrue();
                assertThat(BpfFs.isBpfFs(fs.path())).isTrue();
            }
            assertThat(live.netnsExists()).isTrue();
        } finally {
            live.stop();
            if (killed.process().isAlive()) {
                killed.process().destroyForcibly().waitFor();
            }
            killed.processes().forEach(ProcessHandle::destroyForcibly);
            // Whatever is still there (a failure above) goes with the next fixture's sweep.
            NetNs.sweepLeftovers();
            PrivateBpfFs.sweepLeftovers();
        }
        assertThat(live.netnsExists()).as("the live JVM removed its own when it ended").isFalse();
        assertThat(live.suffixedExists()).isFalse();
        assertThat(live.bpffs()).doesNotExist();
    }
}
