package calico.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a short command (ip, sysctl, java -jar for the one-shot start-up) and returns its output. */
final class Command {

    private Command() {
    }

    /** The result of a finished command: exit status and its output (stdout and stderr together). */
    record Result(int status, String output) {
        boolean ok() {
            return status == 0;
        }
    }

    /** Runs {@code cmd}; fails when it does not exit 0, with its output in the message. */
    static String run(String... cmd) {
        Result r = exec(List.of(cmd));
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed (exit " + r.status() + "): " + r.output().strip());
        }
        return r.output();
    }

    static Result exec(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(new ArrayList<>(cmd)).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", cmd) + " did not finish in 60 s");
            }
            return new Result(p.exitValue(), out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", cmd), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", cmd), e);
        }
    }
}
