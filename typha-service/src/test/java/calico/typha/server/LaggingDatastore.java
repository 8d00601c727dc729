package calico.typha.server;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A datastore whose watches can be held back: while paused, watch events are queued instead of
 * delivered, as for a typha whose watch connection is slow; {@link #resume()} delivers them in
 * order. Everything else goes straight to the delegate, which the caller closes.
 */
final class LaggingDatastore implements Datastore {

    private final Datastore delegate;
    private final Object lock = new Object();
    // Guarded by lock.
    private boolean paused;
    private final List<Runnable> held = new ArrayList<>();

    LaggingDatastore(Datastore delegate) {
        this.delegate = delegate;
    }

    void pause() {
        synchronized (lock) {
            paused = true;
        }
    }

    /** Delivers what was held, in order, and lets later events through. */
    void resume() {
        synchronized (lock) {
            held.forEach(Runnable::run);
            held.clear();
            paused = false;
        }
    }

    @Override
    public Watch watch(ResourceKind kind, String namespace, long fromRevision, WatchListener listener) {
        return delegate.watch(kind, namespace, fromRevision, event -> {
            synchronized (lock) {
                if (paused) {
                    held.add(() -> listener.onEvent(event));
                } else {
                    listener.onEvent(event);
                }
            }
        });
    }

    @Override
    public Optional<Resource> get(ResourceKey key) {
        return delegate.get(key);
    }

    @Override
    public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
        return delegate.list(kind, namespace, labelSelector);
    }

    @Override
    public ListResult listAt(ResourceKind kind, String namespace, String labelSelector, long revision) {
        return delegate.listAt(kind, namespace, labelSelector, revision);
    }

    @Override
    public Resource create(Resource resource) {
        return delegate.create(resource);
    }

    @Override
    public Resource update(Resource resource) {
        return delegate.update(resource);
    }

    @Override
    public Resource delete(ResourceKey key, String resourceVersion) {
        return delegate.delete(key, resourceVersion);
    }

    @Override
    public long currentRevision() {
        return delegate.currentRevision();
    }

    @Override
    public boolean presents(ResourceKind kind) {
        return delegate.presents(kind);
    }

    @Override
    public void close() {
    }
}
