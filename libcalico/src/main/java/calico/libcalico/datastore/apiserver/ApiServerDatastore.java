package calico.libcalico.datastore.apiserver;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.selector.Selector;
import calico.api.validation.FieldError;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import calico.libcalico.datastore.Admission;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchListener;
import calico.libcalico.tls.CaTrust;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code apiserver} datastore: a client of Calico's own {@code projectcalico.org/v3} API
 * server (module {@code apiserver-service}), so that separate processes can share whatever
 * datastore that server holds, the in-memory one included.
 *
 * <ul>
 *   <li>Resources travel as calico-api's codec writes them; {@code resourceVersion} is the
 *       server's datastore revision, so the compare-and-swap rules are the server's datastore's.</li>
 *   <li>Kubernetes {@code Status} answers become the exceptions every backend raises: 404
 *       {@code NotFound}, 409 {@code AlreadyExists}/{@code Conflict}, 422 {@code Invalid} (one
 *       {@link FieldError} per cause), 410 {@code Compacted}, 401/403 {@code Denied}, 5xx and
 *       transport failures {@code Unavailable}.</li>
 *   <li>Writes are defaulted and validated here first (the same {@link Admission} step the server's
 *       datastore runs again), so an invalid resource fails identically without a round trip.</li>
 *   <li>Label selectors are Calico selectors, which the Kubernetes list API cannot carry: lists
 *       fetch the kind (or namespace) and filter here.</li>
 * </ul>
 */
public final class ApiServerDatastore implements Datastore {

    private static final Logger LOG = LoggerFactory.getLogger(ApiServerDatastore.class);
    static final String API = "/apis/projectcalico.org/v3/";
    private static final Pattern COMPACT_REVISION = Pattern.compile("\\((\\d+)\\)\\s*$");
    private static final int EXECUTOR_THREADS = 4;
    private static final int CALLER_THREADS = 8;

    private final ApiServerConfig config;
    private final ThreadPoolExecutor executor;
    private final ThreadPoolExecutor callers;
    private final HttpClient http;
    private final String authorization;
    private final ResourceCodec codec = ResourceCodec.get();
    private final ObjectMapper json = codec.jsonMapper();
    private final Admission admission = new Admission(ResourceValidator.get());
    private final Set<ApiServerWatch> watches = ConcurrentHashMap.newKeySet();
    private final AtomicLong watchIds = new AtomicLong();
    private volatile boolean closed;

