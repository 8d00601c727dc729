package calico.libcalico.datastore.kubernetes;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * fabric8's mock API server in CRUD mode, with the parts of the real API server the kubernetes
 * datastore relies on and the mock leaves out:
 *
 * Watches are served as the API server's HTTP streams (see {@link KubernetesApiServer}), not
 * over the mock's websockets.
 *
 * <ul>
 *   <li>a deletion is a change with its own resourceVersion, carried by the DELETED event's object;</li>
 *   <li>a watch from resourceVersion R replays every retained change after R, then follows live
 *       (the mock would send the current objects as ADDED instead);</li>
 *   <li>{@link #compact()} drops the history; a watch from before it gets the API server's
 *       {@code ERROR} event with status 410 "too old resource version", a list at exactly a
 *       revision before it ({@code resourceVersionMatch=Exact}) a 410;</li>
 *   <li>DELETE honours {@code preconditions.resourceVersion} (409 when stale).</li>
 * </ul>
 * Every request is handled under one lock, so each is atomic, as in the real server.
 */
final class RevisionedCrudDispatcher extends KubernetesCrudDispatcher {

    private record Change(long revision, String type, AttributeSet attributes, String object) {
    }

    private static final java.util.regex.Pattern POD_STATUS =
            java.util.regex.Pattern.compile("^(/api/v1/namespaces/[^/]+/pods/[^/?]+)/status");

    private final ObjectMapper json = new ObjectMapper();
    private final List<Change> history = new ArrayList<>(); // guarded by this
    private final Set<Object> watches = ConcurrentHashMap.newKeySet();
    private long lastRevision; // guarded by this
    private long compactedAt; // guarded by this
    // While set, changes are stored but not streamed: a network partition between watchers and server.
    private volatile boolean partitioned;

    @Override
    public synchronized MockResponse dispatch(RecordedRequest request) {
        if (request.method() == HttpMethod.GET && "Exact".equals(queryParameter(request.getPath(), "resourceVersionMatch"))
                && Long.parseLong(queryParameter(request.getPath(), "resourceVersion")) < compactedAt) {
            // etcd's answer to a read at a compacted revision (a later one is answered with the latest state).
            return new MockResponse().setResponseCode(410).setBody(status(410, "Expired",
                    "The resourceVersion for the provided list is too old."));
        }
        if (request.method() == HttpMethod.DELETE) {
            MockResponse refused = checkPrecondition(request);
            if (refused != null) {
                return refused;
            }
        }
        if (request.method() == HttpMethod.PATCH && POD_STATUS.matcher(request.getPath()).find()) {
            // A Pod's status subresource takes metadata changes too (that is how Calico's CNI
            // plugin writes its annotations); the mock would apply only the status.
            String path = POD_STATUS.matcher(request.getPath()).replaceFirst("$1");
            request = new RecordedRequest(request.getHttpVersion(), request.method(), path, request.getHeaders(),
                    request.getBody());
        }
        return super.dispatch(request);
    }

    /** Forgets every change up to now; {@return the compaction revision}. */
    synchronized long compact() {
        compactedAt = lastRevision;
        history.removeIf(c -> c.revision() <= compactedAt);
        return compactedAt;
    }

    /** While {@code on}, open watches receive nothing (the changes still happen and enter the history). */
    void partition(boolean on) {
        partitioned = on;
    }

    /** {@return how many watches are open} (a closed client watch must go away). */
    int openWatches() {
        return watches.size();
    }

    private MockResponse checkPrecondition(RecordedRequest request) {
        String body = request.getUtf8Body();
        if (body == null || body.isBlank()) {
            return null;
        }
        String wanted;
        try {
            wanted = json.readTree(body).path("preconditions").path("resourceVersion").asText("");
        } catch (JsonProcessingException e) {
            return null;
        }
        if (wanted.isEmpty()) {
            return null;
        }
        Map.Entry<AttributeSet, String> current = findResource(getKey(request.getPath()));
        if (current == null) {
            return new MockResponse().setResponseCode(404).setBody(status(404, "NotFound", "not found"));
        }
        String actual = resourceVersionOf(current.getValue());
        if (!wanted.equals(actual)) {
            return new MockResponse().setResponseCode(409).setBody(status(409, "Conflict",
                    "Precondition failed: ResourceVersion in precondition: " + wanted + ", ResourceVersion in object meta: " + actual));
        }
        return null;
    }

    @Override
    public void processEvent(String path, AttributeSet pathAttributes, AttributeSet oldAttributes,
                             GenericKubernetesResource resource, String newState) {
        String existing = oldAttributes == null ? null : map.get(oldAttributes);
        if (newState == null && existing != null) {
            // The API server stamps a deletion with a new revision, carried by the DELETED event.
            existing = withResourceVersion(existing, requestResourceVersion());
            map.put(oldAttributes, existing);
        }
        super.processEvent(path, pathAttributes, oldAttributes, resource, newState);
        if (existing == null && newState == null || existing != null && existing.equals(newState)) {
            return;
        }
        Change change;
        if (newState == null) {
            change = new Change(Long.parseLong(resourceVersionOf(existing)), "DELETED", oldAttributes, existing);
        } else {
            KubernetesAttributesExtractor ex = (KubernetesAttributesExtractor) attributeExtractor;
            AttributeSet attributes = resource != null ? ex.extract(resource) : ex.fromResource(newState);
            if (!attributes.containsKey(KubernetesAttributesExtractor.PLURAL)) {
                attributes = AttributeSet.merge(pathAttributes, attributes);
            }
            change = new Change(Long.parseLong(resourceVersionOf(newState)), existing == null ? "ADDED" : "MODIFIED",
                    attributes, newState);
        }
        synchronized (this) {
            history.add(change);
            lastRevision = Math.max(lastRevision, change.revision());
        }
        for (Object o : partitioned ? Set.of() : watches) {
            HistoryWatch w = (HistoryWatch) o;
            if (change.attributes().matches(w.query())) {
                w.send(event(change.type(), change.object()));
            }
        }
    }

    /** The API server's HTTP watch stream: one JSON event per line, in revision order. */
    interface Stream {
        void send(String line);
    }

    /**
     * Opens a watch on {@code path} (its query carries {@code resourceVersion}); events go to
     * {@code stream} until {@link #closeWatch} is called with the returned handle.
     */
    synchronized Object openWatch(String path, Stream stream) {
        AttributeSet query = attributeExtractor.fromPath(path);
        String from = queryParameter(path, "resourceVersion");
        HistoryWatch w = new HistoryWatch(query, stream);
        if (from == null || from.isEmpty()) {
            // No revision: the current objects as ADDED, as the API server does.
            map.forEach((attributes, object) -> {
                if (attributes.matches(query)) {
                    stream.send(event("ADDED", object));
                }
            });
        } else if (Long.parseLong(from) < compactedAt) {
            stream.send("{\"type\":\"ERROR\",\"object\":" + status(410, "Expired",
                    "too old resource version: " + from + " (" + compactedAt + ")") + "}");
            return w;
        } else {
            long after = Long.parseLong(from);
            for (Change c : history) {
                if (c.revision() > after && c.attributes().matches(query)) {
                    stream.send(event(c.type(), c.object()));
                }
            }
        }
        watches.add(w);
        return w;
    }

    void closeWatch(Object handle) {
        watches.remove(handle);
    }

    @Override
    public MockResponse handleWatch(String path) {
        throw new UnsupportedOperationException("watches are served as HTTP streams by KubernetesApiServer");
    }

    private String event(String type, String object) {
        try {
            ObjectNode e = json.createObjectNode();
            e.put("type", type);
            e.set("object", json.readTree(object));
            return json.writeValueAsString(e);
        } catch (JsonProcessingException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private String status(int code, String reason, String message) {
        ObjectNode s = json.createObjectNode();
        s.put("apiVersion", "v1");
        s.put("kind", "Status");
        s.putObject("metadata");
        s.put("status", "Failure");
        s.put("message", message);
        s.put("reason", reason);
        s.put("code", code);
        return s.toString();
    }

    private String resourceVersionOf(String object) {
        try {
            return json.readTree(object).path("metadata").path("resourceVersion").asText("");
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private String withResourceVersion(String object, long revision) {
        try {
            JsonNode n = json.readTree(object);
            ((ObjectNode) n.path("metadata")).put("resourceVersion", Long.toString(revision));
            return json.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String queryParameter(String path, String name) {
        String query = URI.create(path).getRawQuery();
        if (query == null) {
            return null;
        }
        for (String p : query.split("&")) {
            int eq = p.indexOf('=');
            if (eq > 0 && p.substring(0, eq).equals(name)) {
                return URLDecoder.decode(p.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /** One open watch: what it selects and where its events go. */
    private record HistoryWatch(AttributeSet query, Stream stream) {
        void send(String line) {
            stream.send(line);
        }
    }
}
