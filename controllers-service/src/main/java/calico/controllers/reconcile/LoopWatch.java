package calico.controllers.reconcile;

import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The loops that run now: each {@link ReconcileLoop} joins at start and leaves at close (health reads them). */
public final class LoopWatch {

    private final Set<ReconcileLoop> loops = ConcurrentHashMap.newKeySet();

    void joined(ReconcileLoop loop) {
        loops.add(loop);
    }

    void left(ReconcileLoop loop) {
        loops.remove(loop);
    }

    /** {@return every running loop's status}, by name */
    public List<LoopStatus> statuses() {
        return loops.stream().map(ReconcileLoop::status).sorted(Comparator.comparing(LoopStatus::name)).toList();
    }
}
