package calico.libcalico.syncer;

/** What an {@link Update} says happened to its key, relative to what the listener was told before. */
public enum UpdateType {
    /** The listener has not been told about this key (or was told it was deleted). */
    NEW,
    /** The listener knows this key; here is its new value. */
    UPDATED,
    /** The listener knows this key; it is gone. */
    DELETED
}
