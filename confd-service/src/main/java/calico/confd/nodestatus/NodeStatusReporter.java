package calico.confd.nodestatus;

import calico.api.model.CalicoNodeStatus;
import calico.api.model.CalicoNodeStatusSpec;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.bird.NodeStatusReader;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.WatcherSyncer;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * calico-node's CalicoNodeStatus reporter (Calico's {@code calico-node -status-reporter}): watches
 * the CalicoNodeStatus resources, and for each one whose {@code spec.node} is this node writes
 * the requested classes read from BIRD, at once and then every {@code updatePeriodSeconds}; 0
 * stops the updates (the last status stays). A change of the spec (classes, period) reschedules
 * at once; our own status writes, which come back through the watch with the same spec, do not.
 *
 * <p>Threads: the syncer's dispatch thread only schedules; one reporter thread reads BIRD and
 * writes, so two reports of one resource never overlap.
 */
public final class NodeStatusReporter implements SyncerCallbacks, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NodeStatusReporter.class);

    private final Datastore store;
    private final String node;
    private final NodeStatusReader reader;
    private final Clock clock;
    private final ScheduledExecutorService worker;
    private final WatcherSyncer syncer;
    /** By resource name: the spec being reported and its task. Touched on the syncer's thread only. */
    private final Map<String, Scheduled> scheduled = new HashMap<>();

    /** A spec and its task; no task for period 0 (kept, so that the same spec is not scheduled again). */
    private record Scheduled(CalicoNodeStatusSpec spec, ScheduledFuture<?> task) {
        void cancel() {
            if (task != null) {
                task.cancel(false);
            }
        }
    }

    public NodeStatusReporter(Datastore store, String node, NodeStatusReader reader, Clock clock) {
        this.store = store;
        this.node = node;
        this.reader = reader;
        this.clock = clock;
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "node-status-reporter");
            t.setDaemon(true);
            return t;
        });
        this.syncer = new WatcherSyncer(store, Set.of(ResourceKind.CALICO_NODE_STATUS), this);
    }

    public void start() {
        syncer.start();
    }

    @Override
    public void onStatusUpdated(SyncerStatus status) {
        // Nothing waits for the first snapshot: each resource is scheduled as it arrives.
    }

    @Override
    public void onUpdates(List<Update> updates) {
        for (Update u : updates) {
            String name = u.key().name();
            CalicoNodeStatusSpec spec = u.value() instanceof CalicoNodeStatus s && node.equals(nodeOf(s)) ? s.spec() : null;
            Scheduled current = scheduled.get(name);
            if (current != null && current.spec().equals(spec)) {
                continue; // our own status write, or a label change: same schedule
            }
            if (current != null) {
                current.cancel();
                scheduled.remove(name);
            }
            if (spec == null || spec.updatePeriodSeconds() == null) {
                continue;
            }
            ScheduledFuture<?> task = spec.updatePeriodSeconds() == 0
                    ? null
                    : worker.scheduleWithFixedDelay(() -> report(u.key(), spec), 0, spec.updatePeriodSeconds(),
                            TimeUnit.SECONDS);
            scheduled.put(name, new Scheduled(spec, task));
        }
    }

    private static String nodeOf(CalicoNodeStatus s) {
        return s.spec() == null ? null : s.spec().node();
    }

    /** One report: BIRD read for the classes asked, written on the version just read (a conflict waits for the next period). */
    private void report(ResourceKey key, CalicoNodeStatusSpec spec) {
        try {
            var stored = store.get(key);
            if (stored.isEmpty() || !(stored.get() instanceof CalicoNodeStatus s) || !spec.equals(s.spec())) {
                return; // gone or changed: the watch brings the new schedule
            }
            store.updateStatus(s.withStatus(reader.read(spec.classes(), clock.instant())));
        } catch (DatastoreException e) {
            log.warn("CalicoNodeStatus {}: status not written ({}); next try in {} s", key.name(), e.getMessage(),
                    spec.updatePeriodSeconds());
        } catch (RuntimeException e) {
            log.warn("CalicoNodeStatus {}: status not written", key.name(), e);
        }
    }

    @Override
    public void close() {
        syncer.close();
        worker.shutdownNow();
    }
}
