package calico.goldmane.engine;

/** Where the writer confirms that a collector stream's updates up to a sequence number are handled. */
public interface AckSink {

    /** Called on the writer thread once per batch; must not block. */
    void ack(long seq);
}
