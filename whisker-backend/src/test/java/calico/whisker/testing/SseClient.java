package calico.whisker.testing;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Reads a text/event-stream response on its own thread into events (comments counted separately). */
public final class SseClient implements AutoCloseable {

    /** One event: its id, name ("message" when unnamed) and data. */
    public record Event(String id, String name, String data) {
    }

    public final HttpResponse<InputStream> response;
    public final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    public volatile int comments;
    public volatile boolean ended;
    private final Thread reader;

    public SseClient(Whisker whisker, String pathAndQuery) throws Exception {
        response = whisker.http.send(whisker.request(pathAndQuery).header("Accept", "text/event-stream")
                .timeout(java.time.Duration.ofMinutes(5)).build(), HttpResponse.BodyHandlers.ofInputStream());
        reader = new Thread(this::read, "sse-client");
        reader.setDaemon(true);
        reader.start();
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String id = null;
            String name = "message";
            StringBuilder data = null;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isEmpty()) {
                    if (data != null) {
                        events.add(new Event(id, name, data.toString()));
                    }
                    id = null;
                    name = "message";
                    data = null;
                } else if (line.startsWith(":")) {
                    comments++;
                } else {
                    int c = line.indexOf(':');
                    String field = c < 0 ? line : line.substring(0, c);
                    String value = c < 0 ? "" : line.substring(c + 1).replaceFirst("^ ", "");
                    switch (field) {
                        case "id" -> id = value;
                        case "event" -> name = value;
                        case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                        default -> { }
                    }
                }
            }
        } catch (Exception e) {
            // closed by the test
        } finally {
            ended = true;
        }
    }

    public Event next(long seconds) throws InterruptedException {
        Event e = events.poll(seconds, TimeUnit.SECONDS);
        if (e == null) {
            throw new AssertionError("no event within " + seconds + " s");
        }
        return e;
    }

    @Override
    public void close() throws Exception {
        response.body().close();
        reader.interrupt();
    }
}
