package calico.apiserver.http;

import calico.apiserver.rest.ApiRequest;
import calico.apiserver.errors.ApiException;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.apiserver.auth.Authenticator;
import calico.apiserver.auth.Authorizer;
import calico.apiserver.auth.User;
import calico.apiserver.discovery.Discovery;
import calico.apiserver.discovery.KindCatalog;
import calico.apiserver.openapi.OpenApi;
import calico.apiserver.rest.ObjectCodec;
import calico.apiserver.rest.Reply;
import calico.apiserver.rest.ResourceHandler;
import calico.apiserver.rest.Tables;
import calico.apiserver.watch.WatchStreamer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole API on one servlet: authentication, routing, authorization, content negotiation,
 * status answers and metrics. Resource paths go to {@link ResourceHandler} (or
 * {@link WatchStreamer}); discovery, OpenAPI, version and health paths are answered here.
 */
public final class ApiServlet extends HttpServlet {

    private static final Logger LOG = LoggerFactory.getLogger(ApiServlet.class);
    private static final String PREFIX = "/apis/" + Discovery.GROUP_VERSION;
    /** Request attributes that carry the metric labels out of a request that failed. */
    private static final String RESOURCE_ATTR = "calico.apiserver.resource";
    private static final String VERB_ATTR = "calico.apiserver.verb";

    private final transient ResourceHandler handler;
    private final transient WatchStreamer watches;
    private final transient Authenticator authenticator;
    private final transient Authorizer authorizer;
    private final transient OpenApi openApi;
    private final transient MeterRegistry metrics;
    /** Open watches by resource: kube's {@code apiserver_longrunning_requests{verb="WATCH"}} gauge. */
    private final transient Map<String, AtomicInteger> watchers = new ConcurrentHashMap<>();
    private final long maxBodyBytes;
    private final transient ObjectCodec codec;

    public ApiServlet(ResourceHandler handler, WatchStreamer watches, Authenticator authenticator,
                      Authorizer authorizer, OpenApi openApi, MeterRegistry metrics, long maxBodyBytes) {
        this.handler = handler;
        this.watches = watches;
        this.authenticator = authenticator;
        this.authorizer = authorizer;
        this.openApi = openApi;
        this.metrics = metrics;
        this.maxBodyBytes = maxBodyBytes;
        this.codec = handler.codec();
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        long start = System.nanoTime();
        String path = req.getRequestURI();
        String verb = req.getMethod().toLowerCase(java.util.Locale.ROOT);
        String resource = "";
        int code;
        try {
            if (path.equals("/healthz") || path.equals("/livez") || path.equals("/readyz")
                    || path.startsWith("/healthz/") || path.startsWith("/livez/") || path.startsWith("/readyz/")) {
                resp.setContentType("text/plain; charset=utf-8");
                resp.getWriter().write("ok");
                code = 200;
            } else if (path.equals("/version")) {
                // Public, as kube-apiserver's system:public-info-viewer role makes it.
                writeJson(resp, 200, version(), "application/json");
                code = 200;
            } else {
                Optional<User> user = authenticator.authenticate(req);
                if (user.isEmpty()) {
                    throw ApiException.unauthorized();
                }
                Routed r = route(req, resp, user.get());
                resource = r.resource;
                verb = r.verb;
                code = r.code;
                if (r.reply != null) {
                    writeReply(resp, r.reply, r.contentType);
                }
            }
        } catch (ApiException e) {
            code = e.code();
            writeJson(resp, e.code(), e.toStatus(), "application/json");
        } catch (RuntimeException e) {
            LOG.warn("request {} {} failed", req.getMethod(), path, e);
            ApiException ae = ApiException.internal(String.valueOf(e.getMessage()));
            code = 500;
            if (!resp.isCommitted()) {
                writeJson(resp, 500, ae.toStatus(), "application/json");
            }
        }
        if (req.getAttribute(RESOURCE_ATTR) instanceof String r) {
            resource = r;
            verb = (String) req.getAttribute(VERB_ATTR);
        }
        record(verb, resource, code, System.nanoTime() - start);
    }

