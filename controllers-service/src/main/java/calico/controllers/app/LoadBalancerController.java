package calico.controllers.app;

import calico.api.model.KubeControllersConfigurationSpec.AssignIPs;
import calico.api.model.ResourceKind;
import calico.controllers.loadbalancer.LoadBalancerIpam;
import calico.controllers.reconcile.DatastoreTrigger;
import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.libcalico.datastore.Datastore;
import java.time.Duration;

/**
 * The loadbalancer controller with one {@code assignIPs}: {@link LoadBalancerIpam} on every Service
 * event, IP pool event, and every 5 minutes (Calico's period), on a loop of its own.
 */
final class LoadBalancerController implements AutoCloseable {

    private final KubernetesServices services;
    private final LoadBalancerIpam ipam;
    private final AssignIPs assignIPs;
    private final ReconcileLoop loop;
    private final DatastoreTrigger pools;
    private volatile LoadBalancerIpam.Result last;

    LoadBalancerController(Datastore datastore, KubernetesServices services, LoadBalancerIpam ipam, AssignIPs assignIPs,
                           LoopWatch loops) {
        this.services = services;
        this.ipam = ipam;
        this.assignIPs = assignIPs;
        this.loop = new ReconcileLoop("loadbalancer", Duration.ofMinutes(5), Duration.ofSeconds(1), this::reconcile,
                loops);
        this.pools = new DatastoreTrigger(datastore, ResourceKind.IP_POOL, loop::trigger);
    }

    void start() {
        services.startCache(loop::trigger);
        pools.start();
        loop.start();
    }

    /** One run; each Service handled counts as progress (a first run over thousands of Services is long). */
    private void reconcile() {
        last = ipam.reconcile(assignIPs, loop::progressed);
    }

    LoadBalancerIpam.Result last() {
        return last;
    }

    @Override
    public void close() {
        services.stopCache();
        pools.close();
        loop.close();
    }
}
