package calico.controllers.ipam;

import calico.api.net.IpAddress;
import java.util.Set;

/**
 * What IPAM GC needs of a Kubernetes Pod.
 *
 * @param node     {@code spec.nodeName} (null when not scheduled)
 * @param ips      its addresses: {@code status.podIPs} and Calico's {@code cni.projectcalico.org/podIP(s)}
 *                 annotations; empty when none is known yet (a CNI ADD in flight)
 * @param finished phase {@code Succeeded} or {@code Failed}: its addresses are no longer needed
 */
public record PodView(String namespace, String name, String node, Set<IpAddress> ips, boolean finished) {

    public PodView {
        ips = Set.copyOf(ips);
    }
}
