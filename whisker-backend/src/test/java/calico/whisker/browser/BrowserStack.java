package calico.whisker.browser;

import calico.whisker.app.WhiskerApplication;
import calico.whisker.testing.RealGoldmane;
import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real goldmane plus whisker-backend (token auth, free loopback port) serving the built
 * whisker-ui from the classpath, and a runner for the Node scripts under whisker-ui/e2e.
 */
final class BrowserStack implements AutoCloseable {

    /** Short buckets: a live flow reaches the browser within about two windows. */
    static final int WINDOW_SECONDS = 2;

    final RealGoldmane goldmane;
    final ConfigurableApplicationContext whisker;
    final String token;
    final String url;

    BrowserStack(Path dir, int maxPageSize) throws IOException {
        goldmane = RealGoldmane.wallClock(WINDOW_SECONDS, maxPageSize);
        token = "browser-" + Long.toHexString(Double.doubleToLongBits(Math.random()));
        Path tokenFile = dir.resolve("token");
        Files.writeString(tokenFile, token + "\n");
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0", "--server.address=127.0.0.1", "--calico.health.port=0",
                "--calico.health.host=127.0.0.1", "--whisker.goldmane-host=" + goldmane.address(),
                "--whisker.auth-mode=token", "--whisker.auth-token-file=" + tokenFile,
                "--whisker.keep-alive=2s", "--whisker.probe-interval=200ms"));
        requireUiOnClasspath();
        whisker = new SpringApplicationBuilder(WhiskerApplication.class).run(args.toArray(String[]::new));
        url = "http://127.0.0.1:" + whisker.getEnvironment().getProperty("local.server.port") + "/";
    }

    /** Fails clearly when whisker-ui's built page is not what {@code classpath:/static/} serves. */
    static void requireUiOnClasspath() throws IOException {
        URL page = BrowserStack.class.getClassLoader().getResource("static/index.html");
        String body = "";
        if (page != null) {
            try (var in = page.openStream()) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        }
        if (!body.contains("./assets/index-")) {
            throw new IllegalStateException("whisker-ui's static/index.html is not on the classpath (found " + page
                    + "); build with -am so the whisker-ui module is in the reactor");
        }
    }

    /** whisker-ui's directory, found from the working directory (module dir or repository root). */
    static Path uiDir() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path ui = p.resolve("whisker-ui");
            if (Files.isRegularFile(ui.resolve("e2e/browser.mjs"))) {
                return ui;
            }
        }
        throw new IllegalStateException("whisker-ui/e2e/browser.mjs not found above " + Path.of("").toAbsolutePath());
    }

    /** The process result of one Node script: exit code and its combined output. */
    record NodeRun(int exit, String output) {
    }

    /** Runs {@code node e2e/<script>} with WHISKER_URL/WHISKER_TOKEN and the given variables; kills it after the timeout. */
    NodeRun node(String script, Map<String, String> env, long timeoutSeconds) throws Exception {
        Path ui = uiDir();
        Path log = Files.createTempFile("whisker-" + script, ".log");
        List<String> cmd = new ArrayList<>(List.of("node", ui.resolve("e2e").resolve(script).toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(ui.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("WHISKER_URL", url);
        pb.environment().put("WHISKER_TOKEN", token);
        pb.environment().putAll(env);
        Process p = pb.start();
        try {
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                return new NodeRun(-1, Files.readString(log) + "\n(killed after " + timeoutSeconds + " s)");
            }
            return new NodeRun(p.exitValue(), Files.readString(log));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    @Override
    public void close() {
        whisker.close();
        goldmane.close();
    }
}
