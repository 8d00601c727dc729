package calico.controllers.app;

import calico.api.model.KubeControllersConfigurationSpec.AssignIPs;
import calico.api.model.ResourceKind;
import calico.controllers.loadbalancer.LoadBalancerIpam;
import calico.controllers.reconcile.DatastoreTrigger;
import calico.controllers.reconcile.LoopWatch;
import calico.controllers.reconcile.ReconcileLoop;
import calico.libcalico.datastore.Datastore;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;

/**
 * The loadbalancer controller with one {@code assignIPs}: {@link LoadBalancerIpam} on every Service
 * event, IP pool event, and every 5 minutes (Calico's period), on a loop of its own.
 */
final class LoadBalancerController implements AutoCloseable {

    private final KubernetesClient client;
    private final ReconcileLoop loop;
    private final DatastoreTrigger pools;
    private SharedIndexInformer<Service> services;
    private volatile LoadBalancerIpam.Result last;

    LoadBalancerController(Datastore datastore, KubernetesClient client, LoadBalancerIpam ipam, AssignIPs assignIPs,
                           LoopWatch loops) {
        this.client = client;
        this.loop = new ReconcileLoop("loadbalancer", Duration.ofMinutes(5), Duration.ofSeconds(1),
                () -> last = ipam.reconcile(assignIPs), loops);
        this.pools = new DatastoreTrigger(datastore, ResourceKind.IP_POOL, loop::trigger);
    }

    void start() {
        services = client.services().inAnyNamespace().inform(new TriggerOnChange<>(loop::trigger));
        pools.start();
        loop.start();
    }

    LoadBalancerIpam.Result last() {
        return last;
    }

    @Override
    public void close() {
        if (services != null) {
            services.close();
        }
        pools.close();
        loop.close();
    }
}
