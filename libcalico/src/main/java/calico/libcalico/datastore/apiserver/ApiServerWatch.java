package calico.libcalico.datastore.apiserver;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchDelivery;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchListener;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One watch stream ({@code ?watch=true&resourceVersion=N}) translated to {@link WatchEvent}s.
 *
 * <p>A reader thread parses the JSON lines and hands events to a {@link WatchDelivery}, so the
 * listener sees them in order on one thread. The stream's revision position is the last event
 * or bookmark read. When the server ends a stream cleanly (its {@code timeoutSeconds}), the
 * watch reconnects from that position, which loses nothing: the server replays every change
 * after it or answers 410. Everything else ends the watch with exactly one terminal event, as
 * the other backends do: 410 (at connect or as an {@code ERROR} event) is {@code Compacted}; a
 * transport failure, a 5xx, an undecodable line or a failed reconnect is {@code Failed}.
 *
 * <p>Previous values: the Kubernetes watch protocol carries none, so {@code Modified} and
 * {@code Deleted} get the value this watch last delivered for the key, or {@code null} when the
 * resource was last written before the watch started (as the Kubernetes backend).
 */
final class ApiServerWatch implements Watch {

    private final ApiServerDatastore store;
    private final String name;
    private final ResourceKind kind;
    private final String namespace;
    private final WatchDelivery out;
    private final Consumer<ApiServerWatch> onClosed;
    private final Thread reader;
    /** Last values delivered, for {@code previous}; only the reader thread touches it. */
    private final Map<ResourceKey, Resource> seen = new HashMap<>();
    private volatile InputStream body;
    private volatile boolean stopped;
    /** Highest revision read; only the reader thread writes it after start. */
    private volatile long position;

    ApiServerWatch(ApiServerDatastore store, long id, ResourceKind kind, String namespace, WatchListener listener,
                   Consumer<ApiServerWatch> onClosed) {
        this.store = store;
        this.name = "apiserver-watch-" + kind.plural() + (namespace == null ? "" : "-" + namespace) + "-" + id;
        this.kind = kind;
        this.namespace = namespace;
        this.onClosed = onClosed;
        this.out = new WatchDelivery(name, listener);
        this.reader = new Thread(this::run, name + "-reader");
        this.reader.setDaemon(true);
    }

    /** Fixes the start position ("from now" is the revision at this call), then starts reading. */
    void start(long fromRevision) {
        if (fromRevision == 0) {
            try {
                position = store.currentRevision();
            } catch (DatastoreException e) {
                end(new WatchEvent.Failed(e, 0));
                return;
            }
        } else {
            position = fromRevision;
        }
        reader.start();
    }

    @Override
    public void close() {
        out.close(this::stopStream);
        onClosed.accept(this);
    }

    private void stopStream() {
        stopped = true;
        InputStream in = body;
        if (in != null) {
            try {
                in.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        if (Thread.currentThread() != reader) {
            reader.interrupt();
        }
    }

    private void end(WatchEvent terminal) {
        if (out.end(terminal, this::stopStream)) {
            onClosed.accept(this);
        }
    }

    private void run() {
        while (!stopped && !out.ended()) {
            HttpResponse<InputStream> response;
            try {
                response = store.openWatch(kind, namespace, position);
            } catch (DatastoreException e) {
                end(new WatchEvent.Failed(e, position));
                return;
            } catch (IllegalStateException e) {
                return; // the datastore closed
            }
            body = response.body();
            if (stopped) {
                stopStream();
                return;
            }
            if (response.statusCode() != 200) {
                byte[] bytes;
                try (InputStream in = response.body()) {
                    bytes = in.readAllBytes();
                } catch (IOException e) {
                    bytes = new byte[0];
                }
                DatastoreException error = store.failure(response.statusCode(), store.tree(bytes), null,
                        "watch " + kind.plural(), null);
                end(error instanceof DatastoreException.Compacted c
                        ? new WatchEvent.Compacted(c.compactRevision(), position)
                        : new WatchEvent.Failed(error, position));
                return;
            }
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    if (!line.isBlank() && !handle(line)) {
                        return;
                    }
                }
                // A clean end (the server's timeout): reconnect from the position, losing nothing.
            } catch (IOException e) {
                if (!stopped) {
                    end(new WatchEvent.Failed(new DatastoreException.Unavailable(
                            name + ": watch stream failed: " + e, e), position));
                }
                return;
            } catch (DatastoreException e) {
                end(new WatchEvent.Failed(e, position));
                return;
            }
        }
    }

    /** {@return false when the line ended the watch}. */
    private boolean handle(String line) throws IOException {
        JsonNode ev = store.json().readTree(line);
        String type = ev.path("type").asText("");
        JsonNode object = ev.path("object");
        switch (type) {
            case "ADDED", "MODIFIED", "DELETED" -> {
                Resource r = store.decode(object, name);
                long rev = ApiServerDatastore.revisionOf(object.path("metadata"), name);
                Resource previous = type.equals("DELETED") ? seen.remove(r.key()) : seen.put(r.key(), r);
                position = rev;
                out.deliver(switch (type) {
                    case "ADDED" -> new WatchEvent.Added(r, rev);
                    case "MODIFIED" -> new WatchEvent.Modified(r, previous, rev);
                    // A DELETED event carries the object's last state: known even if this watch never saw it.
                    default -> new WatchEvent.Deleted(r.key(), previous != null ? previous : r, rev);
                });
            }
            case "BOOKMARK" -> {
                long rev = Math.max(position, ApiServerDatastore.revisionOf(object.path("metadata"), name));
                position = rev;
                out.deliver(new WatchEvent.Bookmark(rev));
            }
            case "ERROR" -> {
                int code = object.path("code").asInt(500);
                if (code == 410) {
                    end(new WatchEvent.Compacted(ApiServerDatastore.compactRevision(
                            object.path("message").asText("")), position));
                } else {
                    end(new WatchEvent.Failed(new DatastoreException.Unavailable(name + ": the API server ended the "
                            + "watch: " + code + " " + object.path("message").asText(""), null), position));
                }
                return false;
            }
            default -> {
                end(new WatchEvent.Failed(new DatastoreException.Unavailable(name + ": unknown watch event type \""
                        + type + "\"", null), position));
                return false;
            }
        }
        return true;
    }
}
