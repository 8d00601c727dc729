package calico.libcalico.datastore.kubernetes;

import calico.api.model.ResourceKind;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A Kubernetes API server for tests: fabric8's mock CRUD dispatcher ({@link RevisionedCrudDispatcher},
 * every Calico CRD registered with Calico's scope) behind the JDK's HTTP server, with watches as
 * HTTP streams as the real API server serves them to client-go.
 *
 * <p>Why not the mock's own server: it runs on Vert.x 4, and jetcd puts Vert.x 5 on libcalico's
 * classpath, which breaks the mock's websocket watches ({@code NoSuchMethodError
 * ServerWebSocket.accept()}). Plain requests would work; watches would not.
 */
public final class KubernetesApiServer implements AutoCloseable {

    private static final String END = "\u0000end";

    private final RevisionedCrudDispatcher dispatcher = new RevisionedCrudDispatcher();
    private final HttpServer http;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "k8s-test-apiserver");
        t.setDaemon(true);
        return t;
    });
    private final List<BlockingQueue<String>> streams = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final KubernetesClient client;

    public KubernetesApiServer() {
        this(InetAddress.getLoopbackAddress());
    }

    /**
     * Listening on {@code address} (port chosen by the system), e.g. an address on a veth that
     * network namespaces other than the test's can reach as well.
     */
    public KubernetesApiServer(InetAddress address) {
        for (ResourceKind kind : ResourceKind.values()) {
            if (kind.kubernetesOnly()) {
                continue; // a core Kubernetes type, not a custom resource
            }
            dispatcher.expectCustomResource(new CustomResourceDefinitionContext.Builder()
                    .withGroup(CrdCodec.GROUP).withVersion(CrdCodec.VERSION)
                    .withKind(CrdCodec.crdKind(kind)).withPlural(kind.plural())
                    .withScope(kind.namespaced() ? "Namespaced" : "Cluster")
                    .build());
        }
        try {
            http = HttpServer.create(new InetSocketAddress(address, 0), 50);
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on " + address.getHostAddress(), e);
        }
        http.setExecutor(threads);
        http.createContext("/", this::handle);
        http.start();
        client = new KubernetesClientBuilder().withConfig(clientConfig()).build();
        // As in every cluster; it also moves the revision past 0, which a watch reads as "from now".
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                .withNewMetadata().withName("default").endMetadata().build()).create();
    }

    /** {@return the server's URL}, {@code http://<address>:<port>} ({@code 127.0.0.1} by default). */
    public String url() {
        return "http://" + http.getAddress().getAddress().getHostAddress() + ":" + http.getAddress().getPort();
    }

    /** {@return a client configuration for this server}: plain HTTP, HTTP watches, nothing read from the machine. */
    Config clientConfig() {
        return new ConfigBuilder(Config.empty())
                .withMasterUrl(url())
                .withOnlyHttpWatches(true)
                .withRequestTimeout(10_000)
                .build();
    }

    public KubernetesClient client() {
        return client;
    }

    /** {@return a datastore over this server} whose watches send bookmarks every 200 ms; the caller closes it. */
    public KubernetesDatastore datastore() {
        return new KubernetesDatastore(KubernetesConfig.of(clientConfig())
                .withBookmarkInterval(Duration.ofMillis(200)), client);
    }

    /** Drops the change history, as etcd compaction does; {@return the compaction revision}. */
    public long compact() {
        return dispatcher.compact();
    }

    /** While {@code on}, open watches receive nothing; see {@link RevisionedCrudDispatcher#partition}. */
    public void partition(boolean on) {
        dispatcher.partition(on);
    }

    public int openWatches() {
        return dispatcher.openWatches();
    }

    /** Ends every open watch stream, as an API server restart would. */
    public void dropWatches() {
        streams.forEach(q -> q.add(END));
    }

    private void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getRawPath()
                + (ex.getRequestURI().getRawQuery() == null ? "" : "?" + ex.getRequestURI().getRawQuery());
        byte[] body = ex.getRequestBody().readAllBytes();
        if (ex.getRequestMethod().equals("GET") && path.contains("watch=true")) {
            stream(ex, path);
            return;
        }
        Headers.Builder headers = Headers.builder();
        ex.getRequestHeaders().forEach((k, vs) -> vs.forEach(v -> headers.add(k, v)));
        RecordedRequest request = new RecordedRequest("HTTP/1.1", HttpMethod.valueOf(ex.getRequestMethod()), path,
                headers.build(), new Buffer(body));
        MockResponse response = dispatcher.dispatch(request);
        byte[] out = response == null || response.getBody() == null ? new byte[0] : response.getBody().getBytes();
        ex.getResponseHeaders().set("Content-Type", "application/json");
        int code = response == null ? 404 : response.code();
        ex.sendResponseHeaders(code, out.length == 0 ? -1 : out.length);
        if (out.length > 0) {
            try (OutputStream os = ex.getResponseBody()) {
                os.write(out);
            }
        }
        ex.close();
    }

    /** Serves one watch: one JSON event per line, flushed as it happens, until the client leaves. */
    private void stream(HttpExchange ex, String path) throws IOException {
        BlockingQueue<String> queue = new LinkedBlockingQueue<>();
        streams.add(queue);
        Object handle = dispatcher.openWatch(path, queue::add);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(200, 0);
        try (OutputStream os = ex.getResponseBody()) {
            os.flush();
            while (true) {
                String line = queue.poll(1, TimeUnit.SECONDS);
                if (line == END) {
                    break;
                }
                // An empty write per second notices a client that went away.
                os.write(line == null ? new byte[0] : (line + "\n").getBytes(StandardCharsets.UTF_8));
                os.flush();
            }
        } catch (IOException | InterruptedException gone) {
            // client closed the watch (or the server is stopping)
        } finally {
            dispatcher.closeWatch(handle);
            streams.remove(queue);
            ex.close();
        }
    }

    @Override
    public void close() {
        client.close();
        dropWatches();
        http.stop(0);
        threads.shutdownNow();
    }

}
