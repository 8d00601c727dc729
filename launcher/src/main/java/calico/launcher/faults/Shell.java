package calico.launcher.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs one short command of the fault suite ({@code ./calico ctl}, {@code kill -STOP}, the CNI client) and returns its result. */
final class Shell {

    record Result(int status, String output) {
        boolean ok() {
            return status == 0;
        }
    }

    private Shell() {
    }

    /**
     * Runs {@code cmd} in {@code dir} with {@code stdin}, the environment replaced by {@code env} when not null;
     * gives up after {@code timeoutSeconds} (status -1).
     */
    static Result run(List<String> cmd, Path dir, Map<String, String> env, String stdin, long timeoutSeconds) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            if (dir != null) {
                pb.directory(dir.toFile());
            }
            if (env != null) {
                pb.environment().clear();
                pb.environment().putAll(env);
            }
            Process p = pb.start();
            try (var in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, new String(out, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", cmd), e);
        }
    }

    static Result run(String... cmd) {
        return run(List.of(cmd), null, null, null, 120);
    }
}
