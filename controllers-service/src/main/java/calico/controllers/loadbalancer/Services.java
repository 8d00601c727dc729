package calico.controllers.loadbalancer;

import java.util.List;

/** The Kubernetes Services: read them, write their LoadBalancer status, tell users what went wrong. */
public interface Services {

    List<ServiceView> all();

    /** Sets {@code status.loadBalancer.ingress} to exactly {@code ips} (the caller keeps the entries of others it wants). */
    void setIngress(ServiceView service, List<String> ips);

    /**
     * Records the outcome of the allocation on the Service: a condition {@value LoadBalancerIpam#CONDITION}
     * ({@code True} when allocated, {@code False} with the reason), and a Warning event on failure.
     */
    void report(ServiceView service, boolean allocated, String message);
}