    private void record(String verb, String resource, int code, long nanos) {
        metrics.counter("apiserver_request_total", "verb", verb, "resource", resource, "code", Integer.toString(code))
                .increment();
        Timer.builder("apiserver_request_duration_seconds").tags("verb", verb, "resource", resource)
                .publishPercentileHistogram().register(metrics).record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** What a routed request answered (reply null when the handler wrote the response itself). */
    private record Routed(String verb, String resource, int code, Reply reply, String contentType) {
    }

    private Routed route(HttpServletRequest req, HttpServletResponse resp, User user) throws IOException {
        String path = req.getRequestURI();
        if (path.length() > 1 && path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        String method = req.getMethod();
        String accept = req.getHeader("Accept");
        switch (path) {
            case "/version" -> {
                return get(method, new Reply(200, version(), List.of()), "application/json");
            }
            case "/api" -> {
                String agg = aggregatedVersion(accept);
                if (agg != null) {
                    return get(method, Reply.ok(Discovery.emptyAggregated(agg)), aggregatedType(agg));
                }
                throw ApiException.noSuchPath();
            }
            case "/apis" -> {
                String agg = aggregatedVersion(accept);
                if (agg != null) {
                    return get(method, Reply.ok(Discovery.aggregated(agg)), aggregatedType(agg));
                }
                return get(method, Reply.ok(Discovery.groupList()), "application/json");
            }
            case "/apis/" + Discovery.GROUP -> {
                return get(method, Reply.ok(Discovery.groupDocument()), "application/json");
            }
            case PREFIX -> {
                return get(method, Reply.ok(Discovery.resourceList()), "application/json");
            }
            case "/openapi/v2" -> {
                return get(method, Reply.ok(openApi.v2()), "application/json");
            }
            case "/openapi/v3" -> {
                return get(method, Reply.ok(openApi.v3Index()), "application/json");
            }
            case "/openapi/v3/apis/" + Discovery.GROUP_VERSION -> {
                return get(method, Reply.ok(openApi.v3()), "application/json");
            }
            default -> {
                if (!path.startsWith(PREFIX + "/")) {
                    throw ApiException.noSuchPath();
                }
            }
        }
        return resource(req, resp, user, path.substring(PREFIX.length() + 1));
    }

    private static Routed get(String method, Reply reply, String contentType) {
        if (!method.equals("GET") && !method.equals("HEAD")) {
            throw ApiException.methodNotAllowed(method);
        }
        return new Routed("get", "", 200, reply, contentType);
    }

    private Routed resource(HttpServletRequest http, HttpServletResponse resp, User user, String rest)
            throws IOException {
        List<String> parts = new ArrayList<>();
        for (String p : rest.split("/")) {
            parts.add(URLDecoder.decode(p, StandardCharsets.UTF_8));
        }
        String namespace = null;
        if (parts.size() >= 3 && parts.get(0).equals("namespaces")) {
            namespace = parts.get(1);
            parts = parts.subList(2, parts.size());
        }
        if (parts.isEmpty() || parts.size() > 2) {
            throw ApiException.noSuchPath();
        }
        ResourceKind kind = KindCatalog.byPlural(parts.get(0)).orElseThrow(ApiException::noSuchPath);
        if (namespace != null && !kind.namespaced()) {
            throw ApiException.noSuchPath();
        }
        String name = parts.size() == 2 ? parts.get(1) : null;
        String method = http.getMethod();
        if (kind.namespaced() && namespace == null && !method.equals("GET")) {
            // Writes to a namespaced kind need the namespace in the path.
            throw ApiException.noSuchPath();
        }
        ApiRequest req = new ApiRequest(method, kind, namespace, name, query(http), http.getContentType(),
                http.getHeader("Accept"), user, http.getHeader("User-Agent"));
        String verb = req.verb();
        http.setAttribute(RESOURCE_ATTR, kind.plural());
        http.setAttribute(VERB_ATTR, verb);
        if ((name == null && (method.equals("PUT") || method.equals("PATCH")))
                || (name != null && method.equals("POST"))) {
            throw ApiException.methodNotAllowed(method);
        }
        if (!authorizer.allows(user, verb, kind, namespace, name)) {
            throw ApiException.forbidden(user.name(), verb, kind.plural(), namespace, name, null);
        }
        boolean tiered = KindCatalog.tiered(kind);
        if (tiered && name != null) {
            authorizer.checkTier(user, verb, kind, namespace, name, Authorizer.tierOfName(name));
        }
        Predicate<Resource> visible = r -> !tiered
                || authorizer.tierAllows(user, verb, kind, r.metadata().namespace(), Authorizer.tierOf(r));
        String resource = kind.plural();
        switch (verb) {
            case "get" -> {
                return answer(verb, resource, req, handler.get(req));
            }
            case "list" -> {
                ResourceHandler.Page page = handler.listPage(req);
                List<Resource> items = page.items().stream().filter(visible).toList();
                ResourceHandler.Page shown = new ResourceHandler.Page(items, page.revision(), page.continueToken(),
                        page.remaining());
                return new Routed(verb, resource, 200, listReply(req, shown), contentTypeFor(req));
            }
            case "watch" -> {
                long from = watches.startRevision(req);
                resp.setStatus(200);
                resp.setContentType("application/json");
                resp.flushBuffer();
                AtomicInteger open = watchers.computeIfAbsent(resource, r -> metrics.gauge(
                        "apiserver_longrunning_requests", Tags.of("verb", "WATCH", "resource", r), new AtomicInteger()));
                open.incrementAndGet();
                try {
                    watches.stream(req, from, resp.getOutputStream(), visible);
                } catch (IOException clientGone) {
                    LOG.debug("watch of {} ended: the client went away ({})", resource, clientGone.toString());
                } finally {
                    open.decrementAndGet();
                }
                return new Routed(verb, resource, 200, null, null);
            }
            case "create" -> {
                ObjectNode body = codec.readTree(body(http), req.contentType());
                if (tiered) {
                    String tier = body.path("spec").path("tier").asText("");
                    String n = body.path("metadata").path("name").asText("");
                    authorizer.checkTier(user, verb, kind, namespace, n, tier.isEmpty() ? Authorizer.tierOfName(n) : tier);
                }
                return answer(verb, resource, req, handler.create(req, body));
            }
            case "update" -> {
                ObjectNode body = codec.readTree(body(http), req.contentType());
                checkBodyTier(user, req, body);
                return answer(verb, resource, req, handler.update(req, body));
            }
            case "patch" -> {
                return answer(verb, resource, req, handler.patch(req, body(http)));
            }
            case "delete" -> {
                byte[] b = body(http);
                ObjectNode options = b.length == 0 ? null : codec.readTree(b, req.contentType());
                return answer(verb, resource, req, handler.delete(req, options));
            }
            case "deletecollection" -> {
                return answer(verb, resource, req, handler.deleteCollection(req));
            }
            default -> throw ApiException.methodNotAllowed(method);
        }
    }

    private void checkBodyTier(User user, ApiRequest req, ObjectNode body) {
        if (KindCatalog.tiered(req.kind())) {
            String tier = body.path("spec").path("tier").asText("");
            if (!tier.isEmpty()) {
                authorizer.checkTier(user, req.verb(), req.kind(), req.namespace(), req.name(), tier);
            }
        }
    }

    private Routed answer(String verb, String resource, ApiRequest req, Reply reply) {
        if (Tables.wanted(req.accept()) && reply.body().has("metadata") && !reply.body().has("items")) {
            reply = new Reply(reply.code(), Tables.table(List.of(reply.body()), null, null,
                    req.param("includeObject"), true), reply.warnings());
        }
        return new Routed(verb, resource, reply.code(), reply, contentTypeFor(req));
    }

    private Reply listReply(ApiRequest req, ResourceHandler.Page page) {
        if (Tables.wanted(req.accept())) {
            List<JsonNode> trees = page.items().stream().map(r -> (JsonNode) codec.toTree(r)).toList();
            return Reply.ok(Tables.table(trees, Long.toString(page.revision()), page.continueToken(),
                    req.param("includeObject"), true));
        }
        ObjectNode list = codec.json().createObjectNode();
        list.put("apiVersion", Resource.API_VERSION);
        list.put("kind", req.kind().listKind());
        ObjectNode meta = list.putObject("metadata");
        meta.put("resourceVersion", Long.toString(page.revision()));
        if (page.continueToken() != null) {
            meta.put("continue", page.continueToken());
            meta.put("remainingItemCount", page.remaining());
        }
        ArrayNode items = list.putArray("items");
        page.items().forEach(r -> items.add(codec.toTree(r)));
        return Reply.ok(list);
    }

    private static String contentTypeFor(ApiRequest req) {
        return Tables.wanted(req.accept()) ? Tables.MEDIA_TYPE : "application/json";
    }

    private byte[] body(HttpServletRequest http) throws IOException {
        long declared = http.getContentLengthLong();
        if (declared > maxBodyBytes) {
            throw ApiException.tooLarge(maxBodyBytes);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try (InputStream in = http.getInputStream()) {
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                if (out.size() > maxBodyBytes) {
                    throw ApiException.tooLarge(maxBodyBytes);
                }
            }
        }
        return out.toByteArray();
    }

    private static Map<String, String> query(HttpServletRequest http) {
        Map<String, String> q = new LinkedHashMap<>();
        http.getParameterMap().forEach((k, v) -> q.put(k, v.length == 0 ? "" : v[0]));
        return q;
    }

    private static String aggregatedVersion(String accept) {
        if (accept == null) {
            return null;
        }
        for (String part : accept.split(",")) {
            String p = part.replace(" ", "");
            if (p.contains("g=apidiscovery.k8s.io") && p.contains("as=APIGroupDiscoveryList")) {
                if (p.contains("v=v2beta1")) {
                    return "v2beta1";
                }
                if (p.contains("v=v2")) {
                    return "v2";
                }
            }
            if (p.startsWith("application/json") && !p.contains("as=")) {
                return null;
            }
        }
        return null;
    }

    private static String aggregatedType(String version) {
        return version.equals("v2") ? Discovery.AGGREGATED_V2 : Discovery.AGGREGATED_V2BETA1;
    }

    private ObjectNode version() {
        ObjectNode v = codec.json().createObjectNode();
        v.put("major", "1").put("minor", "32").put("gitVersion", "v3.30.0-calico-java")
                .put("gitCommit", "").put("gitTreeState", "clean").put("buildDate", "")
                .put("goVersion", "java" + Runtime.version().feature()).put("compiler", "javac")
                .put("platform", System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT) + "/"
                        + System.getProperty("os.arch"));
        return v;
    }

    private void writeReply(HttpServletResponse resp, Reply reply, String contentType) throws IOException {
        for (String w : reply.warnings()) {
            resp.addHeader("Warning", "299 - \"" + w.replace("\"", "\\\"") + "\"");
        }
        writeJson(resp, reply.code(), reply.body(), contentType);
    }

    private void writeJson(HttpServletResponse resp, int code, JsonNode body, String contentType) throws IOException {
        if (resp.isCommitted()) {
            return;
        }
        resp.setStatus(code);
        resp.setContentType(contentType);
        resp.setCharacterEncoding("UTF-8");
        byte[] bytes = codec.json().writeValueAsBytes(body);
        resp.setContentLength(bytes.length);
        resp.getOutputStream().write(bytes);
    }
}
