package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

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
}
