package calico.goldmane.sink;

import calico.goldmane.engine.WindowListener;
import calico.goldmane.store.Window;
import calico.proto.tls.PemKey;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pushes each closed window to PUSH_URL as one POST of newline-delimited JSON (one proto3-JSON
 * {@code Flow} per line, start/end = the bucket), on its own thread. A failed push is retried
 * with backoff a few times, then given up (counted): the sink is best effort and never holds up
 * the writer. Late changes to a window after it closed are not pushed again.
 */
public final class NdjsonSink implements WindowListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NdjsonSink.class);
    public static final String CONTENT_TYPE = "application/x-ndjson";

    private final URI url;
    private final HttpClient http;
    private final int attempts;
    private final Duration backoff;
    private final Consumer<String> outcome;
    private final JsonFormat.Printer json = JsonFormat.printer().omittingInsignificantWhitespace();
    private final ExecutorService sender = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "goldmane-sink");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param clientCert client certificate for mTLS to the endpoint (CLIENT_CERT_PATH), or null
     * @param clientKey  its key (CLIENT_KEY_PATH)
     * @param caCert     CA to trust for the endpoint (CA_CERT_PATH), or null for the JDK's
     * @param outcome    told "ok" or "error" per window, for metrics
     */
    public NdjsonSink(URI url, String clientCert, String clientKey, String caCert, int attempts, Duration backoff,
                      Consumer<String> outcome) {
        this.url = url;
        this.attempts = attempts;
        this.backoff = backoff;
        this.outcome = outcome;
        HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if (url.getScheme().equals("https") && (caCert != null || clientCert != null)) {
            try {
                SslContextBuilder ssl = SslContextBuilder.forClient().sslProvider(SslProvider.JDK);
                if (caCert != null) {
                    ssl.trustManager(new File(caCert));
                }
                if (clientCert != null) {
                    ssl.keyManager(Files.newInputStream(Path.of(clientCert)), PemKey.pkcs8(Path.of(clientKey)));
                }
                b.sslContext(((JdkSslContext) ssl.build()).context());
            } catch (Exception e) {
                throw new IllegalStateException("CLIENT_CERT_PATH / CLIENT_KEY_PATH / CA_CERT_PATH: " + e.getMessage(),
                        e);
            }
        }
        this.http = b.build();
    }

    @Override
    public void onWindow(Window w) {
        if (w.late() || w.isEmpty()) {
            return;
        }
        sender.execute(() -> push(w));
    }

    String body(Window w) {
        var sb = new StringBuilder(w.rows().size() * 512);
        for (Window.Row r : w.rows()) {
            try {
                json.appendTo(r.toFlow(w.start(), w.end()), sb);
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalStateException(e);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private void push(Window w) {
        String body = body(w);
        HttpRequest req = HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(30))
                .header("Content-Type", CONTENT_TYPE).POST(HttpRequest.BodyPublishers.ofString(body)).build();
        for (int i = 1; i <= attempts; i++) {
            try {
                int status = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
                if (status / 100 == 2) {
                    outcome.accept("ok");
                    return;
                }
                log.warn("PUSH_URL {} answered {} for window {} (attempt {})", url, status, w.start(), i);
            } catch (java.io.IOException e) {
                log.warn("PUSH_URL {} failed for window {} (attempt {}): {}", url, w.start(), i, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            try {
                Thread.sleep(backoff.toMillis() * i);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        outcome.accept("error");
    }

    @Override
    public void close() {
        sender.shutdown();
        try {
            sender.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
