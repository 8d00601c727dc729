package calico.libcalico.datastore.kubernetes;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchDelivery;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchListener;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One watch on a Calico kind: one Kubernetes watch per {@link Source} of the kind, all from the
 * same revision, translated into {@link WatchEvent}s on one delivery thread.
 *
 * <p>Threading: fabric8 calls each {@link Watcher} on its own serial executor; translation runs
 * under this object's lock (the sources share the previous-value map and the positions) and
 * only queues; the listener runs on this watch's single delivery thread, one event at a time.
 *
 * <p>Order: the events of one source arrive in revision order. The events of two sources (a
 * Namespace and a ServiceAccount, a Calico and a Kubernetes NetworkPolicy) interleave in arrival
 * order, which may differ from revision order. That is why a multi-source watch that breaks
 * ends with {@code Compacted} (list again), never with {@code Failed}: resuming every source from
 * the highest revision delivered could skip an event another source had not delivered yet.
 *
 * <p>Bookmarks: every {@code bookmarkInterval} (and once at the start) the watch delivers
 * {@code Bookmark(p)}, where p is the lowest of the sources' positions (the last revision each
 * delivered, or the start): each source's events come in order, so every change up to p has
 * been queued before the bookmark.
 *
 * <p>Termination: a 410 Gone (the start revision is older than the API server keeps) queues
 * {@code Compacted}; any other end of a Kubernetes watch that fabric8 does not resume on its
 * own queues {@code Failed}. Exactly one terminal event, nothing after it, nothing after close.
 */
