package calico.controllers.loadbalancer;

import java.util.List;
import java.util.Map;

/**
 * What LoadBalancer IPAM needs of a Kubernetes Service.
 *
 * @param loadBalancer {@code spec.type: LoadBalancer}
 * @param ipFamilies   {@code spec.ipFamilies} ({@code IPv4}, {@code IPv6})
 * @param ingress      {@code status.loadBalancer.ingress[].ip}
 */
public record ServiceView(String namespace, String name, String uid, boolean loadBalancer,
                          Map<String, String> annotations, List<String> ipFamilies, List<String> ingress) {

    public ServiceView {
        annotations = Map.copyOf(annotations);
        ipFamilies = List.copyOf(ipFamilies);
        ingress = List.copyOf(ingress);
    }
}
