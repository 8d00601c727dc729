package calico.dataplane.iptables;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs one tool with text on stdin and collects stdout and stderr (read concurrently, so neither pipe fills). */
final class ProcessRunner {

    /** Generous: a restore that waits for the xtables lock stops on its own well before this. */
    private static final long TIMEOUT_SECONDS = 120;

    record Result(int status, String stdout, String stderr) {
    }

    private ProcessRunner() {
    }

    /** Runs the command; an unstartable binary becomes status 127 with the reason in stderr. */
    static Result runQuietly(List<String> command, String stdin, Map<String, String> env) {
        try {
            return run(command, stdin, env, calico.dataplane.calls.ToolCalls.NONE);
        } catch (UncheckedIOException e) {
            return new Result(127, "", e.getMessage());
        }
    }

    /** Runs the command; {@code calls} hears how long starting it took. */
    static Result run(List<String> command, String stdin, Map<String, String> env,
                      calico.dataplane.calls.ToolCalls calls) {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Process p;
        try {
            long t0 = System.nanoTime();
            p = pb.start();
            calls.started((System.nanoTime() - t0) / 1_000);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> drain(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(p.getErrorStream()));
        try (OutputStream in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // The tool exited before reading all input; its status and stderr say why.
        }
        try {
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, out.getNow(""), "timed out after " + TIMEOUT_SECONDS + "s: " + String.join(" ", command));
            }
            return new Result(p.exitValue(), out.join(), err.join());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            return new Result(-1, "", "interrupted");
        }
    }

    private static String drain(InputStream s) {
        try (s) {
            return new String(s.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
