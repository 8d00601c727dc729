package calico.libcalico.datastore.memory;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A watch listener that queues what it receives and remembers which threads delivered it. */
final class EventRecorder implements WatchListener {

    private final BlockingQueue<WatchEvent> events = new LinkedBlockingQueue<>();
    final Set<String> threads = ConcurrentHashMap.newKeySet();

    @Override
    public void onEvent(WatchEvent event) {
        threads.add(Thread.currentThread().getName());
        events.add(event);
    }

    WatchEvent next() throws InterruptedException {
        WatchEvent e = events.poll(5, TimeUnit.SECONDS);
        assertThat(e).as("a watch event within 5 s").isNotNull();
        return e;
    }

    <T extends WatchEvent> T next(Class<T> type) throws InterruptedException {
        WatchEvent e = next();
        assertThat(e).isInstanceOf(type);
        return type.cast(e);
    }

    List<WatchEvent> take(int n) throws InterruptedException {
        List<WatchEvent> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(next());
        }
        return out;
    }

    /** Asserts that nothing more arrives within a short grace period. */
    void expectSilence() throws InterruptedException {
        assertThat(events.poll(200, TimeUnit.MILLISECONDS)).as("no further event").isNull();
    }
}
