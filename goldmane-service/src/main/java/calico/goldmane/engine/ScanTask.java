package calico.goldmane.engine;

import calico.goldmane.store.FlowStore;
import calico.goldmane.store.KeyEntry;

/**
 * Work that reads the store, run by the writer thread a slice of keys at a time so that no scan
 * holds up ingestion for long. Everything a scan keeps must be copied or immutable (flow keys and
 * labels are), because the store changes between slices. Heavy work (sorting, building protos)
 * belongs in {@link #finish()}, which runs on the caller's side.
 *
 * @param <T> the result
 */
public interface ScanTask<T> {

    /** On the writer, before the first slice. */
    default void begin(FlowStore store) {
    }

    /** On the writer, once per live key. */
    void visit(KeyEntry entry);

    /** Off the writer, after the last slice. */
    T finish();
}
