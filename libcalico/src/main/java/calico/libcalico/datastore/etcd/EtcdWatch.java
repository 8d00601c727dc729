package calico.libcalico.datastore.etcd;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchDelivery;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchListener;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One etcd watch on a kind (or one namespace of it), translated to {@link WatchEvent}s.
 *
 * <p>Threading: jetcd calls {@link JetcdListener} on a Vert.x event-loop thread, which must never
 * block; this class only translates there and hands each event to a single-thread executor
 * owned by the watch, so the listener sees events in revision order, one at a time, and may
 * block without stalling other watches or the gRPC transport.
 *
 * <p>Termination: the first compaction, error or unexpected end of the stream queues exactly one
 * terminal event ({@code Compacted} or {@code Failed}) and closes the jetcd watcher, so jetcd
 * never silently re-establishes the stream behind the caller's back.
 */
final class EtcdWatch implements Watch {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdWatch.class);

    private final String name;
    private final ResourceKind kind;
    private final String namespace;
    private final long fromRevision;
    private final BiFunction<ResourceKind, KeyValue, Resource> decoder;
    private final Consumer<EtcdWatch> onClosed;
    // The listener's thread; ended once a terminal event is queued or close() is called.
    private final WatchDelivery out;
    private volatile io.etcd.jetcd.Watch.Watcher watcher;
    private volatile ScheduledFuture<?> progressTask;
    // Highest revision queued so far; written only from jetcd's (serialised) callbacks.
    private volatile long position;

    EtcdWatch(long id, ResourceKind kind, String namespace, long fromRevision, WatchListener listener,
              BiFunction<ResourceKind, KeyValue, Resource> decoder, Consumer<EtcdWatch> onClosed) {
        this.name = "etcd-watch-" + kind.plural() + (namespace == null ? "" : "-" + namespace) + "-" + id;
        this.kind = kind;
        this.namespace = namespace;
        this.fromRevision = fromRevision;
        this.position = fromRevision;
        this.decoder = decoder;
        this.onClosed = onClosed;
        this.out = new WatchDelivery(name, listener);
    }

    void start(io.etcd.jetcd.Watch client, ScheduledExecutorService timer, Duration progressInterval) {
        WatchOption option = WatchOption.builder()
                .isPrefix(true)
                .withRevision(fromRevision == 0 ? 0 : fromRevision + 1)
                .withPrevKV(true)
                .withProgressNotify(true)
                .build();
        try {
            watcher = client.watch(EtcdKeys.prefix(kind, namespace), option, new JetcdListener());
        } catch (RuntimeException e) {
            end(new WatchEvent.Failed(EtcdDatastore.translate("watch " + kind.plural(), e), position));
            return;
        }
        if (out.ended()) {
            watcher.close(); // failed before jetcd handed us the watcher
            return;
        }
        // etcd's own progress notifications come every ten minutes; ask for them more often.
        long ms = progressInterval.toMillis();
        try {
            progressTask = timer.scheduleAtFixedRate(this::requestProgress, ms, ms, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            close(); // the datastore is closing
            return;
        }
        if (out.ended()) {
            progressTask.cancel(false); // ended while we were scheduling: stopStream() may have missed it
        }
    }

    private void requestProgress() {
        io.etcd.jetcd.Watch.Watcher w = watcher;
        if (!out.ended() && w != null) {
            try {
                w.requestProgress();
            } catch (RuntimeException e) {
                LOG.debug("{}: progress request failed: {}", name, e.toString());
            }
        }
    }

    /**
     * Stops the stream and drops every event not yet handed to the listener. A callback already
     * running finishes (it may be the caller itself); none starts after this returns. Not
     * {@code shutdownNow()}: interrupting a listener that closes its own watch would break
     * whatever it does next.
     */
    @Override
    public void close() {
        out.close(this::stopStream);
        onClosed.accept(this);
    }

    private void stopStream() {
        ScheduledFuture<?> p = progressTask;
        if (p != null) {
            p.cancel(false);
        }
        io.etcd.jetcd.Watch.Watcher w = watcher;
        if (w != null) {
            w.close();
        }
    }

    private void deliver(WatchEvent event) {
        out.deliver(event);
    }

    /** Queues the terminal event (at most once), stops the stream and lets the delivery thread drain and exit. */
    private void end(WatchEvent terminal) {
        if (out.end(terminal, this::stopStream)) {
            onClosed.accept(this);
        }
    }

    private final class JetcdListener implements io.etcd.jetcd.Watch.Listener {

        @Override
        public void onNext(WatchResponse response) {
            if (out.ended()) {
                return;
            }
            if (response.isProgressNotify()) {
                long rev = Math.max(position, response.getHeader().getRevision());
                position = rev;
                deliver(new WatchEvent.Bookmark(rev));
                return;
            }
            for (io.etcd.jetcd.watch.WatchEvent e : response.getEvents()) {
                WatchEvent translated;
                try {
                    translated = translate(e);
                } catch (DatastoreException ex) {
                    end(new WatchEvent.Failed(ex, position));
                    return;
                }
                if (translated != null) {
                    position = translated.revision();
                    deliver(translated);
                }
            }
        }

        @Override
        public void onError(Throwable t) {
            if (t instanceof CompactedException c) {
                end(new WatchEvent.Compacted(c.getCompactedRevision(), position));
            } else {
                end(new WatchEvent.Failed(new DatastoreException.Unavailable(
                        name + ": watch stream failed: " + t.getMessage(), t), position));
            }
        }

        @Override
        public void onCompleted() {
            // jetcd also calls this when we close the watcher; then ended is already set.
            end(new WatchEvent.Failed(new DatastoreException.Unavailable(
                    name + ": watch stream ended by the server", null), position));
        }
    }

    private WatchEvent translate(io.etcd.jetcd.watch.WatchEvent e) {
        KeyValue kv = e.getKeyValue();
        Optional<ResourceKey> key = EtcdKeys.parse(kv.getKey());
        if (key.isEmpty()) {
            return null; // not a resource key under this prefix
        }
        KeyValue prevKv = e.getPrevKV();
        Resource previous = prevKv == null || prevKv.getKey().isEmpty() ? null : decoder.apply(kind, prevKv);
        long rev = kv.getModRevision();
        switch (e.getEventType()) {
            case PUT:
                Resource r = decoder.apply(kind, kv);
                return kv.getCreateRevision() == kv.getModRevision()
                        ? new WatchEvent.Added(r, rev)
                        : new WatchEvent.Modified(r, previous, rev);
            case DELETE:
                return new WatchEvent.Deleted(key.get(), previous, rev);
            default:
                LOG.warn("{}: ignoring unrecognised etcd event type at revision {}", name, rev);
                return null;
        }
    }
}
