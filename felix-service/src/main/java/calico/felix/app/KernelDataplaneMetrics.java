package calico.felix.app;

import calico.felix.dataplane.DataplaneObserver;
import calico.felix.dataplane.rules.PolicyDriver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The kernel dataplane's Prometheus meters, fed as a {@link DataplaneObserver}. Names follow
 * Calico's felix where it has one:
 *
 * <ul>
 *   <li>{@code felix_int_dataplane_apply_time_seconds} (summary): one sample per batch, policy
 *       driver plus routes (Calico: the same name and type);</li>
 *   <li>{@code felix_int_dataplane_failures_total}: recorded failures, each retried by a resync
 *       (Calico: {@code felix_int_dataplane_failures});</li>
 *   <li>{@code felix_dataplane_chains}, {@code felix_dataplane_rules}, {@code felix_ipsets_calico},
 *       {@code felix_dataplane_ipset_members}: what the active driver has programmed (Calico has
 *       {@code felix_iptables_chains}/{@code _rules} per table and {@code felix_ipsets_calico});</li>
 *   <li>{@code felix_dataplane_resyncs_total}, {@code felix_dataplane_refreshes_total},
 *       {@code felix_dataplane_repairs_total}: full rewrites, periodic read-backs, items repaired;</li>
 *   <li>{@code felix_dataplane_backend{backend}}: 1 for the active policy driver
 *       ({@code iptables-nft}, {@code iptables-legacy}, {@code nftables}), 0 for the others;
 *       {@code felix_dataplane_backend_restarts_total}: driver switches at run time.</li>
 * </ul>
 */
public final class KernelDataplaneMetrics implements DataplaneObserver {

    static final List<String> BACKENDS = List.of("iptables-nft", "iptables-legacy", "nftables");

    private final Timer applyTime;
    private final Counter failures;
    private final Counter resyncs;
    private final Counter refreshes;
    private final Counter repairs;
    private final Counter restarts;
    private final Timer routeList;
    private final Timer routeIfaceSync;
    private final AtomicReference<PolicyDriver.Programmed> programmed =
            new AtomicReference<>(new PolicyDriver.Programmed(0, 0, 0, 0));
    private final AtomicReference<String> backend = new AtomicReference<>("none");

    public KernelDataplaneMetrics(MeterRegistry registry) {
        // A summary, as Calico's (quantiles over the last minute, _count and _sum).
        applyTime = Timer.builder("felix.int.dataplane.apply.time")
                .description("Time to apply one batch to the kernel dataplane (policy driver and routes)")
                .publishPercentiles(0.5, 0.9, 0.99).distributionStatisticExpiry(Duration.ofMinutes(1))
                .register(registry);
        failures = Counter.builder("felix.int.dataplane.failures")
                .description("Kernel dataplane failures; each is retried by a resync").register(registry);
        resyncs = Counter.builder("felix.dataplane.resyncs")
                .description("Full rewrites of the policy dataplane").register(registry);
        refreshes = Counter.builder("felix.dataplane.refreshes")
                .description("Periodic read-backs of the kernel's rules, sets and routes").register(registry);
        repairs = Counter.builder("felix.dataplane.repairs")
                .description("Chains, sets and routes repaired by refreshes").register(registry);
        // Calico's felix_route_table_list_seconds / _per_iface_sync_seconds (summaries, as apply time)
        routeList = Timer.builder("felix.route.table.list")
                .description("Time to list the main routing table (route resyncs)")
                .publishPercentiles(0.5, 0.9, 0.99).distributionStatisticExpiry(Duration.ofMinutes(1))
                .register(registry);
        routeIfaceSync = Timer.builder("felix.route.table.per.iface.sync")
                .description("Time to bring one workload interface's routes in line")
                .publishPercentiles(0.5, 0.9, 0.99).distributionStatisticExpiry(Duration.ofMinutes(1))
                .register(registry);
        restarts = Counter.builder("felix.dataplane.backend.restarts")
                .description("Policy driver switches at run time (FelixConfiguration changes)").register(registry);
        Gauge.builder("felix.dataplane.chains", programmed, p -> p.get().chains())
                .description("Chains programmed by the active policy driver").register(registry);
        Gauge.builder("felix.dataplane.rules", programmed, p -> p.get().rules())
                .description("Rules programmed by the active policy driver").register(registry);
        Gauge.builder("felix.ipsets.calico", programmed, p -> p.get().sets())
                .description("IP sets programmed by the active policy driver").register(registry);
        Gauge.builder("felix.dataplane.ipset.members", programmed, p -> p.get().setMembers())
                .description("Members over the IP sets programmed by the active policy driver").register(registry);
        for (String name : BACKENDS) {
            Gauge.builder("felix.dataplane.backend", backend, b -> name.equals(b.get()) ? 1 : 0)
                    .description("1 for the active policy backend").tag("backend", name).register(registry);
        }
    }

    @Override
    public void applied(Duration took, PolicyDriver.ApplyStats stats, PolicyDriver.Programmed now) {
        applyTime.record(took);
        if (stats != null && stats.resync()) {
            resyncs.increment();
        }
        programmed.set(now);
    }

    @Override
    public void refreshed(int repaired, PolicyDriver.Programmed now) {
        refreshes.increment();
        repairs.increment(repaired);
        programmed.set(now);
    }

    @Override
    public void failed(String error) {
        failures.increment();
    }

    @Override
    public void routesListed(Duration took) {
        routeList.record(took);
    }

    @Override
    public void interfaceRoutesSynced(Duration took) {
        routeIfaceSync.record(took);
    }

    @Override
    public void backendStarted(String name, boolean restart) {
        backend.set(name);
        if (restart) {
            restarts.increment();
        }
    }
}
