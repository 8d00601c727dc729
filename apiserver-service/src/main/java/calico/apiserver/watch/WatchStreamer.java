package calico.apiserver.watch;

import calico.api.model.Resource;
import calico.api.selector.Selector;
import calico.apiserver.errors.ApiException;
import calico.apiserver.rest.ApiRequest;
import calico.apiserver.rest.FieldSelector;
import calico.apiserver.rest.LabelSelectors;
import calico.apiserver.rest.ObjectCodec;
import calico.apiserver.rest.ResourceHandler;
import calico.apiserver.rest.ResourceVersion;
import calico.apiserver.rest.Tables;
import calico.libcalico.datastore.Admission;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * {@code ?watch=1}: Kubernetes watch events as JSON lines over one datastore watch.
 *
 * <ul>
 *   <li>{@code resourceVersion} empty or {@code 0}: the current objects as ADDED, then changes
 *       (kube-apiserver's "get state and start at most recent").</li>
 *   <li>{@code resourceVersion=N}: every change after N; a compacted N ends with an ERROR event
 *       carrying a 410 Expired {@code Status}, as kube-apiserver sends.</li>
 *   <li>{@code allowWatchBookmarks=true}: the datastore's progress marks become BOOKMARK events.</li>
 *   <li>label and field selectors filter events by the new (or, for deletes, last) object.</li>
 * </ul>
 * The datastore's delivery thread only enqueues; the request thread writes, so a slow client
 * never stalls the datastore.
 *
 * <p>A client that goes away is noticed within about two keep-alive periods, not at the next
 * event: after {@link #DEFAULT_KEEPALIVE} of silence the stream writes one newline and flushes.
 * The servlet container learns of a closed connection only when a write fails (the first write
 * after the peer's close draws a reset, the next one fails), so the newline is what ends the
 * datastore watch and frees the request thread. Whitespace between the JSON events is what the
 * JSON stream framing of client-go (kubectl), and of libcalico's apiserver watch, skips.
 */
public final class WatchStreamer {

    private static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);
    /** Silence after which a watch writes a keep-alive newline; see the class comment. */
    public static final Duration DEFAULT_KEEPALIVE = Duration.ofSeconds(1);

    private final Datastore datastore;
    private final ObjectCodec codec;
    private final long keepAliveNanos;

    public WatchStreamer(Datastore datastore, ObjectCodec codec) {
        this(datastore, codec, DEFAULT_KEEPALIVE);
    }

    public WatchStreamer(Datastore datastore, ObjectCodec codec, Duration keepAlive) {
        if (keepAlive.isNegative() || keepAlive.isZero()) {
            throw new IllegalArgumentException("keepAlive: must be positive, got " + keepAlive);
        }
        this.datastore = datastore;
        this.codec = codec;
        this.keepAliveNanos = keepAlive.toNanos();
    }

    /** Checks what can be refused with a status code before the stream starts; returns the start revision (-1: list first). */
    public long startRevision(ApiRequest req) {
        String rv = req.param("resourceVersion");
        if (rv == null || rv.isEmpty() || rv.equals("0")) {
            return -1;
        }
        return ResourceVersion.parse(rv);
    }

    /**
     * Streams until the client goes, the timeout passes or the watch ends.
     *
     * @param visible further filter (authorization of tiered policies)
     */
    public void stream(ApiRequest req, long from, OutputStream out, Predicate<Resource> visible) throws IOException {
        String calicoSelector = LabelSelectors.toCalico(req.param("labelSelector"));
        Selector labels = calicoSelector == null ? Selector.all() : Admission.labelSelector(req.kind(), calicoSelector);
        FieldSelector fields = FieldSelector.parse(req.param("fieldSelector"), req.kind());
        Predicate<Resource> match = r -> r != null && labels.matches(r.metadata().labels()) && fields.matches(r)
                && (req.name() == null || req.name().equals(r.metadata().name())) && visible.test(r);
        boolean bookmarks = req.flag("allowWatchBookmarks");
        boolean table = Tables.wanted(req.accept());
        Duration timeout = timeout(req.param("timeoutSeconds"));
        long deadline = System.nanoTime() + timeout.toNanos();

        LinkedBlockingQueue<WatchEvent> queue = new LinkedBlockingQueue<>();
        long start = from;
        if (from < 0) {
            ListResult list = ResourceHandler.call(req.kind(), null,
                    () -> datastore.list(req.kind(), req.namespace(), null));
            for (Resource r : list.items()) {
                if (match.test(r)) {
                    write(out, "ADDED", object(r, table, req));
                }
            }
            out.flush();
            start = list.revision();
        }
        try (Watch ignored = datastore.watch(req.kind(), req.namespace(), start, queue::add)) {
            long lastWrite = System.nanoTime();
            while (System.nanoTime() < deadline) {
                WatchEvent e = queue.poll(Math.min(keepAliveNanos, TimeUnit.SECONDS.toNanos(1)), TimeUnit.NANOSECONDS);
                if (e == null) {
                    if (System.nanoTime() - lastWrite >= keepAliveNanos) {
                        out.write('\n');
                        out.flush(); // throws once the client has gone: the watch closes
                        lastWrite = System.nanoTime();
                    }
                    continue;
                }
                lastWrite = System.nanoTime();
                if (e instanceof WatchEvent.Added a) {
                    if (match.test(a.resource())) {
                        write(out, "ADDED", object(a.resource(), table, req));
                    }
                } else if (e instanceof WatchEvent.Modified m) {
                    boolean now = match.test(m.resource());
                    boolean was = m.previous() != null && match.test(m.previous());
                    if (now) {
                        write(out, "MODIFIED", object(m.resource(), table, req));
                    } else if (was) {
                        write(out, "DELETED", object(m.resource(), table, req));
                    }
                } else if (e instanceof WatchEvent.Deleted d) {
                    Resource last = d.previous();
                    if (last != null && match.test(last)) {
                        Resource gone = last.withMetadata(last.metadata().withResourceVersion(Long.toString(d.revision())));
                        write(out, "DELETED", object(gone, table, req));
                    }
                } else if (e instanceof WatchEvent.Bookmark b) {
                    if (bookmarks) {
                        ObjectNode o = codec.json().createObjectNode();
                        o.put("kind", req.kind().kind()).put("apiVersion", Resource.API_VERSION);
                        o.putObject("metadata").put("resourceVersion", Long.toString(b.revision()));
                        write(out, "BOOKMARK", o);
                    }
                } else if (e instanceof WatchEvent.Compacted c) {
                    write(out, "ERROR", ApiException.gone("too old resource version: " + from + " ("
                            + c.compactRevision() + ")").toStatus());
                    return;
                } else if (e instanceof WatchEvent.Failed f) {
                    write(out, "ERROR", ApiException.internal(f.error().getMessage()).toStatus());
                    return;
                }
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private JsonNode object(Resource r, boolean table, ApiRequest req) {
        ObjectNode tree = codec.toTree(r);
        return table ? Tables.table(List.of(tree), r.metadata().resourceVersion(), null,
                req.param("includeObject"), true) : tree;
    }

    private void write(OutputStream out, String type, JsonNode object) throws IOException {
        ObjectNode ev = codec.json().createObjectNode();
        ev.put("type", type);
        ev.set("object", object);
        out.write(codec.json().writeValueAsBytes(ev));
        out.write('\n');
    }

    private static Duration timeout(String s) {
        if (s == null || s.isEmpty()) {
            return DEFAULT_TIMEOUT;
        }
        try {
            return Duration.ofSeconds(Math.max(1, Long.parseLong(s)));
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("timeoutSeconds: Invalid value: \"" + s + "\"");
        }
    }
}
