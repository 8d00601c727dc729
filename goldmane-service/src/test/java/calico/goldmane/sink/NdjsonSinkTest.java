package calico.goldmane.sink;

import static org.assertj.core.api.Assertions.assertThat;

import calico.goldmane.store.Labels;
import calico.goldmane.store.Window;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import com.google.protobuf.util.JsonFormat;
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The push sink against a real HTTP server on loopback. */
class NdjsonSinkTest {

    private HttpServer http;
    private final LinkedBlockingQueue<String> bodies = new LinkedBlockingQueue<>();
    private final List<String> contentTypes = new CopyOnWriteArrayList<>();
    private final AtomicInteger failFirst = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/flows", ex -> {
            byte[] body = ex.getRequestBody().readAllBytes();
            contentTypes.add(ex.getRequestHeaders().getFirst("Content-Type"));
            if (failFirst.getAndDecrement() > 0) {
                ex.sendResponseHeaders(503, -1);
            } else {
                bodies.add(new String(body, StandardCharsets.UTF_8));
                ex.sendResponseHeaders(204, -1);
            }
            ex.close();
        });
        http.start();
    }

    @AfterEach
    void stop() {
        http.stop(0);
    }

    private static Window window(int rows, boolean late) {
        var list = new java.util.ArrayList<Window.Row>();
        for (int i = 0; i < rows; i++) {
            list.add(new Window.Row(i, FlowKey.newBuilder().setSourceName("s" + i).setDestName("d").setProto("tcp")
                    .build(), new long[] {i, 2, 3, 4, 5, 6, 7}, new Labels(List.of("app=s"), List.of()),
                    List.of("10.0.0." + i), List.of()));
        }
        return new Window(100, 1500, 1515, list, List.of(), late);
    }

    private NdjsonSink sink(List<String> outcomes) {
        return new NdjsonSink(URI.create("http://127.0.0.1:" + http.getAddress().getPort() + "/flows"), null, null,
                null, 3, Duration.ofMillis(10), outcomes::add);
    }

    @Test
    void pushesEachClosedWindowAsOneFlowPerLine() throws Exception {
        var outcomes = new CopyOnWriteArrayList<String>();
        try (NdjsonSink sink = sink(outcomes)) {
            sink.onWindow(window(3, false));
            sink.onWindow(window(2, true)); // late re-copies are not pushed
            sink.onWindow(window(0, false)); // nor empty windows
            String body = bodies.poll(20, TimeUnit.SECONDS);
            assertThat(body).isNotNull();
            String[] lines = body.split("\n");
            assertThat(lines).hasSize(3);
            Flow.Builder f = Flow.newBuilder();
            JsonFormat.parser().merge(lines[2], f);
            assertThat(f.getKey().getSourceName()).isEqualTo("s2");
            assertThat(f.getStartTime()).isEqualTo(1500);
            assertThat(f.getEndTime()).isEqualTo(1515);
            assertThat(f.getPacketsIn()).isEqualTo(2);
            assertThat(f.getSourceLabelsList()).containsExactly("app=s");
            assertThat(f.getSourceIpsList()).containsExactly("10.0.0.2");
            assertThat(contentTypes).containsOnly(NdjsonSink.CONTENT_TYPE);
        }
        assertThat(bodies).isEmpty();
        assertThat(outcomes).containsExactly("ok");
    }

    @Test
    void retriesAFailedPush() throws Exception {
        failFirst.set(2);
        var outcomes = new CopyOnWriteArrayList<String>();
        try (NdjsonSink sink = sink(outcomes)) {
            sink.onWindow(window(1, false));
            assertThat(bodies.poll(20, TimeUnit.SECONDS)).isNotNull();
        }
        assertThat(contentTypes).hasSize(3);
        assertThat(outcomes).containsExactly("ok");
    }
}
