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

    private static final String DRIVER_COUNTS =
            "not counted yet: the policy drivers (dataplane classes) report what they programmed, not their runs";

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
            missing("felix_ipset_calls", COUNTER, "", DRIVER_COUNTS),
            missing("felix_ipset_errors", COUNTER, "", DRIVER_COUNTS),
            missing("felix_ipset_lines_executed", COUNTER, "", DRIVER_COUNTS),
            missing("felix_iptables_chains", GAUGE, "ip_version,table",
                    "one total over tables and IP versions, not split by these labels: `felix_dataplane_chains`"),
            missing("felix_iptables_rules", GAUGE, "ip_version,table",
                    "one total over tables and IP versions, not split by these labels: `felix_dataplane_rules`"),
            missing("felix_iptables_lines_executed", COUNTER, "ip_version,table", DRIVER_COUNTS),
            missing("felix_iptables_restore_calls", COUNTER, "", DRIVER_COUNTS),
            missing("felix_iptables_restore_errors", COUNTER, "", DRIVER_COUNTS),
            missing("felix_iptables_save_calls", COUNTER, "", DRIVER_COUNTS),
            missing("felix_iptables_save_errors", COUNTER, "", DRIVER_COUNTS),
            missing("felix_iptables_lock_acquire_secs", SUMMARY, "", DRIVER_COUNTS),
            missing("felix_iptables_lock_retries", COUNTER, "", DRIVER_COUNTS),
            missing("felix_nft_chains", GAUGE, "ip_version,table",
                    "as felix_iptables_chains (`felix_dataplane_chains`, with `felix_dataplane_backend{backend=\"nftables\"}`)"),
            missing("felix_nft_rules", GAUGE, "ip_version,table",
                    "as felix_iptables_rules (`felix_dataplane_rules`)"),
            missing("felix_nft_lines_executed", COUNTER, "ip_version,table", DRIVER_COUNTS),
            missing("felix_route_table_list_seconds", SUMMARY, "", DRIVER_COUNTS),
            missing("felix_route_table_per_iface_sync_seconds", SUMMARY, "", DRIVER_COUNTS),
            missing("felix_exec_time_micros", SUMMARY, "", DRIVER_COUNTS),
            served("felix_resyncs_started", COUNTER, "", "datastore resyncs started (also `felix_resyncs_total`)"),
            served("felix_resync_state", GAUGE, "",
                    "the syncer's status: 1 waiting for the datastore, 2 resyncing, 3 in sync"),
            missing("felix_log_errors", COUNTER, "", "logging is logback's: failed or dropped log writes are not counted"),
            missing("felix_logs_dropped", COUNTER, "", "as felix_log_errors"));

    private FelixCalicoMetrics() {
    }
}
