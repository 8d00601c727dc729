package calico.confd.render;

import calico.api.model.BGPConfigurationSpec;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.confd.model.ServiceInfo;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Per-service routes (Calico's route generator): single-address routes for Services whose
 * addresses fall in the advertised ranges, decided per address kind:
 *
 * <ul>
 *   <li>{@code externalTrafficPolicy: Local} (and, for cluster IPs, {@code internalTrafficPolicy:
 *       Local}): the service's cluster, external and load-balancer IPs only from a node that
 *       hosts a ready endpoint of it, so traffic lands where a backend runs;</li>
 *   <li>{@code serviceLoadBalancerAggregation: Disabled}: every load-balancer IP on its own
 *       (and the {@code serviceLoadBalancerIPs} ranges themselves are not advertised).</li>
 * </ul>
 * Everything else is covered by the ranges. Pure: same inputs, same routes in address order.
 */
final class ServiceRoutes {

    private ServiceRoutes() {
    }

    /** {@return whether load-balancer ranges are advertised as ranges} ({@code Enabled}, the default) */
    static boolean aggregateLoadBalancerIPs(BGPConfigurationSpec cfg, List<Skipped> skipped) {
        String v = cfg.serviceLoadBalancerAggregation();
        if (v == null || v.isEmpty() || v.equals("Enabled")) {
            return true;
        }
        if (v.equals("Disabled")) {
            return false;
        }
        skipped.add(new Skipped("BGPConfiguration default", "spec.serviceLoadBalancerAggregation: \"" + v
                + "\" is not Enabled or Disabled; treated as Enabled"));
        return true;
    }

    /** One route: the address as a single-address prefix and the service that asked for it. */
    record Route(String prefix, String service) {
    }

    /** {@return the per-service routes of one family}, one per address (the first service by name wins) */
    static List<Route> routes(Collection<ServiceInfo> services, BGPConfigurationSpec cfg, int family,
                              boolean aggregateLb) {
        List<Cidr> clusterRanges = ranges(cfg.serviceClusterIPs());
        List<Cidr> externalRanges = ranges(cfg.serviceExternalIPs());
        List<Cidr> lbRanges = ranges(cfg.serviceLoadBalancerIPs());
        Map<IpAddress, String> out = new TreeMap<>();
        for (ServiceInfo s : services) {
            boolean localOnly = s.externalLocal();
            if ((s.externalLocal() || s.internalLocal()) && s.localEndpoints()) {
                add(out, s.clusterIPs(), clusterRanges, family, s.key());
            }
            if (localOnly && s.localEndpoints()) {
                add(out, s.externalIPs(), externalRanges, family, s.key());
            }
            if (localOnly ? s.localEndpoints() : !aggregateLb) {
                add(out, s.loadBalancerIPs(), lbRanges, family, s.key());
            }
        }
        List<Route> routes = new ArrayList<>();
        out.forEach((ip, svc) -> routes.add(new Route(ip + (family == 4 ? "/32" : "/128"), svc)));
        return routes;
    }

    private static void add(Map<IpAddress, String> out, List<String> ips, List<Cidr> ranges, int family, String svc) {
        for (String text : ips) {
            Optional<IpAddress> ip = IpAddress.tryParse(text);
            if (ip.isPresent() && ip.get().version() == family && ranges.stream().anyMatch(r -> r.contains(ip.get()))) {
                out.putIfAbsent(ip.get(), svc);
            }
        }
    }

    private static List<Cidr> ranges(List<BGPConfigurationSpec.CidrBlock> blocks) {
        List<Cidr> out = new ArrayList<>();
        for (BGPConfigurationSpec.CidrBlock b : blocks) {
            Cidr.tryParseCidrOrIp(b.cidr()).map(Cidr::network).ifPresent(out::add);
        }
        return out;
    }
}
