package calico.controllers.reconcile;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a watch of one datastore kind open and calls {@code trigger} on every change. A watch that
 * ends (compacted, failed) or cannot open is reopened from now a second later and triggers once,
 * since changes may have been missed; reconcilers read the current state themselves, so nothing
 * else is needed.
 */
public final class DatastoreTrigger implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DatastoreTrigger.class);

    private final Datastore datastore;
    private final ResourceKind kind;
    private final Runnable trigger;
    private final ScheduledExecutorService reopener;
    private Watch watch;
    private boolean closed;

    public DatastoreTrigger(Datastore datastore, ResourceKind kind, Runnable trigger) {
        this.datastore = datastore;
        this.kind = kind;
        this.trigger = trigger;
        this.reopener = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "watch-" + kind.plural());
            t.setDaemon(true);
            return t;
        });
    }

    public void start() {
        open();
    }

    private synchronized void open() {
        if (closed) {
            return;
        }
        try {
            watch = datastore.watch(kind, null, 0, this::onEvent);
            trigger.run();
        } catch (RuntimeException e) {
            LOG.warn("watch of {} failed to open, retrying: {}", kind.kind(), e.toString());
            reopener.schedule(this::open, 1, TimeUnit.SECONDS);
        }
    }

    private void onEvent(WatchEvent e) {
        if (e instanceof WatchEvent.Compacted || e instanceof WatchEvent.Failed) {
            LOG.info("watch of {} ended ({}), reopening", kind.kind(), e);
            reopener.schedule(this::open, 1, TimeUnit.SECONDS);
        } else if (!(e instanceof WatchEvent.Bookmark)) {
            trigger.run();
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (watch != null) {
            watch.close();
        }
        reopener.shutdownNow();
    }
}
