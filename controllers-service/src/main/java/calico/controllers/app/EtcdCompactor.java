package calico.controllers.app;

import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import java.time.Duration;

/**
 * Calico's etcd compaction ({@code etcdV3CompactionPeriod}, etcd datastore only): one step of
 * {@link EtcdDatastore#compact} per period, so history older than about one period is compacted away.
 */
final class EtcdCompactor implements AutoCloseable {

    private final EtcdDatastore etcd;
    private final ReconcileLoop loop;
    /** Only the loop's thread touches it. */
    private EtcdDatastore.Compaction state = EtcdDatastore.Compaction.first();

    EtcdCompactor(EtcdDatastore etcd, Duration period, LoopWatch loops) {
        this.etcd = etcd;
        this.loop = new ReconcileLoop("compaction", period, Duration.ofSeconds(1), this::step, loops);
    }

    void start() {
        loop.start();
    }

    private void step() {
        state = etcd.compact(state);
    }

    @Override
    public void close() {
        loop.close();
    }
}
