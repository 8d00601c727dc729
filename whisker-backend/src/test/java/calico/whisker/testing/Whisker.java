package calico.whisker.testing;

import calico.whisker.app.WhiskerApplication;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** The backend as deployed (the Spring Boot application), on free loopback ports, and an HTTP client for it. */
public final class Whisker implements AutoCloseable {

    public static final String TOKEN = "s3cret-token-for-tests";

    public final ConfigurableApplicationContext ctx;
    public final int port;
    public final int healthPort;
    public final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String authorization;

    private Whisker(ConfigurableApplicationContext ctx, String authorization) {
        this.ctx = ctx;
        this.port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
        this.healthPort = Integer.parseInt(ctx.getEnvironment().getProperty("local.management.port"));
        this.authorization = authorization;
    }

    /** Token mode against goldmane at {@code goldmane}, plus extra {@code --key=value} arguments. */
    public static Whisker start(Path dir, String goldmane, String... extra) throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, TOKEN + "\n");
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
                "--calico.health.port=0", "--calico.health.host=127.0.0.1", "--whisker.goldmane-host=" + goldmane,
                "--whisker.auth-mode=token", "--whisker.auth-token-file=" + token, "--whisker.keep-alive=200ms",
                "--whisker.probe-interval=200ms"));
        args.addAll(List.of(extra));
        // A later --key=value replaces an earlier one (Spring would join repeated keys with commas).
        java.util.Map<String, String> byKey = new java.util.LinkedHashMap<>();
        for (String a : args) {
            byKey.put(a.substring(0, a.indexOf('=')), a);
        }
        return new Whisker(run(byKey.values().toArray(String[]::new)), "Bearer " + TOKEN);
    }

    public static ConfigurableApplicationContext run(String... args) {
        return new SpringApplicationBuilder(WhiskerApplication.class).run(args);
    }

    public static Whisker wrap(ConfigurableApplicationContext ctx, String authorization) {
        return new Whisker(ctx, authorization);
    }

    public static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    public URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + port + pathAndQuery);
    }

    public HttpRequest.Builder request(String pathAndQuery) {
        return request(pathAndQuery, authorization);
    }

    private HttpRequest.Builder request(String pathAndQuery, String authorizationHeader) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(30));
        if (authorizationHeader != null) {
            b.header("Authorization", authorizationHeader);
        }
        return b;
    }

    public HttpResponse<String> get(String pathAndQuery) throws Exception {
        return http.send(request(pathAndQuery).build(), HttpResponse.BodyHandlers.ofString());
    }

    public HttpResponse<String> get(String pathAndQuery, String authorizationHeader) throws Exception {
        return http.send(request(pathAndQuery, authorizationHeader).build(), HttpResponse.BodyHandlers.ofString());
    }

    public HttpResponse<String> health(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        ctx.close();
    }
}
