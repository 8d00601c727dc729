package calico.controllers.app;

import static calico.libcalico.health.CalicoMetric.Type.COUNTER;
import static calico.libcalico.health.CalicoMetric.Type.GAUGE;
import static calico.libcalico.health.CalicoMetric.served;

import calico.libcalico.health.CalicoMetricTable;

/**
 * Calico kube-controllers' metrics and what we serve under each name, from each IPAM GC run
 * ({@link IpamMetrics}): controllers-service's DESIGN.md prints {@link #TABLE}, the metrics port
 * (prometheusMetricsPort) renames its counter by it, KubernetesControllersTest checks a scrape.
 */
public final class ControllersCalicoMetrics {

    public static final CalicoMetricTable TABLE = CalicoMetricTable.of(
            served("ipam_ippool_size", GAUGE, "ippool", "addresses in the pool's CIDR"),
            served("ipam_allocations_in_use", GAUGE, "ippool,node", "allocations held by a live workload or interface"),
            served("ipam_allocations_borrowed", GAUGE, "ippool,node",
                    "allocations in use from a block affine to another node"),
            served("ipam_allocations_gc_candidates", GAUGE, "ippool,node",
                    "allocations the GC has marked as possible leaks (waiting out the grace period)"),
            served("ipam_allocations_gc_reclamations", COUNTER, "ippool,node",
                    "allocations the GC released (`ipam_allocations_gc_reclamations_total` on the health port)"),
            served("ipam_blocks", GAUGE, "ippool,node", "blocks affine to the node"),
            served("ipam_allocations_per_node", GAUGE, "node", "`ipam_allocations_in_use` summed over the pools"),
            served("ipam_allocations_borrowed_per_node", GAUGE, "node",
                    "`ipam_allocations_borrowed` summed over the pools"),
            served("ipam_blocks_per_node", GAUGE, "node", "`ipam_blocks` summed over the pools"));

    private ControllersCalicoMetrics() {
    }
}