final class KubernetesWatch implements Watch {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesWatch.class);
    /** The watch cache's 410 message, "too old resource version: 5 (12)": a watch from 12 (the second number) would work. */
    private static final Pattern TOO_OLD = Pattern.compile("too old resource version: \\d+ \\((\\d+)\\)");

    /** What one watched object presents; never fails (an invalid object presents nothing, its keys absent). */
    @FunctionalInterface
    interface Reader {
        Converted read(Source source, GenericKubernetesResource obj, boolean deleted);
    }

    /** Opens one Kubernetes watch. */
    @FunctionalInterface
    interface Opener {
        io.fabric8.kubernetes.client.Watch open(Source source, ListOptions options,
                                                Watcher<GenericKubernetesResource> watcher);
    }

    private final String name;
    private final List<Source> sources;
    private final long fromRevision;
    private final Reader reader;
    private final Consumer<KubernetesWatch> onClosed;
    private final WatchDelivery out;
    private final List<io.fabric8.kubernetes.client.Watch> streams = new ArrayList<>();
    private volatile ScheduledFuture<?> bookmarkTask;

    // Guarded by this: the last value delivered per key (for Modified/Deleted.previous) and each source's position.
    private final Map<ResourceKey, Resource> last = new HashMap<>();
    private final long[] positions;

    KubernetesWatch(long id, ResourceKind kind, String namespace, long fromRevision, List<Source> sources,
                    WatchListener listener, Reader reader, Consumer<KubernetesWatch> onClosed) {
        this.name = "k8s-watch-" + kind.plural() + (namespace == null ? "" : "-" + namespace) + "-" + id;
        this.sources = List.copyOf(sources);
        this.fromRevision = fromRevision;
        this.reader = reader;
        this.onClosed = onClosed;
        this.positions = new long[sources.size()];
        Arrays.fill(positions, fromRevision);
        this.out = new WatchDelivery(name, listener);
    }

    /** @param watchTimeout each stream's {@code timeoutSeconds} (fabric8 resumes it after), or null for the server's */
    void start(Opener opener, ScheduledExecutorService timer, Duration bookmarkInterval, Duration watchTimeout) {
        ListOptionsBuilder builder = new ListOptionsBuilder()
                .withResourceVersion(Long.toString(fromRevision))
                .withAllowWatchBookmarks(true);
        if (watchTimeout != null) {
            builder.withTimeoutSeconds(watchTimeout.toSeconds());
        }
        ListOptions options = builder.build();
        for (int i = 0; i < sources.size(); i++) {
            Source source = sources.get(i);
            try {
                io.fabric8.kubernetes.client.Watch stream = opener.open(source, options, new SourceWatcher(i));
                synchronized (this) {
                    streams.add(stream);
                }
            } catch (KubernetesClientException e) {
                if (isGone(e)) {
                    end(compacted(e.getMessage()));
                } else {
                    end(new WatchEvent.Failed(new DatastoreException.Unavailable(
                            name + ": cannot watch " + source.describe() + ": " + e.getMessage(), e), fromRevision));
                }
            }
            if (out.ended()) {
                stopStreams();
                return;
            }
        }
        sendBookmark();
        long ms = bookmarkInterval.toMillis();
        try {
            bookmarkTask = timer.scheduleAtFixedRate(this::sendBookmark, ms, ms, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            close(); // the datastore is closing
            return;
        }
        if (out.ended()) {
            bookmarkTask.cancel(false);
        }
    }

    @Override
    public void close() {
        out.close(this::stopStreams);
        onClosed.accept(this);
    }

    private synchronized void sendBookmark() {
        if (!out.ended()) {
            deliver(new WatchEvent.Bookmark(Arrays.stream(positions).min().orElse(fromRevision)));
        }
    }

    /** Translates one Kubernetes event into Calico events and queues them; runs on fabric8's thread for the source. */
    private synchronized void received(int source, Watcher.Action action, GenericKubernetesResource obj) {
        if (out.ended()) {
            return;
        }
        if (action == Watcher.Action.BOOKMARK) {
            positions[source] = Math.max(positions[source], revision(obj));
            return;
        }
        if (action == Watcher.Action.ERROR) {
            end(new WatchEvent.Failed(new DatastoreException.Unavailable(name + ": watch error event", null),
                    position()));
            return;
        }
        long rev;
        try {
            rev = revision(obj);
        } catch (DatastoreException.Invalid bad) {
            LOG.warn("{}: skipping {} event: {}", name, action, bad.getMessage()); // never from an etcd-backed server
            return;
        }
        Converted c = reader.read(sources.get(source), obj, action == Watcher.Action.DELETED);
        positions[source] = Math.max(positions[source], rev);
        if (action == Watcher.Action.DELETED) {
            for (Resource r : c.present()) {
                // The API server's DELETED event carries the object's last state: known even when this
                // watch never delivered it (written before the watch's start revision).
                Resource previous = last.remove(r.key());
                deliver(new WatchEvent.Deleted(r.key(), previous != null ? previous : r, rev));
            }
            for (ResourceKey k : c.absent()) {
                Resource previous = last.remove(k);
                deliver(new WatchEvent.Deleted(k, previous, rev));
            }
            return;
        }
        for (Resource r : c.present()) {
            Resource previous = last.put(r.key(), r);
            deliver(action == Watcher.Action.ADDED && previous == null
                    ? new WatchEvent.Added(r, rev)
                    : new WatchEvent.Modified(r, previous, rev));
        }
        for (ResourceKey k : c.absent()) {
            Resource previous = last.remove(k);
            if (previous != null || action == Watcher.Action.MODIFIED) {
                deliver(new WatchEvent.Deleted(k, previous, rev));
            }
        }
    }

    private synchronized void streamClosed(int source, WatcherException e) {
        if (out.ended()) {
            return;
        }
        if (e != null && e.isHttpGone()) {
            end(compacted(e.getMessage()));
        } else if (sources.size() > 1) {
            LOG.info("{}: the {} watch ended ({}); ending with Compacted so that the caller lists again",
                    name, sources.get(source).describe(), e == null ? "closed by the server" : e.getMessage());
            end(new WatchEvent.Compacted(position(), position()));
        } else {
            end(new WatchEvent.Failed(new DatastoreException.Unavailable(name + ": watch ended: "
                    + (e == null ? "closed by the server" : e.getMessage()), e), position()));
        }
    }

    private WatchEvent.Compacted compacted(String message) {
        // The oldest revision the server still has, when its message says so (the watch cache's
        // does; etcd's own "The resourceVersion for the provided watch is too old." does not):
        // else the first one after where we stood, which is certainly gone.
        long oldest = position() + 1;
        Matcher m = message == null ? null : TOO_OLD.matcher(message);
        if (m != null && m.find()) {
            oldest = Long.parseLong(m.group(1));
        }
        return new WatchEvent.Compacted(oldest, position());
    }

    /** The highest revision delivered: where the caller resumes a single-source watch. */
    private synchronized long position() {
        return Arrays.stream(positions).max().orElse(fromRevision);
    }

    private void deliver(WatchEvent event) {
        out.deliver(event);
    }

    private void end(WatchEvent terminal) {
        if (out.end(terminal, this::stopStreams)) {
            onClosed.accept(this);
        }
    }

    private void stopStreams() {
        ScheduledFuture<?> b = bookmarkTask;
        if (b != null) {
            b.cancel(false);
        }
        List<io.fabric8.kubernetes.client.Watch> open;
        synchronized (this) {
            open = List.copyOf(streams);
            streams.clear();
        }
        for (io.fabric8.kubernetes.client.Watch s : open) {
            try {
                s.close();
            } catch (RuntimeException e) {
                LOG.debug("{}: closing a stream: {}", name, e.toString());
            }
        }
    }

    private static long revision(GenericKubernetesResource obj) {
        String rv = obj == null || obj.getMetadata() == null ? null : obj.getMetadata().getResourceVersion();
        try {
            return Long.parseLong(rv);
        } catch (NumberFormatException | NullPointerException e) {
            throw new DatastoreException.Invalid(new calico.api.validation.ValidationException("watch event",
                    List.of(new calico.api.validation.FieldError("metadata.resourceVersion",
                            "\"" + rv + "\" is not a number"))));
        }
    }

    private static boolean isGone(KubernetesClientException e) {
        return e.getCode() == HttpURLConnection.HTTP_GONE
                || (e.getStatus() != null && Integer.valueOf(HttpURLConnection.HTTP_GONE).equals(e.getStatus().getCode()));
    }

    private final class SourceWatcher implements Watcher<GenericKubernetesResource> {
        private final int source;

        SourceWatcher(int source) {
            this.source = source;
        }

        @Override
        public void eventReceived(Action action, GenericKubernetesResource resource) {
            received(source, action, resource);
        }

        @Override
        public void onClose(WatcherException cause) {
            streamClosed(source, cause);
        }

        @Override
        public void onClose() {
            // Our own close(); nothing to report.
        }
    }
}
