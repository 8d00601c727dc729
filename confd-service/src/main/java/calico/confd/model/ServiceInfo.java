package calico.confd.model;

import java.util.List;

/**
 * What confd needs of one Kubernetes Service to advertise it per service (Calico's route
 * generator): its addresses and traffic policies, and whether this node hosts a ready endpoint.
 *
 * @param key             {@code namespace/name}
 * @param clusterIPs      {@code spec.clusterIPs} (or {@code clusterIP}); none for headless services
 * @param externalIPs     {@code spec.externalIPs}
 * @param loadBalancerIPs {@code status.loadBalancer.ingress[].ip} (and {@code spec.loadBalancerIP})
 * @param externalLocal   {@code spec.externalTrafficPolicy: Local}
 * @param internalLocal   {@code spec.internalTrafficPolicy: Local}
 * @param localEndpoints  an EndpointSlice of the service has a ready endpoint on this node
 */
public record ServiceInfo(String key, List<String> clusterIPs, List<String> externalIPs, List<String> loadBalancerIPs,
                          boolean externalLocal, boolean internalLocal, boolean localEndpoints) {

    public ServiceInfo {
        clusterIPs = List.copyOf(clusterIPs);
        externalIPs = List.copyOf(externalIPs);
        loadBalancerIPs = List.copyOf(loadBalancerIPs);
    }
}
