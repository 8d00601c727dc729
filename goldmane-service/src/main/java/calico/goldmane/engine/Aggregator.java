package calico.goldmane.engine;

import calico.goldmane.store.Buckets;
import calico.goldmane.store.FlowStore;
import calico.goldmane.store.Intake;
import calico.goldmane.store.Update;
import calico.goldmane.store.Window;
import calico.libcalico.goldmane.proto.Flow;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single writer. One thread owns the {@link FlowStore}: it drains the ingest queue in
 * batches, runs scan slices between batches, and rolls the ring over when the clock crosses a
 * bucket boundary. Other threads only enqueue (flows, barriers, tasks) and wait on futures.
 *
 * <p>Invariant: no code outside the writer thread touches the store; a scan slice visits at most
 * {@code sliceKeys} keys, so ingestion waits at most one slice (about a millisecond) for a query.
 */
public final class Aggregator implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Aggregator.class);
    private static final int MAX_BATCH = 4096;
    /**
     * Batch bound while scans wait: ingest and scan slices then alternate about evenly, so a
     * query under full ingest load takes a few times its own cost, not one 4096-flow batch per
     * slice (at 2048 keys a slice, a List over 20,000 keys needed ten such batches).
     */
    private static final int SCAN_BATCH = 512;

    private sealed interface Item permits Ingest, Barrier, Wake {
    }

    private record Ingest(Update update, String node, AckSink ack, long seq) implements Item {
    }

    private record Barrier(CompletableFuture<Void> done) implements Item {
    }

    private record Wake() implements Item {
    }

    private static final Wake WAKE = new Wake();

    private final FlowStore store;
    /** The store's thread-safe part: producers prepare flows (keys and labels interned) before queueing. */
    private final Intake intake;
    private final Clock clock;
    private final int sliceKeys;
    private final ArrayBlockingQueue<Item> queue;
    private final ConcurrentLinkedQueue<Runnable> inbox = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Running<?>> tasks = new ArrayDeque<>();
    private final List<WindowListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final IngestStats stats;
    private final Thread writer;
    private volatile boolean running;

    /**
     * @param store      the ring, handed over to the writer thread
     * @param clock      decides rollover
     * @param queueSize  ingest queue bound; a full queue makes producers wait
     * @param sliceKeys  keys per scan slice
     */
    public Aggregator(FlowStore store, Clock clock, int queueSize, int sliceKeys, IngestStats stats) {
        this.store = store;
        this.intake = store.intake();
        this.clock = clock;
        this.sliceKeys = sliceKeys;
        this.queue = new ArrayBlockingQueue<>(queueSize);
        this.stats = stats;
        this.writer = new Thread(this::run, "goldmane-writer");
        this.writer.setDaemon(true);
    }

    /** {@return flows and barriers waiting in the ingest queue} (Calico's goldmane_aggr_flow_index_buffer_size) */
    public int queued() {
        return queue.size();
    }

    public void addListener(WindowListener l) {
        listeners.add(l);
    }

    public Buckets buckets() {
        return store.buckets();
    }

    public synchronized void start() {
        if (!running) {
            running = true;
            writer.start();
        }
    }

    /**
     * Queues a flow, waiting up to {@code timeoutMillis} for room. The flow is prepared here, on
     * the caller's thread (key and labels interned), so the writer does no hashing or deep
     * comparison of keys and labels.
     *
     * @param node reporting node for de-duplication, or null
     * @param ack  told once the flow is handled, or null
     * @return false when the queue stayed full
     */
    public boolean ingest(Flow flow, String node, AckSink ack, long seq, long timeoutMillis)
            throws InterruptedException {
        return queue.offer(new Ingest(intake.prepare(flow), node, ack, seq), timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** {@return a future completed once every flow queued before this call is in the store} */
    public CompletableFuture<Void> flush() {
        var done = new CompletableFuture<Void>();
        try {
            queue.put(new Barrier(done));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            done.completeExceptionally(e);
        }
        return done;
    }

    /** Runs a scan in slices on the writer; the future completes with {@link ScanTask#finish()}'s value. */
    public <T> CompletableFuture<T> submit(ScanTask<T> task) {
        var r = new Running<>(task);
        inbox.add(() -> tasks.add(r));
        queue.offer(WAKE);
        return r.result.thenApplyAsync(t -> task.finish());
    }

    /** Runs a function of the store once on the writer (whole-store work that must be short). */
    public <T> CompletableFuture<T> call(Function<FlowStore, T> fn) {
        var f = new CompletableFuture<T>();
        inbox.add(() -> {
            try {
                f.complete(fn.apply(store));
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
            }
        });
        queue.offer(WAKE);
        return f;
    }

    private final class Running<T> {
        final ScanTask<T> task;
        final CompletableFuture<ScanTask<T>> result = new CompletableFuture<>();
        int next = -1;

        Running(ScanTask<T> task) {
            this.task = task;
        }

        /** {@return whether the scan is complete} */
        boolean slice() {
            try {
                if (next < 0) {
                    task.begin(store);
                    next = 0;
                }
                int end = Math.min(store.slotCount(), next + sliceKeys);
                for (int i = next; i < end; i++) {
                    var e = store.slot(i);
                    if (e != null) {
                        task.visit(e);
                    }
                }
                next = end;
                if (next >= store.slotCount()) {
                    result.complete(task);
                    return true;
                }
                return false;
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
                return true;
            }
        }
    }

    private void run() {
        var batch = new ArrayList<Item>(MAX_BATCH);
        var acks = new IdentityHashMap<AckSink, Long>();
        long lastBeat = 0;
        while (running) {
            try {
                Item first = tasks.isEmpty() && inbox.isEmpty() ? queue.poll(100, TimeUnit.MILLISECONDS)
                        : queue.poll();
                batch.clear();
                if (first != null) {
                    batch.add(first);
                    queue.drainTo(batch, (tasks.isEmpty() && inbox.isEmpty() ? MAX_BATCH : SCAN_BATCH) - 1);
                }
                int counted = 0;
                int dup = 0;
                int old = 0;
                int bad = 0;
                for (int i = 0; i < batch.size(); i++) {
                    Item it = batch.get(i);
                    if (it instanceof Ingest in) {
                        switch (store.apply(in.update, in.node)) {
                            case COUNTED -> counted++;
                            case DUPLICATE -> dup++;
                            case TOO_OLD -> old++;
                            case INVALID -> bad++;
                        }
                        if (in.ack != null) {
                            acks.merge(in.ack, in.seq, Math::max);
                        }
                    } else if (it instanceof Barrier b) {
                        b.done.complete(null);
                    }
                }
                if (!acks.isEmpty()) {
                    acks.forEach(AckSink::ack);
                    acks.clear();
                }
                if (counted + dup + old + bad > 0) {
                    stats.batch(counted, dup, old, bad);
                }
                for (Runnable r; (r = inbox.poll()) != null; ) {
                    r.run();
                }
                Running<?> t = tasks.poll();
                if (t != null && !t.slice()) {
                    tasks.add(t);
                }
                rollover();
                long now = System.nanoTime();
                if (now - lastBeat > 1_000_000_000L) {
                    lastBeat = now;
                    stats.heartbeat();
                    stats.uniqueKeys(store.uniqueKeys());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log.error("goldmane writer: unexpected error, continuing", e);
            }
        }
    }

    private void rollover() {
        int now = store.buckets().index(clock.millis() / 1000);
        if (now <= store.head()) {
            return;
        }
        long t0 = System.nanoTime();
        int opened = now - store.head();
        List<Window> closed = store.advanceTo(now);
        stats.rollover(System.nanoTime() - t0, opened);
        stats.uniqueKeys(store.uniqueKeys());
        for (Window w : closed) {
            for (WindowListener l : listeners) {
                try {
                    l.onWindow(w);
                } catch (RuntimeException e) {
                    log.warn("window listener failed", e);
                }
            }
        }
    }

    @Override
    public void close() {
        running = false;
        writer.interrupt();
        try {
            writer.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@return whether the writer thread is alive} */
    public boolean alive() {
        return writer.isAlive();
    }
}
