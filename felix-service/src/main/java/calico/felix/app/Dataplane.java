package calico.felix.app;

import calico.felix.calc.DataplaneUpdate;
import java.util.List;

/**
 * Where the calculation graph's output goes: one call per flushed batch, in order, on the
 * syncer's callback thread. Implementations must not throw on bad input: they log it and report
 * it through {@link #errors()} (felix then reports the dataplane unhealthy).
 */
public interface Dataplane {

    void apply(List<DataplaneUpdate> batch);

    /** {@return whether the dataplane has received (and applied) {@code InSync}}. */
    boolean inSync();

    /** {@return the problems seen so far, newest last}; empty while healthy. */
    default List<String> errors() {
        return List.of();
    }

    /**
     * {@return System.nanoTime() when the kernel write now running started, 0 when none runs}:
     * a dataplane that queues batches returns from {@link #apply} before writing, so felix's
     * apply timeout watches this too.
     */
    default long applyRunningSince() {
        return 0;
    }
}
