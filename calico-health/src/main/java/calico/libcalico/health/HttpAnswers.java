package calico.libcalico.health;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpHandler;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The answers a {@link SideServer} gives, for servers with and without Spring: Prometheus' text from a
 * registry, and a probe of a {@link HealthAggregator} in the JSON Actuator's probe groups give
 * ({@code {"components":{"calicoReadiness":{"details":{"reporters":{…}},"status":…}},"status":…}}; 200
 * {@code UP}, else 503 with {@code DOWN} for liveness, {@code OUT_OF_SERVICE} for readiness), so a
 * plain main answers {@code /liveness} and {@code /readiness} as the Spring services do. {@link #json} and
 * {@link #probe} need Jackson 2 when they are called; loading the class and {@link #prometheus} do not (no
 * Jackson type in a signature or a catch), so a service without Jackson 2 (goldmane, whisker) can serve
 * {@link PrometheusMetricsServer}.
 */
public final class HttpAnswers {

    /** Prometheus' text exposition format. */
    public static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
    private static final String JSON = "application/json";

    private HttpAnswers() {
    }

    /** {@code GET}: the registry's scrape, counters under Calico's names ({@link CalicoMetricTable#exposition}). */
    public static HttpHandler prometheus(PrometheusMeterRegistry registry, CalicoMetricTable calicoNames) {
        return exchange -> {
            try (exchange) {
                if (!"GET".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                SideServer.send(exchange, 200, PROMETHEUS_TEXT,
                        calicoNames.exposition(registry.scrape()).getBytes(StandardCharsets.UTF_8));
            }
        };
    }

    /** {@code GET}: one probe of {@code aggregator}, as Actuator's group for it answers. */
    public static HttpHandler probe(HealthAggregator aggregator, Probe probe) {
        return json(() -> {
            HealthSummary summary = aggregator.summary(); // one instant: the status and the details agree
            Status status = Status.of(summary, probe);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("components", Map.of(component(probe), detailed(status, Map.of("reporters", summary.reporterDetails(probe)))));
            body.put("status", status.name());
            return new Answer(status.httpStatus(), body);
        });
    }

    /** A JSON answer: its HTTP status and the value Jackson writes as the body. */
    public record Answer(int status, Object body) {
    }

    /** {@code GET}: {@code answer}'s value as JSON with its status; anything else 405. */
    public static HttpHandler json(Supplier<Answer> answer) {
        return jsonAt(path -> answer.get());
    }

    /**
     * {@code GET}: the answer for the request's (decoded) path, as JSON with its status; anything else 405. For a
     * server's path that answers everything below it ({@link PathServer}), e.g. an API with identifiers in its paths.
     * The JSON is Jackson's with the modules on the class path (java.time, Optional) and times as ISO-8601 text
     * ({@code "2026-12-06T23:50:00Z"}, {@code "PT0.012S"}), as Spring MVC wrote them.
     */
    public static HttpHandler jsonAt(Function<String, Answer> answer) {
        ObjectMapper mapper = new ObjectMapper().findAndRegisterModules().disable(
                com.fasterxml.jackson.databind.SerializationFeature.WRITE_DATES_AS_TIMESTAMPS,
                com.fasterxml.jackson.databind.SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS);
        return exchange -> {
            try (exchange) {
                if (!"GET".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                Answer a = answer.apply(exchange.getRequestURI().getPath());
                byte[] body;
                try {
                    body = mapper.writeValueAsBytes(a.body());
                } catch (IOException e) { // Jackson's JsonProcessingException: no Jackson type to resolve before it is used
                    throw new UncheckedIOException(e);
                }
                SideServer.send(exchange, a.status(), JSON, body);
            }
        };
    }

    /** Actuator's statuses as the probes use them, worst last. */
    public enum Status {
        UP, OUT_OF_SERVICE, DOWN;

        /** {@return the probe's status}: UP when it passes, else DOWN (liveness) or OUT_OF_SERVICE (readiness) */
        public static Status of(HealthSummary summary, Probe probe) {
            return summary.healthy(probe) ? UP : probe == Probe.LIVENESS ? DOWN : OUT_OF_SERVICE;
        }

        /** {@return the worse of the two} (Actuator's order: DOWN, OUT_OF_SERVICE, UP) */
        public Status and(Status other) {
            return compareTo(other) >= 0 ? this : other;
        }

        /** {@return 200 for UP, 503 otherwise} (Actuator's mapping) */
        public int httpStatus() {
            return this == UP ? 200 : 503;
        }
    }

    /** {@return the name Actuator gives the probe's indicator} ({@code calicoLiveness}, {@code calicoReadiness}) */
    public static String component(Probe probe) {
        return probe == Probe.LIVENESS ? "calicoLiveness" : "calicoReadiness";
    }

    /** {@return {@code {"details":…,"status":…}}}, one component as Actuator writes it */
    public static Map<String, Object> detailed(Status status, Map<String, ?> details) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("details", details);
        json.put("status", status.name());
        return json;
    }

    /**
     * {@return {@code /actuator/health} as Actuator answered it}: the service's own {@code components} (name → its
     * status and details), then both probes of {@code aggregator} ({@code calicoLiveness}, {@code calicoReadiness}),
     * the worst status overall
     */
    public static Answer health(HealthAggregator aggregator, Map<String, Component> components) {
        HealthSummary summary = aggregator.summary();
        Map<String, Object> json = new LinkedHashMap<>();
        Status overall = Status.UP;
        for (var c : components.entrySet()) {
            json.put(c.getKey(), detailed(c.getValue().status(), c.getValue().details()));
            overall = overall.and(c.getValue().status());
        }
        for (Probe probe : Probe.values()) {
            Status s = Status.of(summary, probe);
            json.put(component(probe), detailed(s, Map.of("reporters", summary.reporterDetails(probe))));
            overall = overall.and(s);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("components", json);
        body.put("status", overall.name());
        return new Answer(overall.httpStatus(), body);
    }

    /** One component of {@link #health}: its status and details. */
    public record Component(Status status, Map<String, ?> details) {
    }
}
