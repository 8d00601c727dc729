package calico.felix.app;

import static calico.libcalico.health.CalicoMetric.Type.COUNTER;
import static calico.libcalico.health.CalicoMetric.Type.GAUGE;
import static calico.libcalico.health.CalicoMetric.Type.SUMMARY;
import static calico.libcalico.health.CalicoMetric.missing;
import static calico.libcalico.health.CalicoMetric.served;

import calico.libcalico.health.CalicoMetricTable;

/**
 * Calico felix's metrics and what this felix serves under each name ({@link FelixMetrics},
 * {@link KernelDataplaneMetrics}): felix-service's DESIGN.md prints {@link #TABLE}, the metrics port
 * (FELIX_PROMETHEUSMETRICSPORT) renames its counters by it, FelixKernelApplicationTest checks a scrape.
 * The {@code felix_bpf_*} family (eBPF maps, conntrack sweeps) is not listed: it belongs with the eBPF driver.
 */
public final class FelixCalicoMetrics {

    private static final String LOCK =
            "iptables-restore takes the xtables lock itself (`--wait`): felix does not see its waits or retries";

    public static final CalicoMetricTable TABLE = CalicoMetricTable.of(
            served("felix_active_local_endpoints", GAUGE, "", "local workload and host endpoints in the dataplane "
                    + "model (also `felix_local_endpoints`)"),
            served("felix_active_local_policies", GAUGE, "", "policies selecting a local endpoint (also "
                    + "`felix_active_policies`)"),
            served("felix_active_local_selectors", GAUGE, "", "IP sets the graph computed for active rules' "
                    + "selectors, one per selector and named port as Calico's (also `felix_ipsets`)"),
            missing("felix_active_local_tags", GAUGE, "", "tags are gone from the v3 model (Calico's is always 0)"),
            served("felix_cluster_num_hosts", GAUGE, "", "Calico Node resources in felix's stream"),
            served("felix_cluster_num_workload_endpoints", GAUGE, "", "workload endpoints in felix's stream"),
            served("felix_cluster_num_host_endpoints", GAUGE, "", "host endpoints in felix's stream"),
            served("felix_cluster_num_policies", GAUGE, "",
                    "GlobalNetworkPolicies and NetworkPolicies in felix's stream, every tier"),
            served("felix_cluster_num_profiles", GAUGE, "", "profiles in felix's stream"),
            served("felix_cluster_num_tiers", GAUGE, "", "tiers in felix's stream"),
            served("felix_calc_graph_update_time_seconds", SUMMARY, "",
                    "graph time per delivery of updates, the dataplane applies it flushed left out"),
            served("felix_calc_graph_updates_processed", COUNTER, "type",
                    "datastore updates into the graph, by kind (`type` is the resource kind, e.g. `WorkloadEndpoint`)"),
            served("felix_calc_graph_output_events", COUNTER, "", "dataplane updates the graph emitted"),
            served("felix_int_dataplane_apply_time_seconds", SUMMARY, "",
                    "kernel dataplane: one sample per apply, policy driver and routes"),
            served("felix_int_dataplane_failures", COUNTER, "",
                    "kernel dataplane failures, each retried by a resync (`felix_int_dataplane_failures_total` on "
                            + "the health port)"),
            served("felix_int_dataplane_messages", COUNTER, "type",
                    "dataplane updates applied, by type (`type` is ours, e.g. `WorkloadEndpointUpdate`; also "
                            + "`felix_updates_applied_total{type}`)"),
            served("felix_int_dataplane_msg_batch_size", SUMMARY, "", "dataplane updates per applied batch"),
            missing("felix_int_dataplane_iface_msg_batch_size", SUMMARY, "",
                    "interface changes are not batched apart from other updates"),
            missing("felix_int_dataplane_addr_msg_batch_size", SUMMARY, "",
                    "as felix_int_dataplane_iface_msg_batch_size"),
            served("felix_ipsets_calico", GAUGE, "", "kernel dataplane: IP sets the active policy driver programmed"),
            missing("felix_ipsets_total", GAUGE, "", "IP sets felix does not own are not listed"),
            served("felix_ipset_calls", COUNTER, "", "ipset commands the iptables driver ran (restores and listings)"),
            served("felix_ipset_errors", COUNTER, "", "those that failed"),
            served("felix_ipset_lines_executed", COUNTER, "", "ipset restore input lines run"),
            missing("felix_iptables_chains", GAUGE, "ip_version,table",
                    "one total over tables and IP versions, not split by these labels: `felix_dataplane_chains`"),
            missing("felix_iptables_rules", GAUGE, "ip_version,table",
                    "one total over tables and IP versions, not split by these labels: `felix_dataplane_rules`"),
            served("felix_iptables_lines_executed", COUNTER, "ip_version,table",
                    "chain and rule lines of the iptables-restore runs, per IP version and kernel table"),
            served("felix_iptables_restore_calls", COUNTER, "", "iptables-restore runs (either backend)"),
            served("felix_iptables_restore_errors", COUNTER, "", "iptables-restore runs that failed"),
            served("felix_iptables_save_calls", COUNTER, "", "iptables-save runs (refresh read-backs)"),
            served("felix_iptables_save_errors", COUNTER, "", "iptables-save runs that failed"),
            missing("felix_iptables_lock_acquire_secs", SUMMARY, "", LOCK),
            missing("felix_iptables_lock_retries", COUNTER, "", LOCK),
            missing("felix_nft_chains", GAUGE, "ip_version,table",
                    "as felix_iptables_chains (`felix_dataplane_chains`, with `felix_dataplane_backend{backend=\"nftables\"}`)"),
            missing("felix_nft_rules", GAUGE, "ip_version,table",
                    "as felix_iptables_rules (`felix_dataplane_rules`)"),
            served("felix_nft_calls", COUNTER, "", "nftables transactions the nftables driver committed (of "
                    + "them, those sent as felix's own netlink messages, not through libnftables: ours, "
                    + "`felix_nft_netlink_calls_total` on the health port)"),
            served("felix_nft_errors", COUNTER, "", "those the kernel refused"),
            served("felix_nft_list_calls", COUNTER, "", "libnftables listings (refresh read-backs)"),
            served("felix_nft_list_errors", COUNTER, "", "listings that failed"),
            served("felix_nft_lines_executed", COUNTER, "ip_version,table",
                    "commands of the committed transactions; one `inet` table, `calico`, so `ip_version=\"inet\"`, "
                            + "`table=\"calico\"`"),
            served("felix_route_table_list_seconds", SUMMARY, "", "listing the main routing table (route resyncs)"),
            served("felix_route_table_per_iface_sync_seconds", SUMMARY, "",
                    "bringing one workload interface's routes (and its sysctls) in line"),
            served("felix_exec_time_micros", SUMMARY, "",
                    "fork/exec time of every child process the drivers start (iptables-restore/-save, ipset)"),
            served("felix_resyncs_started", COUNTER, "", "datastore resyncs started (also `felix_resyncs_total`)"),
            served("felix_resync_state", GAUGE, "",
                    "the syncer's status: 1 waiting for the datastore, 2 resyncing, 3 in sync"),
            missing("felix_log_errors", COUNTER, "", "logging is logback's: failed or dropped log writes are not counted"),
            missing("felix_logs_dropped", COUNTER, "", "as felix_log_errors"));

    private FelixCalicoMetrics() {
    }
}