    public ApiServerDatastore(ApiServerConfig config) {
        this.config = config;
        this.authorization = readToken(config);
        // HttpClient opens its sockets on its executor's threads. Started here, they stay in the
        // network namespace the datastore was opened in, even when a caller's thread has entered
        // another one (the CNI daemon runs calls inside the node's namespace).
        this.executor = new ThreadPoolExecutor(EXECUTOR_THREADS, EXECUTOR_THREADS, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "apiserver-datastore-http");
                    t.setDaemon(true);
                    return t;
                });
        this.executor.prestartAllCoreThreads();
        // Requests are made from these threads, not the caller's: any thread the JDK's client
        // spawns while connecting (its completion stages use the common pool) is then born in
        // this namespace too. A caller inside another namespace made connects fail at random.
        this.callers = new ThreadPoolExecutor(CALLER_THREADS, CALLER_THREADS, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "apiserver-datastore-call");
                    t.setDaemon(true);
                    return t;
                });
        this.callers.prestartAllCoreThreads();
        this.http = HttpClient.newBuilder()
                .executor(executor)
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(config.requestTimeout())
                .sslContext(sslContext(config))
                .build();
    }

    // ---------------------------------------------------------------- reads

    @Override
    public Optional<Resource> get(ResourceKey key) {
        Admission.checkKey(key);
        Answer a = send("GET", path(key.kind(), key.namespace(), key.name()), null);
        if (a.status() == 404) {
            return Optional.empty();
        }
        return Optional.of(decodeOk(a, key, null));
    }

    @Override
    public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
        Selector selector = labelSelector == null ? null : Admission.labelSelector(kind, labelSelector);
        String ns = kind.namespaced() ? namespace : null;
        Answer a = send("GET", path(kind, ns, null), null);
        if (a.status() != 200) {
            throw failure(a, null, "list " + kind.plural(), null);
        }
        JsonNode tree = tree(a.body(), "list " + kind.plural());
        List<Resource> items = new ArrayList<>();
        for (JsonNode item : tree.path("items")) {
            Resource r = decode(item, "list " + kind.plural());
            if (selector == null || selector.matches(r.metadata().labels())) {
                items.add(r);
            }
        }
        return new ListResult(items, revisionOf(tree.path("metadata"), "list " + kind.plural()));
    }

    /** The revision of a one-item list of a small kind: the server's datastore revision is global. */
    @Override
    public long currentRevision() {
        Answer a = send("GET", path(ResourceKind.CLUSTER_INFORMATION, null, null) + "?limit=1", null);
        if (a.status() != 200) {
            throw failure(a, null, "current revision", null);
        }
        return revisionOf(tree(a.body(), "current revision").path("metadata"), "current revision");
    }

    // ---------------------------------------------------------------- writes

    @Override
    public Resource create(Resource resource) {
        // The overlap checks need the other pools: the server's datastore does them.
        Resource r = admission.forCreate(resource, kind -> List.of());
        ResourceKey key = r.key();
        Answer a = send("POST", path(key.kind(), key.namespace(), null), codec.toJsonBytes(r));
        if (a.status() != 201 && a.status() != 200) {
            throw failure(a, key, "create " + key, null);
        }
        return decodeOk(a, key, null);
    }

    @Override
    public Resource update(Resource resource) {
        Resource r = admission.forUpdate(resource);
        ResourceKey key = r.key();
        String rv = r.metadata().resourceVersion();
        Admission.revisionOf(key, rv);
        Answer a = send("PUT", path(key.kind(), key.namespace(), key.name()), codec.toJsonBytes(r));
        return decodeOk(a, key, rv);
    }

    @Override
    public Resource delete(ResourceKey key, String resourceVersion) {
        Admission.checkKey(key);
        Admission.revisionOf(key, resourceVersion);
        ObjectNode options = json.createObjectNode().put("apiVersion", "v1").put("kind", "DeleteOptions");
        if (resourceVersion != null && !resourceVersion.isEmpty()) {
            options.putObject("preconditions").put("resourceVersion", resourceVersion);
        }
        byte[] body;
        try {
            body = json.writeValueAsBytes(options);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return decodeOk(send("DELETE", path(key.kind(), key.namespace(), key.name()), body), key, resourceVersion);
    }

    // ---------------------------------------------------------------- watch

    @Override
    public Watch watch(ResourceKind kind, String namespace, long fromRevision, WatchListener listener) {
        if (fromRevision < 0) {
            throw new IllegalArgumentException("fromRevision must be 0 (from now) or a revision, got " + fromRevision);
        }
        checkOpen();
        String ns = kind.namespaced() ? namespace : null;
        ApiServerWatch w = new ApiServerWatch(this, watchIds.incrementAndGet(), kind, ns, listener, watches::remove);
        watches.add(w);
        w.start(fromRevision);
        return w;
    }

    @Override
    public void close() {
        closed = true;
        for (ApiServerWatch w : List.copyOf(watches)) {
            w.close();
        }
        executor.shutdown();
        callers.shutdown();
    }

    // ---------------------------------------------------------------- for ApiServerWatch

    /** Opens a watch stream after {@code revision}; the caller reads and closes the body. */
    HttpResponse<InputStream> openWatch(ResourceKind kind, String namespace, long revision) {
        checkOpen();
        String uri = path(kind, namespace, null) + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + revision;
        HttpRequest req = request(uri).timeout(config.requestTimeout()).GET().build();
        try {
            return http.send(req, HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            throw unavailable("watch " + kind.plural(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DatastoreException.Unavailable("watch " + kind.plural() + ": interrupted", e);
        }
    }

    ObjectMapper json() {
        return json;
    }

    Resource decode(JsonNode node, String what) {
        try {
            return codec.fromTree(node, "").get(0);
        } catch (ResourceParseException | IndexOutOfBoundsException e) {
            throw new DatastoreException.Unavailable(what + ": the API server sent an undecodable resource: "
                    + e.getMessage(), e);
        }
    }

    /** {@return the exception for a non-success answer} (a Status body, or a bare code). */
    DatastoreException failure(Answer a, ResourceKey key, String what, String resourceVersion) {
        return failure(a.status(), tree(a.body()), key, what, resourceVersion);
    }

    DatastoreException failure(int code, JsonNode status, ResourceKey key, String what, String resourceVersion) {
        String reason = status.path("reason").asText("");
        String message = status.path("message").asText("");
        String name = key == null ? what : key.toString();
        return switch (code) {
            case 401 -> new DatastoreException.Denied(what + ": the API server " + config.url()
                    + " rejected the credentials (401 Unauthorized): check CALICO_APISERVER_TOKEN_FILE"
                    + (config.tokenFile() == null ? " (not set)" : " (" + config.tokenFile() + ")"));
            case 403 -> new DatastoreException.Denied(what + ": forbidden by the API server (403): " + message);
            case 404 -> key != null ? new DatastoreException.NotFound(key)
                    : new DatastoreException.Unavailable(what + ": 404 from the API server: " + message, null);
            case 409 -> "AlreadyExists".equals(reason) && key != null ? new DatastoreException.AlreadyExists(key)
                    : new DatastoreException.Conflict(key, resourceVersion, "newer, per the API server");
            case 410 -> new DatastoreException.Compacted(0, compactRevision(message));
            case 422 -> {
                List<FieldError> errors = new ArrayList<>();
                for (JsonNode c : status.path("details").path("causes")) {
                    String m = c.path("message").asText("");
                    errors.add(new FieldError(c.path("field").asText(""),
                            m.startsWith("Invalid value: ") ? m.substring("Invalid value: ".length()) : m));
                }
                if (errors.isEmpty()) {
                    errors.add(new FieldError("", message));
                }
                yield new DatastoreException.Invalid(new ValidationException(name, errors));
            }
            case 400 -> new DatastoreException.Invalid(new ValidationException(name,
                    List.of(new FieldError("request", message))));
            default -> new DatastoreException.Unavailable(what + ": " + code + " " + reason + " from the API server: "
                    + message, null);
        };
    }

    static long compactRevision(String message) {
        Matcher m = COMPACT_REVISION.matcher(message);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    JsonNode tree(byte[] body) {
        try {
            JsonNode n = json.readTree(body);
            return n == null ? json.createObjectNode() : n;
        } catch (IOException e) {
            return json.createObjectNode();
        }
    }

    static long revisionOf(JsonNode metadata, String what) {
        String rv = metadata.path("resourceVersion").asText("");
        try {
            return Long.parseLong(rv);
        } catch (NumberFormatException e) {
            throw new DatastoreException.Unavailable(what + ": the API server sent resourceVersion \"" + rv
                    + "\", not a revision", e);
        }
    }

    // ---------------------------------------------------------------- HTTP

    record Answer(int status, byte[] body) {
    }

    private Answer send(String method, String uri, byte[] body) {
        checkOpen();
        HttpRequest.Builder b = request(uri).timeout(config.requestTimeout());
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofByteArray(body));
        }
        HttpRequest req = b.build();
        try {
            HttpResponse<byte[]> r = callers.submit(() -> http.send(req, HttpResponse.BodyHandlers.ofByteArray()))
                    .get();
            return new Answer(r.statusCode(), r.body());
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw unavailable(method + " " + uri, io);
            }
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new DatastoreException.Unavailable(method + " " + uri + ": " + e.getCause(), e.getCause());
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw new DatastoreException.Unavailable(method + " " + uri + ": the datastore client is closed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DatastoreException.Unavailable(method + " " + uri + ": interrupted", e);
        }
    }

    private HttpRequest.Builder request(String uri) {
        HttpRequest.Builder b = HttpRequest.newBuilder(config.url().resolve(uri)).header("Accept", "application/json");
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return b;
    }

    private Resource decodeOk(Answer a, ResourceKey key, String resourceVersion) {
        if (a.status() != 200 && a.status() != 201) {
            throw failure(a, key, key.toString(), resourceVersion);
        }
        return decode(tree(a.body(), key.toString()), key.toString());
    }

    private JsonNode tree(byte[] body, String what) {
        try {
            return json.readTree(body);
        } catch (IOException e) {
            throw new DatastoreException.Unavailable(what + ": the API server sent no JSON: " + e.getMessage(), e);
        }
    }

    private DatastoreException.Unavailable unavailable(String what, IOException e) {
        return new DatastoreException.Unavailable(what + ": API server " + config.url() + " unreachable: " + e, e);
    }

    /** {@code /apis/projectcalico.org/v3/[namespaces/NS/]PLURAL[/NAME]}, names percent-encoded. */
    static String path(ResourceKind kind, String namespace, String name) {
        StringBuilder s = new StringBuilder(API);
        if (kind.namespaced() && namespace != null && !namespace.isEmpty()) {
            s.append("namespaces/").append(encode(namespace)).append('/');
        }
        s.append(kind.plural());
        if (name != null) {
            s.append('/').append(encode(name));
        }
        return s.toString();
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("apiserver datastore is closed");
        }
    }

    private static String readToken(ApiServerConfig config) {
        if (config.tokenFile() == null) {
            return null;
        }
        try {
            String token = Files.readString(config.tokenFile()).trim();
            if (token.isEmpty() || token.contains("\n")) {
                throw new IllegalArgumentException("CALICO_APISERVER_TOKEN_FILE: " + config.tokenFile()
                        + " must hold exactly one token (one line)");
            }
            return "Bearer " + token;
        } catch (IOException e) {
            throw new IllegalArgumentException("CALICO_APISERVER_TOKEN_FILE: cannot read " + config.tokenFile() + ": "
                    + e.getMessage(), e);
        }
    }

    private static SSLContext sslContext(ApiServerConfig config) {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            if (config.insecure()) {
                LOG.warn("CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY=true: the API server {} is NOT authenticated; "
                        + "use this on loopback for development only", config.url());
                ctx.init(null, new TrustManager[] {new TrustAll()}, null);
                return ctx;
            }
            ctx.init(null, new TrustManager[] {CaTrust.load(config.caFile())}, null);
            return ctx;
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException("CALICO_APISERVER_CA_FILE: cannot load " + config.caFile()
                    + " as PEM certificates: " + e.getMessage(), e);
        }
    }

    /** Accepts any server certificate and host name: only for CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY. */
    private static final class TrustAll extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, java.net.Socket socket) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, java.net.Socket socket) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
