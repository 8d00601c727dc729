package calico.apiserver.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real kubectl against a fixture: a kubeconfig with the server URL and a bearer token,
 * {@code --insecure-skip-tls-verify}, and HOME/cache in a private temporary directory.
 */
public final class Kubectl {

    public static final Path BINARY = Path.of(System.getenv().getOrDefault("KUBECTL", "/usr/bin/kubectl"));

    /** What a kubectl run printed and returned. */
    public record Result(int exit, String out, String err) {
        public String all() {
            return out + err;
        }
    }

    private final Path binary;
    private final Path home;
    private final Path kubeconfig;

    public Kubectl(String serverUrl, String token) {
        this(BINARY, serverUrl, token);
    }

    /** {@code binary}: which kubectl (the control plane's v1.37.2 for tests behind kube-apiserver). */
    public Kubectl(Path binary, String serverUrl, String token) {
        this.binary = binary;
        try {
            home = Files.createTempDirectory("kubectl-home");
            kubeconfig = home.resolve("config");
            Files.writeString(kubeconfig, """
                    apiVersion: v1
                    kind: Config
                    clusters:
                    - name: calico
                      cluster:
                        server: %s
                        insecure-skip-tls-verify: true
                    users:
                    - name: u
                      user:
                        token: %s
                    contexts:
                    - name: c
                      context: {cluster: calico, user: u, namespace: default}
                    current-context: c
                    """.formatted(serverUrl, token));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Result run(String stdin, String... args) {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", home.resolve("cache").toString()));
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().put("HOME", home.toString());
            pb.environment().put("KUBECACHEDIR", home.resolve("cache").toString());
            Path out = Files.createTempFile(home, "out", ".txt");
            Path err = Files.createTempFile(home, "err", ".txt");
            pb.redirectOutput(out.toFile()).redirectError(err.toFile());
            Process p = pb.start();
            try (var in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("kubectl " + args[0] + " did not finish");
            }
            return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Starts kubectl in the background (for {@code get -w}); output goes to {@code out}. */
    public Process start(Path out, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", home.resolve("cache").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("HOME", home.toString());
        return pb.start();
    }

    public Path home() {
        return home;
    }
}
