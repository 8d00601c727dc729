package calico.libcalico.health;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A real Spring Boot web application (Tomcat, Actuator, Prometheus registry) on random ports,
 * probed over HTTP the way the kubelet and Prometheus do.
 */
class HealthEndpointsIT {

    /** The smallest service: no component scan, just auto-configuration and a movable clock. */
    @SpringBootConfiguration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class ProbedService {

        @Bean
        FakeClock clock() {
            return new FakeClock();
        }
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();
    private ConfigurableApplicationContext context;

    @AfterEach
    void stop() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void probesFollowReportersOnTheHealthPort() throws Exception {
        context = new SpringApplicationBuilder(ProbedService.class)
                .properties("server.port=0", "calico.health.port=0", "calico.health.host=127.0.0.1")
                .run();
        int serverPort = port("local.server.port");
        int healthPort = port("local.management.port");
        assertThat(healthPort).isNotEqualTo(serverPort);
        HealthAggregator aggregator = context.getBean(HealthAggregator.class);
        FakeClock clock = context.getBean(FakeClock.class);
        HealthReporter startup = aggregator.registerReporter("Startup", true, true, null);
        HealthReporter loop = aggregator.registerReporter("Loop", true, true, Duration.ofSeconds(10));

        // Registered but silent: neither live nor ready.
        Response neverReported = get(healthPort, "/readiness");
        assertThat(neverReported.status()).isEqualTo(503);
        assertThat(reporter(neverReported, "calicoReadiness", "Loop").get("state").asText()).isEqualTo("never reported");
        assertThat(get(healthPort, "/liveness").status()).isEqualTo(503);

        startup.report(true, true, "started");
        loop.report(true, true);
        Response live = get(healthPort, "/liveness");
        assertThat(live.status()).isEqualTo(200);
        assertThat(live.body().get("status").asText()).isEqualTo("UP");
        assertThat(reporter(live, "calicoLiveness", "Startup").get("detail").asText()).isEqualTo("started");
        assertThat(get(healthPort, "/readiness").status()).isEqualTo(200);

        // One reporter says not ready: readiness fails, liveness does not.
        startup.report(true, false, "resyncing");
        Response notReady = get(healthPort, "/readiness");
        assertThat(notReady.status()).isEqualTo(503);
        assertThat(notReady.body().get("status").asText()).isEqualTo("OUT_OF_SERVICE");
        JsonNode startupState = reporter(notReady, "calicoReadiness", "Startup");
        assertThat(startupState.get("ready").asBoolean()).isFalse();
        assertThat(startupState.get("state").asText()).isEqualTo("reporting unhealthy");
        assertThat(startupState.get("detail").asText()).isEqualTo("resyncing");
        assertThat(get(healthPort, "/liveness").status()).isEqualTo(200);

        // Back to ready, then the loop stalls past its timeout: both probes fail.
        startup.report(true, true);
        assertThat(get(healthPort, "/readiness").status()).isEqualTo(200);
        clock.advance(Duration.ofSeconds(11));
        Response stalled = get(healthPort, "/liveness");
        assertThat(stalled.status()).isEqualTo(503);
        assertThat(stalled.body().get("status").asText()).isEqualTo("DOWN");
        assertThat(reporter(stalled, "calicoLiveness", "Loop").get("state").asText()).isEqualTo("timed out");
        assertThat(get(healthPort, "/readiness").status()).isEqualTo(503);

        // Prometheus scrape on the health port shows the same state.
        HttpResponse<String> metrics = getText(healthPort, "/actuator/prometheus");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body())
                .contains("calico_health_live 0.0")
                .contains("calico_health_ready 0.0")
                .contains("calico_health_reporter_live{reporter=\"Loop\"} 0.0")
                .contains("calico_health_reporter_ready{reporter=\"Startup\"} 1.0");

        // The probes live on the health port only, not on the service's own port.
        assertThat(getText(serverPort, "/liveness").statusCode()).isEqualTo(404);
    }

    @Test
    void probesAreServedWhenHealthSharesTheMainPort() throws Exception {
        int port = freePort();
        context = new SpringApplicationBuilder(ProbedService.class)
                .properties("server.port=" + port, "calico.health.port=" + port, "calico.health.host=127.0.0.1")
                .run();
        context.getBean(HealthAggregator.class).registerReporter("Startup", true, true, null).report(true, false);

        assertThat(get(port, "/liveness").status()).isEqualTo(200);
        assertThat(get(port, "/readiness").status()).isEqualTo(503);
        assertThat(getText(port, "/actuator/prometheus").statusCode()).isEqualTo(200);
    }

    @Test
    void disabledHealthServesNoProbes() throws Exception {
        context = new SpringApplicationBuilder(ProbedService.class)
                .properties("server.port=0", "calico.health.enabled=false")
                .run();
        int serverPort = port("local.server.port");

        assertThat(port("local.management.port")).as("no separate management server").isEqualTo(serverPort);
        assertThat(getText(serverPort, "/liveness").statusCode()).isEqualTo(404);
        assertThat(getText(serverPort, "/readiness").statusCode()).isEqualTo(404);
        assertThat(context.getBean(HealthAggregator.class)).isNotNull();
    }

    private record Response(int status, JsonNode body) {
    }

    private int port(String property) {
        return Integer.parseInt(context.getEnvironment().getRequiredProperty(property));
    }

    private Response get(int port, String path) throws IOException, InterruptedException {
        HttpResponse<String> response = getText(port, path);
        return new Response(response.statusCode(), json.readTree(response.body()));
    }

    private HttpResponse<String> getText(int port, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode reporter(Response response, String indicator, String name) {
        JsonNode node = response.body().path("components").path(indicator).path("details").path("reporters").path(name);
        assertThat(node.isObject()).as("reporter %s in %s", name, response.body()).isTrue();
        return node;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
