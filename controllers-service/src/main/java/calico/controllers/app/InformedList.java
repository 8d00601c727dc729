package calico.controllers.app;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One Kubernetes kind for reconcile runs: while started, a fabric8 informer (its events trigger the
 * loop) whose cache a run reads instead of listing the kind again; not started, a list. A run waits
 * for the first sync rather than mixing a fresh list with a cache that may be older than it (an object
 * the list showed and the cache does not yet hold would look deleted).
 */
final class InformedList<T extends HasMetadata> implements AutoCloseable {

    private static final long SYNC_WAIT_SECONDS = 30;

    private final Supplier<List<T>> list;
    private final Function<ResourceEventHandler<T>, SharedIndexInformer<T>> inform;
    private volatile SharedIndexInformer<T> informer;

    InformedList(Supplier<List<T>> list, Function<ResourceEventHandler<T>, SharedIndexInformer<T>> inform) {
        this.list = list;
        this.inform = inform;
    }

    /** Starts the informer; each change of the kind calls {@code onChange}. */
    synchronized void start(Runnable onChange) {
        if (informer == null) {
            informer = inform.apply(new TriggerOnChange<>(onChange));
        }
    }

    /** {@return every object of the kind}: the informer's cache once synced, a list when not started. */
    List<T> items() {
        SharedIndexInformer<T> i = informer;
        if (i == null) {
            return list.get();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SYNC_WAIT_SECONDS);
        while (!i.hasSynced()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the informer has not synced within " + SYNC_WAIT_SECONDS + " s");
            }
            try {
                Thread.sleep(50); // the first sync after a start; fabric8 offers no wait that is safe to repeat
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the informer syncs", e);
            }
        }
        return i.getStore().list();
    }

    @Override
    public synchronized void close() {
        if (informer != null) {
            informer.close();
            informer = null;
        }
    }
}
