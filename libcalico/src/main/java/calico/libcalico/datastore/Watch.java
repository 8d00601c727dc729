package calico.libcalico.datastore;

/** A running watch. Closing it stops delivery; it is idempotent. */
public interface Watch extends AutoCloseable {
    @Override
    void close();
}
