package calico.typha.server;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchListener;
import calico.libcalico.testing.ForwardingDatastore;
import java.util.ArrayList;
import java.util.List;

/**
 * A datastore whose watches can be held back: while paused, watch events are queued instead of
 * delivered, as for a typha whose watch connection is slow; {@link #resume()} delivers them in
 * order. Everything else goes straight to the delegate, which the caller closes.
 */
final class LaggingDatastore extends ForwardingDatastore {

    private final Object lock = new Object();
    // Guarded by lock.
    private boolean paused;
    private final List<Runnable> held = new ArrayList<>();

    LaggingDatastore(Datastore delegate) {
        super(delegate);
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
        return super.watch(kind, namespace, fromRevision, event -> {
            synchronized (lock) {
                if (paused) {
                    held.add(() -> listener.onEvent(event));
                } else {
                    listener.onEvent(event);
                }
            }
        });
    }
}
