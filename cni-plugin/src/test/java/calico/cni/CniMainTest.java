package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import calico.libcalico.health.TrainingRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The plugin as an executable (one JVM per call): stdout and exit status as the runtime sees them. */
class CniMainTest {
    private final ObjectMapper json = new ObjectMapper();

    private record Run(int exit, JsonNode out) {
    }

    private Run run(Map<String, String> env, String stdin) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "calico.cni.Main");
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.waitFor(), json.readTree(out));
    }

    @Test
    void versionAndErrorsFromTheExecutable() throws Exception {
        Run v = run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"1.0.0\"}");
        assertThat(v.exit()).isZero();
        assertThat(v.out().path("supportedVersions").toString()).contains("0.4.0", "1.0.0");

        Run e = run(Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c1", "CNI_IFNAME", "eth0"),
                "{\"cniVersion\":\"0.4.0\",\"name\":\"n\",\"type\":\"calico\",\"etcd_endpoints\":\"http://127.0.0.1:1\","
                        + "\"ipam\":{\"type\":\"calico-ipam\"},\"bogus\":1}");
        assertThat(e.exit()).isEqualTo(1);
        assertThat(e.out().path("cniVersion").asText()).isEqualTo("0.4.0");
        assertThat(e.out().path("code").asInt()).isEqualTo(2);
        assertThat(e.out().path("msg").asText()).startsWith("bogus:");
    }

    /**
     * An AppCDS training run of the daemon ({@code -Dcalico.exit=onReady}) ends by itself once the daemon serves (its
     * socket bound), and stops as on SIGTERM (the socket removed); without the property it serves until stopped.
     */
    @Test
    void theDaemonsTrainingRunEndsOnceItServes(@TempDir Path dir) throws Exception {
        Path socket = dir.resolve("cni.sock");
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-D" + TrainingRun.PROPERTY + "=" + TrainingRun.ON_READY,
                "-cp", System.getProperty("java.class.path"), "calico.cni.Main", "daemon", socket.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("out.log").toFile());
        pb.environment().clear();
        pb.environment().putAll(Map.of("DATASTORE_TYPE", "memory", "PATH", System.getenv("PATH")));
        Process p = pb.start();
        try {
            assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("ended: %s", Files.readString(dir.resolve("out.log"))).isTrue();
            assertThat(p.exitValue()).isZero();
            assertThat(Files.readString(dir.resolve("out.log"))).contains("CNI daemon ready: ending the training run");
            assertThat(socket).doesNotExist();
        } finally {
            p.destroyForcibly().waitFor();
        }
    }
}
