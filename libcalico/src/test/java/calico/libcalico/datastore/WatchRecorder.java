package calico.libcalico.datastore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A {@link WatchListener} that records what it receives, and checks on the way that the
 * backend never calls it concurrently.
 */
public final class WatchRecorder implements WatchListener {

    private final BlockingQueue<WatchEvent> events = new LinkedBlockingQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger overlaps = new AtomicInteger();
    private final AtomicInteger received = new AtomicInteger();

    @Override
    public void onEvent(WatchEvent event) {
        if (inFlight.incrementAndGet() > 1) {
            overlaps.incrementAndGet();
        }
        received.incrementAndGet();
        events.add(event);
        inFlight.decrementAndGet();
    }

    /** {@return the next event}, or null after the timeout. */
    public WatchEvent poll(Duration timeout) {
        try {
            return events.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@return the next {@code n} events that are not bookmarks}; fails if they do not come within the timeout. */
    public List<WatchEvent> changes(int n, Duration timeout) {
        return take(n, timeout, e -> !(e instanceof WatchEvent.Bookmark));
    }

    /** {@return the next event matching {@code filter}}, skipping others; fails after the timeout. */
    public WatchEvent next(Predicate<WatchEvent> filter, Duration timeout) {
        return take(1, timeout, filter).get(0);
    }

    private List<WatchEvent> take(int n, Duration timeout, Predicate<WatchEvent> filter) {
        List<WatchEvent> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (out.size() < n) {
            long left = deadline - System.nanoTime();
            WatchEvent e = left <= 0 ? null : poll(Duration.ofNanos(left));
            if (e == null) {
                throw new AssertionError("expected " + n + " events within " + timeout + ", got " + out.size() + ": " + out);
            }
            if (filter.test(e)) {
                out.add(e);
            }
        }
        return out;
    }

    /** {@return every event received so far and not yet taken}. */
    public List<WatchEvent> drain() {
        List<WatchEvent> out = new ArrayList<>();
        events.drainTo(out);
        return out;
    }

    public int received() {
        return received.get();
    }

    /** {@return how many times the listener was entered while already running}; must be 0. */
    public int overlaps() {
        return overlaps.get();
    }
}
