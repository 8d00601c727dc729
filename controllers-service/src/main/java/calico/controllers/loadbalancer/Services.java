package calico.controllers.loadbalancer;

import java.util.List;

/** The Kubernetes Services: read them, write their LoadBalancer status, tell users what went wrong. */
public interface Services {

    List<ServiceView> all();

    /** Sets {@code status.loadBalancer.ingress} to exactly {@code ips} (the caller keeps the entries of others it wants). */
    void setIngress(ServiceView service, List<String> ips);

    /**
     * Records an allocation in one status write: {@code status.loadBalancer.ingress} set to exactly {@code ips}
     * and, when an earlier refusal left the condition {@value LoadBalancerIpam#CONDITION} {@code False}, that
     * condition {@code True} with {@code message}.
     */
    void allocated(ServiceView service, List<String> ips, String message);

    /** Records a refusal: the condition {@value LoadBalancerIpam#CONDITION} {@code False} with the reason, and a Warning event. */
    void refused(ServiceView service, String message);
}
