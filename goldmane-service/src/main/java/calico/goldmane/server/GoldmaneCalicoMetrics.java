package calico.goldmane.server;

import static calico.libcalico.health.CalicoMetric.Type.COUNTER;
import static calico.libcalico.health.CalicoMetric.Type.GAUGE;
import static calico.libcalico.health.CalicoMetric.Type.SUMMARY;
import static calico.libcalico.health.CalicoMetric.missing;
import static calico.libcalico.health.CalicoMetric.served;

import calico.libcalico.health.CalicoMetricTable;

/**
 * Calico goldmane's metrics and what we serve under each name ({@link GoldmaneMetrics}): goldmane-service's
 * DESIGN.md prints {@link #TABLE}, GoldmaneApplicationTest checks a scrape. Goldmane's counters already end
 * in {@code _total} in Calico, so {@code /actuator/prometheus} serves them unchanged.
 */
public final class GoldmaneCalicoMetrics {

    public static final CalicoMetricTable TABLE = CalicoMetricTable.of(
            served("goldmane_aggr_received_flows_total", COUNTER, "",
                    "flows received from collectors, counted or not"),
            served("goldmane_aggr_dropped_flows_total", COUNTER, "",
                    "flows not counted; ours adds `reason` (too_old, invalid, queue_full)"),
            served("goldmane_aggr_num_unique_flows", GAUGE, "", "flow keys in the ring"),
            served("goldmane_num_streams", GAUGE, "", "open Flows.Stream subscriptions"),
            served("goldmane_aggr_flow_index_batch_size", SUMMARY, "", "flows the writer took in one batch"),
            missing("goldmane_aggr_flow_index_latency_ms", SUMMARY, "",
                    "not measured: the writer indexes a batch as it counts it, with no per-flow step to time"),
            served("goldmane_aggr_flow_index_buffer_size", GAUGE, "", "items waiting in the writer's ingest queue"),
            served("goldmane_aggr_rollover_duration_ms", SUMMARY, "",
                    "writer time closing a bucket, ms (also `goldmane_aggr_rollover_duration_seconds`)"),
            missing("goldmane_aggr_rollover_latency_ms", SUMMARY, "",
                    "rollovers follow the injected clock, not a timer whose lateness could be measured"),
            served("goldmane_aggr_backfill_latency_ms", SUMMARY, "",
                    "time to backfill a new stream, ms (also `goldmane_query_latency_seconds{method=\"stream_backfill\"}`)"),
            missing("goldmane_otel_dropped_logs", COUNTER, "", "no OTLP flow-log sink here"));

    private GoldmaneCalicoMetrics() {
    }
}
