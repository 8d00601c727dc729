package calico.controlplane;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The control plane's kubectl, run with a kubeconfig and a discovery cache of the control plane's
 * own (kubectl keeps one under HOME otherwise, shared by every cluster).
 */
record Kubectl(Path binary, Path cacheDir) {

    private static final long TIMEOUT_SECONDS = 120;

    /** {@return what kubectl printed and its exit code}; {@code stdin} (or nothing) on its standard input. */
    ControlPlane.KubectlResult run(Path kubeconfig, String stdin, String... args) {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--kubeconfig", kubeconfig.toString()));
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("KUBECACHEDIR", cacheDir.toString());
            if (stdin == null) {
                pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            }
            Process p = pb.start();
            if (stdin != null) {
                try (OutputStream in = p.getOutputStream()) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", cmd) + " did not finish within " + TIMEOUT_SECONDS + " s:\n" + out);
            }
            return new ControlPlane.KubectlResult(p.exitValue(), out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + binary, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running kubectl", e);
        }
    }
}
