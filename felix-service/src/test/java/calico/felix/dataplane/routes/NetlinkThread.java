package calico.felix.dataplane.routes;

import calico.dataplane.netlink.Netlink;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import java.util.concurrent.Callable;

/**
 * The route managers' test bed: a {@link NamespaceThread} in a test namespace and a
 * {@link Netlink} made on it (a netlink socket acts on the namespace of the thread that made it,
 * and is used on that thread only). Closing closes the socket on its thread, then the thread; the
 * namespace stays its creator's to delete.
 */
final class NetlinkThread implements AutoCloseable {

    private final NamespaceThread thread;
    private final Netlink netlink;

    NetlinkThread(NetNs ns) {
        thread = new NamespaceThread(ns);
        try {
            netlink = thread.call(Netlink::new);
        } catch (RuntimeException e) {
            thread.close();
            throw e;
        }
    }

    /** {@return the namespace's netlink}, to be used inside {@link #call} only */
    Netlink netlink() {
        return netlink;
    }

    /** Runs {@code body} on the thread and waits; its exceptions are rethrown unchecked. */
    <T> T call(Callable<T> body) {
        return thread.call(body);
    }

    @Override
    public void close() {
        try {
            thread.run(netlink::close);
        } finally {
            thread.close();
        }
    }
}
