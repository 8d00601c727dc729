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
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
 * {@code Compacted}, unless the watch cache says it starts after the source's position while
 * etcd still has the revisions between: then the changes between are read from two exact lists
 * and the source's stream opens again where the cache starts ({@link #gone}). Any other end of
 * a Kubernetes watch that fabric8 does not resume on its own queues {@code Failed}. Exactly one
 * terminal event, nothing after it, nothing after close.
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

    /**
     * Reads one source at exactly a revision (from etcd's history); empty once that revision is
     * compacted.
     */
    @FunctionalInterface
    interface Lister {
        Optional<List<GenericKubernetesResource>> listAt(Source source, long revision);
    }

    /** How many times one source's start may be bridged (a watch cache that starts again and again). */
    private static final int BRIDGES = 3;

    private final String name;
    private final List<Source> sources;
    private final long fromRevision;
    private final Reader reader;
    private final Consumer<KubernetesWatch> onClosed;
    private final WatchDelivery out;
    private final List<io.fabric8.kubernetes.client.Watch> streams = new ArrayList<>();
    // Set by start(), before any stream opens.
    private Opener opener;
    private Lister lister;
    private Duration watchTimeout;
    private volatile ScheduledFuture<?> bookmarkTask;

    // Guarded by this: the last value delivered per key (for Modified/Deleted.previous) and each source's position.
    private final Map<ResourceKey, Resource> last = new HashMap<>();
    private final long[] positions;
    private final int[] bridges;

    KubernetesWatch(long id, ResourceKind kind, String namespace, long fromRevision, List<Source> sources,
                    WatchListener listener, Reader reader, Consumer<KubernetesWatch> onClosed) {
        this.name = "k8s-watch-" + kind.plural() + (namespace == null ? "" : "-" + namespace) + "-" + id;
        this.sources = List.copyOf(sources);
        this.fromRevision = fromRevision;
        this.reader = reader;
        this.onClosed = onClosed;
        this.positions = new long[sources.size()];
        Arrays.fill(positions, fromRevision);
        this.bridges = new int[sources.size()];
        this.out = new WatchDelivery(name, listener);
    }

    /** @param watchTimeout each stream's {@code timeoutSeconds} (fabric8 resumes it after), or null for the server's */
    void start(Opener opener, Lister lister, ScheduledExecutorService timer, Duration bookmarkInterval,
               Duration watchTimeout) {
        this.opener = opener;
        this.lister = lister;
        this.watchTimeout = watchTimeout;
        for (int i = 0; i < sources.size(); i++) {
            open(i, fromRevision);
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

    /** Opens source {@code i}'s stream from {@code from}; a refusal ends the watch, or is bridged (see {@link #gone}). */
    private void open(int i, long from) {
        Source source = sources.get(i);
        ListOptionsBuilder options = new ListOptionsBuilder().withResourceVersion(Long.toString(from))
                .withAllowWatchBookmarks(true);
        if (watchTimeout != null) {
            options.withTimeoutSeconds(watchTimeout.toSeconds());
        }
        io.fabric8.kubernetes.client.Watch stream;
        try {
            stream = opener.open(source, options.build(), new SourceWatcher(i));
        } catch (KubernetesClientException e) {
            if (isGone(e)) {
                long to = gone(i, e.getMessage());
                if (to > 0) {
                    bridge(i, from, to);
                }
            } else {
                end(new WatchEvent.Failed(new DatastoreException.Unavailable(
                        name + ": cannot watch " + source.describe() + ": " + e.getMessage(), e), fromRevision));
            }
            return;
        }
        synchronized (this) {
            if (!out.ended()) {
                streams.add(stream);
                return;
            }
        }
        stream.close();
    }

    /**
     * Source {@code i}'s stream was refused its revision (410). The API server's watch cache of a
     * resource may have started after a revision a list just reported: a list while the cache is
     * not ready (its first request, or after its CRD's spec changed) is read from etcd, and the
     * cache then starts at the revision of its own first read, refusing older ones ({@code too old
     * resource version: R (C)}). The changes between are still in etcd's history, so the source
     * is bridged to C ({@link #bridge}) rather than the watch ended. {@return C to bridge to}, or
     * -1 when the watch has ended with {@code Compacted}.
     */
    private synchronized long gone(int i, String message) {
        long to = cacheStart(message);
        if (out.ended() || to <= positions[i] || bridges[i] == BRIDGES) {
            end(compacted(message));
            return -1;
        }
        bridges[i]++;
        return to;
    }

    /** Delivers source {@code i}'s changes after {@code from} up to {@code to}, then opens its stream from {@code to}. */
    private void bridge(int i, long from, long to) {
        if (deliverBetween(i, from, to)) {
            open(i, to);
        } else {
            end(new WatchEvent.Compacted(to, position()));
        }
    }

    /**
     * Delivers source {@code i}'s changes after {@code from} up to {@code to} as its watch would
     * have: what the list at {@code to} holds that changed after {@code from} (in revision order),
     * then what it no longer holds (deleted at {@code to} at the latest). {@return false} when
     * either revision is no longer readable.
     */
    private boolean deliverBetween(int i, long from, long to) {
        Source source = sources.get(i);
        Optional<List<GenericKubernetesResource>> before;
        Optional<List<GenericKubernetesResource>> after;
        try {
            before = lister.listAt(source, from);
            after = before.isEmpty() ? Optional.empty() : lister.listAt(source, to);
        } catch (RuntimeException e) {
            LOG.info("{}: cannot read {} at revisions {} and {}: {}", name, source.describe(), from, to, e.getMessage());
            return false;
        }
        if (after.isEmpty()) {
            return false;
        }
        Map<String, GenericKubernetesResource> was = new HashMap<>();
        before.get().forEach(o -> was.put(objectName(o), o));
        List<Change> changes = new ArrayList<>();
        for (GenericKubernetesResource o : after.get()) {
            GenericKubernetesResource old = was.remove(objectName(o));
            if (old == null) {
                changes.add(new Change(Watcher.Action.ADDED, o));
            } else if (!Objects.equals(old.getMetadata().getUid(), o.getMetadata().getUid())) {
                changes.add(new Change(Watcher.Action.DELETED, deletedAt(old, revision(o)))); // and made again
                changes.add(new Change(Watcher.Action.ADDED, o));
            } else if (revision(o) > from) {
                changes.add(new Change(Watcher.Action.MODIFIED, o));
            }
        }
        was.values().forEach(o -> changes.add(new Change(Watcher.Action.DELETED, deletedAt(o, to))));
        changes.sort(Comparator.comparingLong(c -> revision(c.object())));
        LOG.info("{}: the API server's watch cache of {} starts at revision {}, after {}: {} change(s) in between"
                + " delivered from its history", name, source.describe(), to, from, changes.size());
        synchronized (this) {
            changes.forEach(c -> received(i, c.action(), c.object()));
            positions[i] = Math.max(positions[i], to);
        }
        return true;
    }

    /** One change the bridge delivers. */
    private record Change(Watcher.Action action, GenericKubernetesResource object) {
    }

    /** {@return a copy of {@code o} as a DELETED event carries it}: its last state, at the deletion's revision */
    private static GenericKubernetesResource deletedAt(GenericKubernetesResource o, long revision) {
        return new GenericKubernetesResourceBuilder(o).editMetadata().withResourceVersion(Long.toString(revision))
                .endMetadata().build();
    }

    private static String objectName(GenericKubernetesResource o) {
        return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
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
            long from = positions[source];
            long to = gone(source, e.getMessage());
            if (to > 0) {
                // Off fabric8's thread: the bridge reads two lists, then opens the stream again.
                Thread t = new Thread(() -> bridge(source, from, to), name + "-bridge");
                t.setDaemon(true);
                t.start();
            }
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
        long cacheStart = cacheStart(message);
        return new WatchEvent.Compacted(cacheStart > 0 ? cacheStart : position() + 1, position());
    }

    /** {@return C of the watch cache's "too old resource version: R (C)"}, or -1 when the message does not say */
    private static long cacheStart(String message) {
        Matcher m = message == null ? null : TOO_OLD.matcher(message);
        return m != null && m.find() ? Long.parseLong(m.group(1)) : -1;
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
