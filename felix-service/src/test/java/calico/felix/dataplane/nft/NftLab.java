package calico.felix.dataplane.nft;

import calico.dataplane.nft.Nftables;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;

/**
 * A throwaway network namespace, a thread inside it and a libnftables context opened on that
 * thread: what a driver test programs. {@link #close()} frees the context on its thread, then
 * ends the thread and deletes the namespace.
 */
record NftLab(NetNs ns, NamespaceThread thread, Nftables nft) implements AutoCloseable {

    /** @param prefix the start of the namespace's unique name */
    static NftLab open(String prefix) {
        return open(prefix, false);
    }

    /**
     * @param prefix  the start of the namespace's unique name
     * @param netlink whether the context sends what the binding's netlink encoder covers as our messages
     */
    static NftLab open(String prefix, boolean netlink) {
        NetNs ns = NetNs.create(prefix);
        NamespaceThread thread = new NamespaceThread(ns);
        try {
            return new NftLab(ns, thread, thread.call(() -> Nftables.open(netlink)));
        } catch (RuntimeException e) {
            thread.close();
            ns.close();
            throw e;
        }
    }

    @Override
    public void close() {
        try {
            thread.run(nft::close);
            thread.close();
        } finally {
            ns.close();
        }
    }
}
