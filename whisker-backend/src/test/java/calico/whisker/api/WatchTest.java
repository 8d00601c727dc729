package calico.whisker.api;

import static calico.whisker.testing.Flows.flow;
import static calico.whisker.testing.Flows.key;
import static calico.whisker.testing.Whisker.enc;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.testing.Await;
import calico.whisker.testing.RealGoldmane;
import calico.whisker.testing.SseClient.Event;
import calico.whisker.testing.SseClient;
import calico.whisker.testing.Whisker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** GET /flows?watch=true relays goldmane's Flows.Stream as server-sent events, and cancels it when the client goes. */
class WatchTest {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dir;
    RealGoldmane gm;
    Whisker whisker;

    @BeforeEach
    void start() throws Exception {
        gm = RealGoldmane.plaintext();
        whisker = Whisker.start(dir, gm.address());
    }

    @AfterEach
    void stop() {
        whisker.close();
        gm.close();
    }

    static void await(String what, BooleanSupplier cond) {
        Await.until(what, Duration.ofSeconds(15), cond);
    }

    private FlowWatches watches() {
        return whisker.ctx.getBean(FlowWatches.class);
    }

    @Test
    void liveFlowsArriveAsEachBucketClosesWithKeepAlives() throws Exception {
        try (SseClient sse = new SseClient(whisker, "/flows?watch=true")) {
            assertThat(sse.response.statusCode()).isEqualTo(200);
            assertThat(sse.response.headers().firstValue("Content-Type")).hasValueSatisfying(
                    v -> assertThat(v).startsWith("text/event-stream"));
            assertThat(sse.response.headers().firstValue("Cache-Control")).hasValue("no-store");
            assertThat(sse.response.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
            await("goldmane stream", () -> gm.streams() == 1);
            gm.feed(List.of(flow(key("ns-a", "live-", "ns-b", "srv-", 443, Action.Allow), gm.now(), 4, 40)));
            assertThat(sse.events.poll(1, java.util.concurrent.TimeUnit.SECONDS)).as("open bucket not sent").isNull();
            gm.advance(Duration.ofSeconds(15));
            Event e = sse.next(15);
            JsonNode f = JSON.readTree(e.data());
            assertThat(e.name()).isEqualTo("message");
            assertThat(e.id()).isEqualTo(f.get("id").asString());
            assertThat(f.get("source_name").asString()).isEqualTo("live-");
            assertThat(f.get("dest_port").asLong()).isEqualTo(443);
            assertThat(f.get("packets_in").asLong()).isEqualTo(4);
            await("keep-alive comments", () -> sse.comments >= 3);
            // The next bucket's flows come as the next bucket closes.
            gm.feed(List.of(flow(key("ns-a", "live-", "ns-b", "srv-", 443, Action.Allow), gm.now(), 6, 60)));
            gm.advance(Duration.ofSeconds(15));
            assertThat(JSON.readTree(sse.next(15).data()).get("packets_in").asLong()).isEqualTo(6);
        }
    }

    @Test
    void filtersApplyToTheStream() throws Exception {
        try (SseClient sse = new SseClient(whisker, "/flows?watch=true&filters="
                + enc("{\"dest_names\":[{\"value\":\"wanted-\"}]}"))) {
            await("goldmane stream", () -> gm.streams() == 1);
            gm.feed(List.of(flow(key("n", "a-", "n", "wanted-", 80, Action.Allow), gm.now(), 1, 1),
                    flow(key("n", "a-", "n", "other-", 80, Action.Allow), gm.now(), 1, 1)));
            gm.advance(Duration.ofSeconds(15));
            gm.feed(List.of(flow(key("n", "b-", "n", "other-", 81, Action.Deny), gm.now(), 1, 1),
                    flow(key("n", "b-", "n", "wanted-", 81, Action.Deny), gm.now(), 1, 1)));
            gm.advance(Duration.ofSeconds(15));
            List<String> seen = new ArrayList<>();
            seen.add(JSON.readTree(sse.next(15).data()).get("source_name").asString() + ">");
            seen.add(JSON.readTree(sse.next(15).data()).get("source_name").asString() + ">");
            assertThat(seen).containsExactly("a->", "b->");
            assertThat(sse.events).isEmpty();
        }
    }

    @Test
    void startTimeGteBackfillsClosedBucketsFirst() throws Exception {
        gm.feed(List.of(flow(key("n", "old-", "n", "x-", 80, Action.Allow), gm.now(), 1, 1)));
        gm.advance(Duration.ofSeconds(15));
        gm.advance(Duration.ofSeconds(15));
        try (SseClient sse = new SseClient(whisker, "/flows?watch=true&startTimeGte=-60")) {
            assertThat(JSON.readTree(sse.next(15).data()).get("source_name").asString()).isEqualTo("old-");
        }
        try (SseClient live = new SseClient(whisker, "/flows?watch=true")) {
            await("goldmane streams", () -> gm.streams() >= 1);
            assertThat(live.events.poll(1, java.util.concurrent.TimeUnit.SECONDS)).as("no backfill by default").isNull();
        }
    }

    @Test
    void clientDisconnectCancelsTheGoldmaneStream() throws Exception {
        try (Socket s = new Socket("127.0.0.1", whisker.port)) {
            OutputStream out = s.getOutputStream();
            out.write(("GET /flows?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                    + "Authorization: Bearer " + Whisker.TOKEN + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            var in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 ");
            await("goldmane stream", () -> gm.streams() == 1);
            assertThat(watches().open()).isEqualTo(1);
        }
        await("goldmane stream cancelled", () -> gm.streams() == 0);
        await("watch released", () -> watches().open() == 0);
        String metrics = whisker.health("/actuator/prometheus").body();
        assertThat(metrics).contains("whisker_watches{application=\"whisker-backend\"} 0.0");
    }

    @Test
    void goldmaneEndingTheStreamSendsAnErrorEventAndCloses() throws Exception {
        try (SseClient sse = new SseClient(whisker, "/flows?watch=true")) {
            await("goldmane stream", () -> gm.streams() == 1);
            String address = gm.address();
            gm.close();
            Event e = sse.next(15);
            assertThat(e.name()).isEqualTo("error");
            JsonNode body = JSON.readTree(e.data());
            assertThat(body.get("status").asInt()).isIn(502, 503);
            assertThat(body.get("message").asString()).contains("goldmane at " + address);
            await("response closed", () -> sse.ended);
            await("watch released", () -> watches().open() == 0);
        }
        gm = RealGoldmane.plaintext();
    }
}
