package calico.libcalico.datastore.memory;

import calico.libcalico.datastore.WatchEvent;
import java.util.List;

/** What a watch reads from the history log in one step. */
sealed interface HistoryRead {

    /**
     * The watch's events after its cursor, in revision order.
     *
     * @param scannedTo the last revision examined; every change up to it is in {@code events} or
     *                  did not match the watch
     * @param more      whether the log already holds revisions after {@code scannedTo}
     */
    record Events(List<WatchEvent> events, long scannedTo, boolean more) implements HistoryRead {
        public Events {
            events = List.copyOf(events);
        }
    }

    /** The revisions after the cursor have been compacted away. */
    record Gone(long compactRevision, long currentRevision) implements HistoryRead {
    }
}
