package calico.libcalico.testing;

import static org.assertj.core.api.Assertions.assertThat;

import calico.controlplane.Tethered;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A plain main (felix's, confd's) run as its own process, as {@code java -jar} runs it, for the wiring tests. */
public final class MainProcess {

    private MainProcess() {
    }

    /**
     * {@return {@code main} started on this test's class path} with {@code jvmOptions} and only {@code env} as its
     * environment, its stdout written to {@code log}
     */
    public static Process start(Class<?> main, List<String> jvmOptions, Path log, Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(log.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        return Tethered.start(pb); // gone with this JVM, even after a SIGKILL
    }

    /**
     * Sends {@code p} SIGTERM and checks that it stops through its shutdown hook: exit status 143 (128 + SIGTERM),
     * {@code logged} in its log, {@code port} free again.
     */
    public static void stopsOnSigterm(Process p, Path log, int port, String... logged) throws Exception {
        p.destroy();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("stopped on SIGTERM").isTrue();
        assertThat(p.exitValue()).as("128 + SIGTERM: the JVM's exit after its shutdown hooks").isEqualTo(143);
        assertThat(Files.readString(log)).as("stopped by the hook").contains(logged);
        try (ServerSocket again = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            assertThat(again.getLocalPort()).as("the port freed").isEqualTo(port);
        }
    }
}
