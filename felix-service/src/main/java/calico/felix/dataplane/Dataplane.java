package calico.felix.dataplane;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import java.util.List;

/**
 * Where the calculation graph's output goes: one call per flushed batch, in order, on the
 * syncer's callback thread. Each dataplane folds the batches into its one {@link DataplaneModel}
 * (which checks the output protocol) and programs from it. Implementations must not throw on bad
 * input: they log it and report it through {@link #errors()} (felix then reports the dataplane
 * unhealthy).
 */
public interface Dataplane {

    void apply(List<DataplaneUpdate> batch);

    /** {@return whether the dataplane has received (and applied) {@code InSync}}. */
    boolean inSync();

    /**
     * {@return the model this dataplane folds the stream into}: what the admin API, the metrics and
     * flow logs read (from other threads through {@link DataplaneModel#read}).
     */
    DataplaneModel model();

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
