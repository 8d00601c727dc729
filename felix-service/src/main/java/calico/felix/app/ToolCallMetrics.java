package calico.felix.app;

import calico.dataplane.calls.ToolCalls;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The policy drivers' tool runs under Calico's names, counted where the tools really run (native-dataplane's
 * {@code IptablesRestore}, {@code Ipset}, {@code Nftables} report each run): {@code felix_iptables_restore_calls}
 * / {@code _errors}, {@code felix_iptables_save_calls} / {@code _errors}, {@code felix_iptables_lines_executed
 * {ip_version, table}}, {@code felix_ipset_calls} / {@code _errors} / {@code _lines_executed}, {@code felix_nft_calls}
 * / {@code _errors}, {@code felix_nft_list_calls} / {@code _errors}, {@code felix_nft_lines_executed{ip_version,
 * table}}, {@code felix_nft_netlink_calls} (ours: of the committed transactions, those sent as felix's own
 * netlink messages rather than through libnftables, {@code FELIX_NFTABLESNETLINKRULES}) and
 * {@code felix_exec_time_micros} (a summary of the fork/exec time of every child process). Labelled series are
 * registered up front, so a scrape shows them at 0 before the first run.
 */
public final class ToolCallMetrics implements ToolCalls {

    /** The kernel tables felix's iptables driver writes. */
    private static final List<String> IPTABLES_TABLES = List.of("filter", "mangle", "nat", "raw");
    /** felix's nftables driver writes one {@code inet} table, {@code calico}, serving both IP versions. */
    static final String NFT_IP_VERSION = "inet";
    static final String NFT_TABLE = "calico";

    private final MeterRegistry registry;
    private final Counter restoreCalls;
    private final Counter restoreErrors;
    private final Counter saveCalls;
    private final Counter saveErrors;
    private final Counter ipsetCalls;
    private final Counter ipsetErrors;
    private final Counter ipsetLines;
    private final Counter nftCalls;
    private final Counter nftErrors;
    private final Counter nftListCalls;
    private final Counter nftListErrors;
    private final Counter nftLines;
    private final Counter nftNetlinkCalls;
    private final DistributionSummary execMicros;

    public ToolCallMetrics(MeterRegistry registry) {
        this.registry = registry;
        restoreCalls = counter("felix.iptables.restore.calls", "iptables-restore runs");
        restoreErrors = counter("felix.iptables.restore.errors", "iptables-restore runs that failed");
        saveCalls = counter("felix.iptables.save.calls", "iptables-save runs");
        saveErrors = counter("felix.iptables.save.errors", "iptables-save runs that failed");
        ipsetCalls = counter("felix.ipset.calls", "ipset commands run");
        ipsetErrors = counter("felix.ipset.errors", "ipset commands that failed");
        ipsetLines = counter("felix.ipset.lines.executed", "ipset restore lines run");
        nftCalls = counter("felix.nft.calls", "nftables transactions committed");
        nftErrors = counter("felix.nft.errors", "nftables transactions the kernel refused");
        nftNetlinkCalls = counter("felix.nft.netlink.calls",
                "nftables transactions committed as felix's own netlink messages (of felix_nft_calls)");
        nftListCalls = counter("felix.nft.list.calls", "libnftables listings");
        nftListErrors = counter("felix.nft.list.errors", "libnftables listings that failed");
        for (int v : new int[] {4, 6}) {
            IPTABLES_TABLES.forEach(t -> iptablesLines(v, t));
        }
        nftLines = Counter.builder("felix.nft.lines.executed").description("nftables commands committed")
                .tag("ip_version", NFT_IP_VERSION).tag("table", NFT_TABLE).register(registry);
        execMicros = DistributionSummary.builder("felix.exec.time.micros")
                .description("Time to fork/exec child processes, in microseconds")
                .publishPercentiles(0.5, 0.9, 0.99).distributionStatisticExpiry(Duration.ofMinutes(1))
                .register(registry);
    }

    private Counter counter(String name, String description) {
        return Counter.builder(name).description(description).register(registry);
    }

    private Counter iptablesLines(int ipVersion, String table) {
        return Counter.builder("felix.iptables.lines.executed").description("iptables-restore lines run")
                .tag("ip_version", Integer.toString(ipVersion)).tag("table", table).register(registry);
    }

    /** One run: counted, and counted again as an error unless {@code ok}. */
    private static void run(Counter calls, Counter errors, boolean ok) {
        calls.increment();
        if (!ok) {
            errors.increment();
        }
    }

    @Override
    public void started(long micros) {
        execMicros.record(micros);
    }

    @Override
    public void iptablesRestore(int ipVersion, Map<String, Integer> linesByTable, boolean ok) {
        run(restoreCalls, restoreErrors, ok);
        linesByTable.forEach((table, lines) -> iptablesLines(ipVersion, table).increment(lines));
    }

    @Override
    public void iptablesSave(boolean ok) {
        run(saveCalls, saveErrors, ok);
    }

    @Override
    public void ipset(int lines, boolean ok) {
        run(ipsetCalls, ipsetErrors, ok);
        ipsetLines.increment(lines);
    }

    @Override
    public void nftCommit(int commands, boolean ok, boolean ownMessages) {
        run(nftCalls, nftErrors, ok);
        nftLines.increment(commands);
        if (ownMessages) {
            nftNetlinkCalls.increment();
        }
    }

    @Override
    public void nftList(boolean ok) {
        run(nftListCalls, nftListErrors, ok);
    }
}
