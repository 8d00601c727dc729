package calico.typha.server;

import static calico.libcalico.health.CalicoMetric.Type.COUNTER;
import static calico.libcalico.health.CalicoMetric.Type.GAUGE;
import static calico.libcalico.health.CalicoMetric.Type.SUMMARY;
import static calico.libcalico.health.CalicoMetric.missing;
import static calico.libcalico.health.CalicoMetric.served;

import calico.libcalico.health.CalicoMetricTable;

/**
 * Calico typha's metrics and what this typha serves under each name (typha-service's DESIGN.md prints
 * {@link #TABLE}; the Calico metrics port renames its counters by it; TyphaApplicationTest checks a scrape).
 */
public final class TyphaCalicoMetrics {

    public static final CalicoMetricTable TABLE = CalicoMetricTable.of(
            served("typha_connections_accepted", COUNTER, "",
                    "client streams accepted (also `typha_connections_accepted_total` on the health port)"),
            served("typha_connections_active", GAUGE, "",
                    "open client streams, before their hello included (also `typha_connections`)"),
            served("typha_connections_dropped", COUNTER, "",
                    "streams ended to rebalance (also `typha_clients_dropped_total{reason=\"rebalance\"}`, "
                            + "beside the other reasons)"),
            served("typha_connections_streaming", GAUGE, "syncer", "streams past their hello on that syncer"),
            missing("typha_connections_grace_used", COUNTER, "syncer",
                    "no fall-behind grace period for new clients: a client is dropped once it lags past "
                            + "the delta log (`typha_clients_dropped_total{reason=\"fell-behind\"}`)"),
            served("typha_cache_size", GAUGE, "syncer", "key/value pairs in the syncer's cache (also "
                    + "`typha_snapshot_size{syncer_type}`)"),
            served("typha_breadcrumb_seq_number", GAUGE, "syncer",
                    "sequence number of the latest sealed breadcrumb (also `typha_sequence{syncer_type}`)"),
            served("typha_breadcrumb_size", SUMMARY, "syncer", "KVs in each sealed breadcrumb"),
            missing("typha_breadcrumb_block", COUNTER, "syncer",
                    "clients never block for the next breadcrumb: the cache wakes them (SnapshotCache.Listener)"),
            missing("typha_breadcrumb_non_block", COUNTER, "syncer", "as typha_breadcrumb_block"),
            missing("typha_next_breadcrumb_latency_secs", SUMMARY, "syncer", "as typha_breadcrumb_block"),
            served("typha_snapshot_raw_bytes", GAUGE, "syncer",
                    "encoded size of the latest snapshot before compression (also `typha_snapshot_bytes{syncer_type}`)"),
            missing("typha_snapshot_compressed_bytes", GAUGE, "syncer",
                    "each chunk is compressed on first use by a kvs-gzip client (SharedMessage); no snapshot "
                            + "total is kept"),
            served("typha_snapshots_generated", COUNTER, "syncer", "snapshots built for new clients"),
            served("typha_snapshots_reused", COUNTER, "syncer", "new clients sent the current snapshot again"),
            served("typha_client_snapshot_send_secs", SUMMARY, "syncer",
                    "from taking a client's snapshot to handing its last chunk to the client's stream (gRPC flow "
                            + "control: handed only while the stream is ready), seconds"),
            served("typha_client_latency_secs", SUMMARY, "syncer",
                    "age of each breadcrumb when handed to a client's stream, seconds (also "
                            + "`typha_fanout_latency_seconds`, all syncers)"),
            missing("typha_client_write_latency_secs", SUMMARY, "syncer",
                    "gRPC's onNext queues without blocking (flow control by isReady): no write call to time"),
            missing("typha_kvs_per_msg", SUMMARY, "syncer", "not measured yet"),
            served("typha_ping_latency", SUMMARY, "syncer", "round trip of each answered ping, seconds"),
            served("typha_updates_total", COUNTER, "syncer", "updates received from the syncer"),
            missing("typha_updates_skipped", COUNTER, "syncer",
                    "no duplicate detection: every update from the syncer goes into a breadcrumb"),
            missing("typha_log_errors", COUNTER, "", "logging is logback's: failed or dropped log writes are not counted"),
            missing("typha_logs_dropped", COUNTER, "", "as typha_log_errors"));

    private TyphaCalicoMetrics() {
    }
}
