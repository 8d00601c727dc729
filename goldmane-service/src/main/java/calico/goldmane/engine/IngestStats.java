package calico.goldmane.engine;

/** Counters the writer reports once per batch, so meters cost nothing per flow. */
public interface IngestStats {

    IngestStats NONE = new IngestStats() {
    };

    default void batch(int counted, int duplicate, int tooOld, int invalid) {
    }

    default void rollover(long nanos, int buckets) {
    }

    default void uniqueKeys(int n) {
    }

    default void heartbeat() {
    }
}
