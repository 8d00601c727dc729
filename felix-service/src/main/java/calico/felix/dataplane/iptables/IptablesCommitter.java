package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IpsetTransaction;
import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.RestoreTransaction;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.felix.dataplane.rules.IpFamily;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Runs the tools: {@code ipset restore}, one {@code <family>-restore --noflush} per family (each
 * table one atomic commit), and the {@code -save} and {@code ipset save} reads the planner and
 * verifier need. A tool that fails throws; a family that succeeded stays committed when the other
 * fails. Used by the dataplane thread only.
 */
final class IptablesCommitter {

    private final IptablesRestore restore;
    private final Ipset ipset;

    IptablesCommitter(IptablesRestore restore, Ipset ipset) {
        this.restore = restore;
        this.ipset = ipset;
    }

    IptablesBackend backend() {
        return restore.backend();
    }

    /** {@return {@code table} of family {@code f} as {@code -save} lists it} */
    SavedTable save(IpFamily f, Table table) {
        return restore.save(version(f), table);
    }

    /** {@return every kernel set} by name */
    Map<String, IpsetInfo> listSets() {
        return ipset.list();
    }

    /** Runs {@code sets} unless it is empty. */
    void sets(IpsetTransaction sets) {
        if (!sets.isEmpty()) {
            ipset.restore(sets);
        }
    }

    /**
     * One restore per family. On the nft backend the IPv6 restore runs beside the IPv4 one:
     * {@code ip6tables-nft-restore} needs no xtables lock and each builds its cache of its own
     * family's table, so the two take about as long as the longer one instead of their sum.
     * Legacy restores share the xtables lock, so they stay in turn. The IPv4 error is reported
     * first; as before, a family that succeeded stays committed when the other fails.
     */
    void restores(Map<IpFamily, List<RestoreTransaction>> txs) {
        List<RestoreTransaction> v6 = txs.get(IpFamily.V6);
        if (txs.size() < 2 || restore.backend() != IptablesBackend.NFT) {
            txs.forEach((f, t) -> restore.apply(version(f), t));
            return;
        }
        CompletableFuture<Void> six = CompletableFuture.runAsync(
                () -> restore.apply(version(IpFamily.V6), v6), runnable -> {
                    Thread t = new Thread(runnable, Thread.currentThread().getName() + "-ip6tables");
                    t.setDaemon(true);
                    t.start();
                });
        RuntimeException four = null;
        try {
            restore.apply(version(IpFamily.V4), txs.get(IpFamily.V4));
        } catch (RuntimeException e) {
            four = e;
        }
        try {
            six.join();
        } catch (CompletionException e) {
            RuntimeException cause = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
            if (four == null) {
                throw cause;
            }
            four.addSuppressed(cause);
        }
        if (four != null) {
            throw four;
        }
    }

    /** Removes, in every table of family {@code f}, every jump of ours and every {@code cali-} chain. */
    void removeFamily(IpFamily f) {
        List<RestoreTransaction> txs = new ArrayList<>();
        for (Table table : IptablesChangePlanner.TABLES) {
            txs.add(IptablesChangePlanner.removal(table, save(f, table)));
        }
        restore.apply(version(f), txs);
    }

    private static IpVersion version(IpFamily f) {
        return f == IpFamily.V6 ? IpVersion.V6 : IpVersion.V4;
    }
}
