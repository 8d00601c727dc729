package calico.libcalico.ipam;

import calico.api.net.Cidr;
import java.util.List;

/** The addresses an {@link AutoAssignRequest} got, each as a single-address CIDR (/32, /128) as Calico's CNI reports them. */
public record AssignResult(List<Cidr> ipv4, List<Cidr> ipv6) {
    public AssignResult {
        ipv4 = List.copyOf(ipv4);
        ipv6 = List.copyOf(ipv6);
    }
}
