package calico.cni;

import calico.cni.spec.CniResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** Builds the C thin client ({@code src/main/c/calico-cni.c}) with the system compiler and runs it. */
final class ThinClient {
    /** The module directory: the working directory under surefire, cni-plugin/ under bench/run.sh. */
    static final Path MODULE = Files.exists(Path.of("src/main/c/calico-cni.c")) ? Path.of(".") : Path.of("cni-plugin");
    static final Path SOURCE = MODULE.resolve("src/main/c/calico-cni.c");

    private ThinClient() {
    }

    /** Compiles the client into {@code target/thin-client/calico} once. */
    static synchronized Path build() throws IOException, InterruptedException {
        Path out = MODULE.resolve("target/thin-client/calico");
        if (Files.isExecutable(out) && Files.getLastModifiedTime(out).compareTo(Files.getLastModifiedTime(SOURCE)) > 0) {
            return out.toAbsolutePath();
        }
        Files.createDirectories(out.getParent());
        Process p = new ProcessBuilder("cc", "-O2", "-Wall", "-o", out.toString(), SOURCE.toString())
                .redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("cc failed: " + log);
        }
        return out.toAbsolutePath();
    }

    /** Runs the client with exactly {@code env} and {@code stdin}. */
    static CniResponse run(Path client, Map<String, String> env, String stdin) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(client.toString());
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // Broken pipe: the client answered without reading stdin (no daemon: code 11 at once);
            // its answer below is what counts.
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new CniResponse(p.waitFor(), out);
    }
}
