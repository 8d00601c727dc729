package calico.dataplane.calls;

import java.util.Map;

/**
 * What the dataplane tools really ran, reported as they run it: one call per child process started, per
 * {@code iptables-restore}/{@code -save}, per {@code ipset} command and per libnftables commit or listing. The
 * owner turns them into metrics (felix: Calico's {@code felix_iptables_*}, {@code felix_ipset_*},
 * {@code felix_nft_*}, {@code felix_exec_time_micros}). Called on the tool's caller's thread; implementations are
 * cheap and thread-safe. Every method does nothing by default.
 */
public interface ToolCalls {

    /** Counts nothing. */
    ToolCalls NONE = new ToolCalls() {
    };

    /** A child process was started; {@code micros}: how long the fork/exec took. */
    default void started(long micros) {
    }

    /**
     * An {@code iptables-restore} of IP version {@code ipVersion} (4 or 6) ran.
     *
     * @param linesByTable its input's rule and chain lines per table (kernel table names, e.g. {@code filter})
     * @param ok           it succeeded
     */
    default void iptablesRestore(int ipVersion, Map<String, Integer> linesByTable, boolean ok) {
    }

    /** An {@code iptables-save} ran; {@code ok}: it succeeded. */
    default void iptablesSave(boolean ok) {
    }

    /** An {@code ipset} command ran with {@code lines} lines of input (0 for a listing); {@code ok}: it succeeded. */
    default void ipset(int lines, boolean ok) {
    }

    /**
     * An nftables transaction of {@code commands} commands was committed; {@code ok}: the kernel took it;
     * {@code ownMessages}: it went as netlink messages of our own, not through libnftables.
     */
    default void nftCommit(int commands, boolean ok, boolean ownMessages) {
    }

    /** A libnftables listing ran; {@code ok}: it succeeded. */
    default void nftList(boolean ok) {
    }
}
