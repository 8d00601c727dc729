package calico.libcalico.syncer;

import static calico.libcalico.datastore.memory.TestResources.globalSet;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Figures for the memory datastore and the syncer (not a test; run with
 * {@code bench/run.sh libcalico calico.libcalico.syncer.SyncerBench [resources]}):
 * write rate with and without watches, time to IN_SYNC over a preloaded store, and live
 * write-to-callback throughput through the syncer.
 */
public final class SyncerBench {

    private static final ResourceKind GNS = ResourceKind.GLOBAL_NETWORK_SET;

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        for (int round = 1; round <= 2; round++) {
            System.out.println("round " + round + " (n=" + n + ")");
            writes(n, 0);
            writes(n, 4);
            syncer(n);
        }
    }

    private static void writes(int n, int watches) throws Exception {
        try (MemoryDatastore ds = new MemoryDatastore()) {
            AtomicLong delivered = new AtomicLong();
            CountDownLatch all = new CountDownLatch(watches);
            List<Watch> open = new ArrayList<>();
            for (int i = 0; i < watches; i++) {
                open.add(ds.watch(GNS, null, 0, e -> {
                    if (delivered.incrementAndGet() % n == 0) {
                        all.countDown();
                    }
                }));
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                ds.create(globalSet("w" + i, "10.0.0.0/16"));
            }
            long written = System.nanoTime() - t0;
            all.await(60, TimeUnit.SECONDS);
            long drained = System.nanoTime() - t0;
            System.out.printf("  memory creates, %d watches: %,.0f writes/s; all events delivered after %d ms%n",
                    watches, n / (written / 1e9), drained / 1_000_000);
            open.forEach(Watch::close);
        }
    }

    private static void syncer(int n) throws Exception {
        try (MemoryDatastore ds = new MemoryDatastore()) {
            for (int i = 0; i < n; i++) {
                ds.create(globalSet("s" + i, "10.0.0.0/16"));
            }
            CountDownLatch inSync = new CountDownLatch(1);
            AtomicLong updates = new AtomicLong();
            CountDownLatch live = new CountDownLatch(1);
            SyncerCallbacks cb = new SyncerCallbacks() {
                @Override
                public void onStatusUpdated(SyncerStatus status) {
                    if (status == SyncerStatus.IN_SYNC) {
                        inSync.countDown();
                    }
                }

                @Override
                public void onUpdates(List<Update> batch) {
                    if (updates.addAndGet(batch.size()) == 2L * n) {
                        live.countDown();
                    }
                }
            };
            long t0 = System.nanoTime();
            try (WatcherSyncer syncer = new WatcherSyncer(ds, Set.of(GNS), cb)) {
                syncer.start();
                inSync.await(60, TimeUnit.SECONDS);
                long snapshot = System.nanoTime() - t0;
                long t1 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    ds.update(globalSet("s" + i, "10.1.0.0/16"));
                }
                live.await(60, TimeUnit.SECONDS);
                long liveNanos = System.nanoTime() - t1;
                System.out.printf("  syncer: IN_SYNC over %d resources after %d ms; %d live updates delivered in %d ms"
                        + " (%,.0f updates/s end to end)%n", n, snapshot / 1_000_000, n, liveNanos / 1_000_000,
                        n / (liveNanos / 1e9));
            }
        }
    }
}
