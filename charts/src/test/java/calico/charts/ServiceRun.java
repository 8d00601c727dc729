package calico.charts;

import calico.controlplane.ControlPlane;
import calico.controlplane.Tethered;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;

/**
 * One of the suite's executable jars run as the chart would run it: the environment of its
 * container in the rendered chart, and a kubeconfig carrying a token of the component's
 * ServiceAccount, so that kube-apiserver judges the chart's RBAC.
 */
final class ServiceRun {

    private ServiceRun() {
    }

    /** {@return the exec jar of {@code module}}, a test dependency of this module. */
    static Path execJar(String module) {
        return Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
                .map(Path::of).filter(p -> p.getFileName().toString().matches(module + "-.*exec\\.jar")).findFirst()
                .orElseThrow(() -> new AssertionError(module + "'s exec jar is not on the test classpath"));
    }

    /** {@return a kubeconfig file} with a fresh token of {@code account} (TokenRequest) and the admin's server and CA. */
    static Path kubeconfigOf(ControlPlane cp, Config admin, String namespace, String account) throws IOException {
        String token = cp.kubectl("create", "token", account, "-n", namespace).strip();
        String ca = admin.getCaCertData() != null ? admin.getCaCertData()
                : Base64.getEncoder().encodeToString(Files.readAllBytes(Path.of(admin.getCaCertFile())));
        Path file = Files.createTempFile(account, ".kubeconfig");
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "%s", certificate-authority-data: %s}}]
                users: [{name: u, user: {token: %s}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """.formatted(admin.getMasterUrl(), ca, token));
        return file;
    }

    static Process start(Path jar, Map<String, String> env, String... args) throws IOException {
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar.toString()));
        command.addAll(java.util.List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = Tethered.start(pb); // gone with this JVM, even after a SIGKILL
        p.getOutputStream().close();
        return p;
    }

    /** Runs a one-shot jar to its end; {@return its exit status and output} */
    static Helm.Result runToEnd(Path jar, Map<String, String> env) throws IOException, InterruptedException {
        Process p = start(jar, env);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Helm.Result(p.waitFor(), out, "");
    }

    /**
     * Waits until {@code /readiness} on 127.0.0.1:{@code port} answers 200 while the process runs;
     * fails with the process's output when it exits or the deadline passes. The process is stopped
     * in every case.
     */
    static void awaitReadyThenStop(Process p, int port, Duration timeout) throws Exception {
        Path log = Files.createTempFile("service-run", ".log");
        Thread drain = new Thread(() -> {
            try (var in = p.getInputStream()) {
                Files.copy(in, log, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException ignored) {
                // the process ended; what it wrote is in the log
            }
        }, "service-run-output");
        drain.setDaemon(true);
        drain.start();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readiness"))
                .timeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            String last = "no answer";
            while (System.nanoTime() < deadline && p.isAlive()) {
                try {
                    HttpResponse<String> r = http.send(ready, HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200) {
                        return;
                    }
                    last = r.statusCode() + " " + r.body();
                } catch (IOException e) {
                    last = e.toString();
                }
                p.waitFor(500, java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            p.destroy();
            p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
            drain.join(5000);
            throw new AssertionError("not ready (" + last + "); alive=" + p.isAlive() + "; output:\n" + Files.readString(log));
        } finally {
            p.destroy();
            if (!p.waitFor(15, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            drain.join(5000);
            Files.deleteIfExists(log);
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
