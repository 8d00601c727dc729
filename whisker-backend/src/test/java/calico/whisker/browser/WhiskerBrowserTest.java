package calico.whisker.browser;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * whisker-ui in Debian's Chromium (playwright-core, e2e/browser.mjs) against a real
 * whisker-backend and a real goldmane fed over FlowCollector: table, filters in the URL,
 * live mode, details, graph and policy view. Screenshots go to target/whisker-ui-screenshots.
 */
class WhiskerBrowserTest {

    private static final List<String> VIEWS = List.of("table", "filtered", "details", "live", "graph", "policies");

    @Test
    void uiWorksAgainstRealBackendAndGoldmane(@TempDir Path dir) throws Exception {
        Path shots = Path.of("target", "whisker-ui-screenshots").toAbsolutePath();
        Files.createDirectories(shots);
        for (String v : VIEWS) {
            Files.deleteIfExists(shots.resolve(v + ".png"));
        }
        try (BrowserStack stack = new BrowserStack(dir, 1000)) {
            assertServesTheBuiltUi(stack);
            long now = System.currentTimeMillis() / 1000;
            var flows = DemoFlows.cluster(now, 480);
            assertThat(flows).hasSizeGreaterThan(300);
            stack.goldmane.feed(flows);

            // Live traffic while the browser runs: a batch of new keys every second.
            ScheduledExecutorService feeder = Executors.newSingleThreadScheduledExecutor();
            AtomicInteger batch = new AtomicInteger();
            feeder.scheduleAtFixedRate(() -> {
                try {
                    stack.goldmane.feed(DemoFlows.liveBatch(System.currentTimeMillis() / 1000, batch.incrementAndGet(), 4));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, 1, 1, TimeUnit.SECONDS);
            BrowserStack.NodeRun run;
            try {
                run = stack.node("browser.mjs", Map.of("SCREENSHOT_DIR", shots.toString()), 240);
            } finally {
                feeder.shutdownNow();
            }
            System.out.println(run.output());
            assertThat(run.exit()).as("node e2e/browser.mjs exit code; output:%n%s", run.output()).isZero();
        }
        for (String v : VIEWS) {
            Path png = shots.resolve(v + ".png");
            assertThat(png).as("screenshot of the " + v + " view").exists();
            assertThat(Files.size(png)).as(png + " size").isGreaterThan(5_000);
        }
    }

    /** The page at "/" must be whisker-ui's build (a test resource named static/index.html would shadow it). */
    private static void assertServesTheBuiltUi(BrowserStack stack) throws Exception {
        HttpResponse<String> index = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(stack.url)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(index.statusCode()).isEqualTo(200);
        assertThat(index.body()).as("index.html served at /").contains("./assets/index-");
        assertThat(index.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(
                csp -> assertThat(csp).contains("default-src 'self'"));
    }
}
