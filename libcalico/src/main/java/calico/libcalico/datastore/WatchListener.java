package calico.libcalico.datastore;

/** Receives a watch's events, in order, on the watch's delivery thread. */
@FunctionalInterface
public interface WatchListener {
    void onEvent(WatchEvent event);
}
