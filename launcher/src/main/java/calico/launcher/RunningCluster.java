package calico.launcher;

import calico.launcher.faults.Cluster;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The running {@code ./calico up} as the fault suite sees it: pid files (the launcher's and
 * {@code ./calico}'s share one format), the nodes' services brought back by {@link Nodes#up} (in this
 * process), the cluster-wide ones by {@code ./calico start NAME}.
 */
final class RunningCluster implements Cluster {

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();

    private final Settings settings;
    private final Map<String, String> environment;

    RunningCluster(Settings settings, Map<String, String> environment) {
        this.settings = settings;
        this.environment = Map.copyOf(environment);
    }

    @Override
    public Path runDir() {
        return settings.runDir();
    }

    @Override
    public Path root() {
        return settings.root();
    }

    @Override
    public Optional<Long> pid(String service) {
        return new DetachedProcess(service, null, List.of(), Map.of(), settings.runDir()).pid();
    }

    @Override
    public void restart(String service) {
        Path log = settings.runDir().resolve("logs").resolve("faults-restart.log");
        boolean nodeService = settings.topology().nodes().stream()
                .flatMap(n -> new NodeServices(settings, n).services().stream()).anyMatch(s -> s.name().equals(service));
        try (PrintStream restartLog = new PrintStream(new FileOutputStream(log.toFile(), true), true, StandardCharsets.UTF_8)) {
            if (nodeService) {
                new Nodes(settings, environment, restartLog).up();
                return;
            }
            List<String> cmd = new ArrayList<>(List.of(settings.root().resolve("calico").toString(), "start", service));
            Process p = new ProcessBuilder(cmd).directory(settings.root().toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            p.getOutputStream().close();
            if (p.waitFor() != 0) {
                throw new IllegalStateException("./calico start " + service + " failed (log: " + log + ")");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot restart " + service, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public boolean nodesRecovered() {
        for (Node node : settings.topology().nodes()) {
            NodeServices services = new NodeServices(settings, node);
            if (!services.services().stream().allMatch(s -> s.ready().getAsBoolean())) {
                return false;
            }
            // The health reports' details say where each gets its data (felix: "syncer IN_SYNC through typha at ...").
            if (!readiness(services.ports().felixHealth()).contains("through typha at")) {
                return false;
            }
            if (settings.encapsulation().bgp() && !readiness(services.ports().confdHealth()).contains("connected to typha at")) {
                return false;
            }
        }
        return true;
    }

    private static String readiness(int port) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readiness")).timeout(Duration.ofSeconds(2))
                    .GET().build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    @Override
    public List<String> nodeNamespaces() {
        return settings.topology().nodes().stream().map(Node::namespace).toList();
    }

    @Override
    public String prefix() {
        return settings.prefix();
    }
}
