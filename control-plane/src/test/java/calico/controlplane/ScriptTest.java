package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** scripts/control-plane.sh, the glue around this module: it agrees with Java on where the binaries are. */
class ScriptTest {

    private static final Path SCRIPT = Repository.root().resolve("scripts").resolve("control-plane.sh");

    @TempDir
    Path cache;

    @Test
    void binDirIsWhereJavaLooks() throws Exception {
        Result r = run(Map.of("CALICO_CACHE_DIR", cache.toString()), "bin-dir");
        assertThat(r.exit()).isZero();
        assertThat(r.out().strip()).isEqualTo(Binaries.locate(Map.of("CALICO_CACHE_DIR", cache.toString()), Repository.root())
                .dir().toString());
    }

    @Test
    void buildWithoutGoSaysWhatToInstallAndBuildsNothing() throws Exception {
        // A PATH with the shell's tools but no go.
        Result r = run(Map.of("CALICO_CACHE_DIR", cache.toString(), "PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "build");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.out()).contains("the Go toolchain is needed to build etcd kube-apiserver kube-controller-manager "
                + "kube-scheduler kubectl").contains("go 1.26.0 or newer");
        try (var files = Files.walk(cache)) {
            assertThat(files.filter(Files::isRegularFile)).isEmpty();
        }
    }

    @Test
    void anUnknownCommandPrintsTheUsage() throws Exception {
        Result r = run(Map.of(), "frobnicate");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).contains("scripts/control-plane.sh start DIR");
    }

    private record Result(int exit, String out) {
    }

    private static Result run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", SCRIPT.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), out);
    }
}
