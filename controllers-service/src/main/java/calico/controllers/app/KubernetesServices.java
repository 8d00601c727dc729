package calico.controllers.app;

import calico.controllers.loadbalancer.LoadBalancerIpam;
import calico.controllers.loadbalancer.ServiceView;
import calico.controllers.loadbalancer.Services;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.LoadBalancerIngress;
import io.fabric8.kubernetes.api.model.LoadBalancerIngressBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.events.v1.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Services through fabric8: read them (an informer's cache while the loadbalancer controller runs, see
 * {@link InformedList}, holding only what {@link #view} reads: {@link LeanStore}), write {@code status.loadBalancer.ingress} and the allocation condition, record events.
 */
final class KubernetesServices implements Services {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesServices.class);

    private final KubernetesClient client;
    private final InformedList<Service> services;

    KubernetesServices(KubernetesClient client) {
        this.client = client;
        this.services = new InformedList<>(() -> client.services().inAnyNamespace().list().getItems(),
                h -> client.services().inAnyNamespace().runnableInformer(0).itemStore(LeanStore.services(client.getKubernetesSerialization()))
                        .addEventHandler(h).run());
    }

    /** Starts the cache (the loadbalancer controller starts); each Service change calls {@code onChange}. */
    void startCache(Runnable onChange) {
        services.start(onChange);
    }

    void stopCache() {
        services.close();
    }

    @Override
    public List<ServiceView> all() {
        List<ServiceView> out = new ArrayList<>();
        for (Service s : services.items()) {
            out.add(view(s));
        }
        return out;
    }

    static ServiceView view(Service s) {
        List<String> ingress = s.getStatus() == null || s.getStatus().getLoadBalancer() == null
                || s.getStatus().getLoadBalancer().getIngress() == null ? List.of()
                : s.getStatus().getLoadBalancer().getIngress().stream().map(LoadBalancerIngress::getIp)
                .filter(Objects::nonNull).toList();
        return new ServiceView(s.getMetadata().getNamespace(), s.getMetadata().getName(), s.getMetadata().getUid(),
                s.getSpec() != null && "LoadBalancer".equals(s.getSpec().getType()),
                s.getMetadata().getAnnotations() == null ? Map.of() : s.getMetadata().getAnnotations(),
                s.getSpec() == null || s.getSpec().getIpFamilies() == null ? List.of() : s.getSpec().getIpFamilies(),
                ingress);
    }

    @Override
    public void setIngress(ServiceView service, List<String> ips) {
        client.services().inNamespace(service.namespace()).withName(service.name()).editStatus(s -> withIngress(s, ips));
    }

    @Override
    public void allocated(ServiceView service, List<String> ips, String message) {
        client.services().inNamespace(service.namespace()).withName(service.name()).editStatus(s -> {
            Service withIngress = withIngress(s, ips);
            return withCondition(withIngress, true, message).orElse(withIngress);
        });
    }

    private static Service withIngress(Service s, List<String> ips) {
        return new ServiceBuilder(s).editOrNewStatus().editOrNewLoadBalancer()
                .withIngress(ips.stream().map(ip -> new LoadBalancerIngressBuilder().withIp(ip).build()).toList())
                .endLoadBalancer().endStatus().build();
    }

    /**
     * {@return {@code s} with the allocation condition set}, empty when that changes nothing: the condition
     * already says so, or the allocation succeeded and nothing went wrong before (no condition needed).
     */
    private static Optional<Service> withCondition(Service s, boolean allocated, String message) {
        String status = allocated ? "True" : "False";
        List<Condition> conditions = new ArrayList<>(s.getStatus() == null || s.getStatus().getConditions() == null
                ? List.of() : s.getStatus().getConditions());
        Condition old = conditions.stream().filter(c -> LoadBalancerIpam.CONDITION.equals(c.getType())).findFirst()
                .orElse(null);
        if (old != null && status.equals(old.getStatus()) && message.equals(old.getMessage()) || old == null && allocated) {
            return Optional.empty();
        }
        conditions.remove(old);
        conditions.add(new ConditionBuilder().withType(LoadBalancerIpam.CONDITION).withStatus(status)
                .withReason(allocated ? "Allocated" : "AllocationFailed").withMessage(message)
                .withObservedGeneration(s.getMetadata().getGeneration())
                .withLastTransitionTime(DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.SECONDS)))
                .build());
        return Optional.of(new ServiceBuilder(s).editOrNewStatus().withConditions(conditions).endStatus().build());
    }

    @Override
    public void refused(ServiceView service, String message) {
        AtomicBoolean changed = new AtomicBoolean();
        client.services().inNamespace(service.namespace()).withName(service.name()).editStatus(s -> {
            Optional<Service> next = withCondition(s, false, message);
            changed.set(next.isPresent());
            return next.orElse(s);
        });
        if (changed.get()) {
            try {
                client.resource(new EventBuilder().withNewMetadata()
                        .withName(service.name() + "." + Long.toHexString(System.currentTimeMillis()) + Integer.toHexString(
                                java.util.concurrent.ThreadLocalRandom.current().nextInt(0x10000)))
                        .withNamespace(service.namespace()).endMetadata()
                        .withEventTime(new io.fabric8.kubernetes.api.model.MicroTime(
                                DateTimeFormatter.ISO_INSTANT.format(Instant.now().truncatedTo(ChronoUnit.MICROS))))
                        .withReportingController("projectcalico.org/kube-controllers")
                        .withReportingInstance("calico-kube-controllers").withAction("AllocateLoadBalancerIP")
                        .withType("Warning").withReason("LoadBalancerIPAllocationFailed").withNote(message)
                        .withRegarding(new ObjectReferenceBuilder().withApiVersion("v1").withKind("Service")
                                .withNamespace(service.namespace()).withName(service.name()).withUid(service.uid()).build())
                        .build()).create();
            } catch (KubernetesClientException e) {
                LOG.warn("Service {}/{}: could not record the event: {}", service.namespace(), service.name(), e.getMessage());
            }
        }
    }
}
