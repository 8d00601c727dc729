package calico.felix.dataplane;

/**
 * Whether the next batch must resync routes (the policy driver resyncs itself after its own
 * failures): set by any failure of an apply, a refresh or the link watcher, cleared by a fully
 * successful apply. A refresh resolves recorded failures only while it is clear. Confined to the
 * dataplane thread.
 */
final class ResyncNeeded {

    private boolean needed;

    void set() {
        needed = true;
    }

    void clear() {
        needed = false;
    }

    boolean get() {
        return needed;
    }
}
