package calico.controllers.loadbalancer;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.KubeControllersConfigurationSpec.AssignIPs;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.controllers.ipam.Allocation;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.ipam.AssignIpRequest;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calico's LoadBalancer IPAM, one pass per {@link #reconcile}: every Service of type LoadBalancer
 * (all of them with {@code assignIPs: AllServices}, only those with Calico's annotations with
 * {@code RequestedServicesOnly}) gets one address per IP family from the IP pools that allow
 * {@code LoadBalancer} ({@value #IPV4_POOLS} / {@value #IPV6_POOLS}: pools by name or CIDR;
 * {@value #LOAD_BALANCER_IPS}: the addresses themselves), in {@code status.loadBalancer.ingress}.
 * Addresses are held by Calico's handle ({@code lb-<hash of name, namespace, uid>}) with the
 * attributes {@code service}, {@code namespace}, {@code type}; they are released when the Service
 * goes, stops being a LoadBalancer, or asks for other addresses. A request that cannot be met (bad
 * annotation, an address outside every LoadBalancer pool, no free address) gets no address, a
 * Warning event and the condition {@value #CONDITION} {@code False} with the reason.
 */
public final class LoadBalancerIpam {

    public static final String IPV4_POOLS = "projectcalico.org/ipv4pools";
    public static final String IPV6_POOLS = "projectcalico.org/ipv6pools";
    public static final String LOAD_BALANCER_IPS = "projectcalico.org/loadBalancerIPs";
    public static final String CONDITION = "projectcalico.org/LoadBalancerIPAllocated";
    /** Calico's hostname of load-balancer blocks. */
    public static final String HOST = "load-balancer";

    private static final Logger LOG = LoggerFactory.getLogger(LoadBalancerIpam.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() { };

    private final Datastore datastore;
    private final IpamClient ipam;
    private final Services services;

    public LoadBalancerIpam(Datastore datastore, IpamClient ipam, Services services) {
        this.datastore = datastore;
        this.ipam = ipam;
        this.services = services;
    }

    /** What one pass did: addresses now held per handle, handles released, services refused (with why). */
    public record Result(Map<String, Set<IpAddress>> held, List<String> released, Map<String, String> refused) {
    }

    /** A request that cannot be met; the message says why, for the event and the condition. */
    static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    public Result reconcile(AssignIPs assignIPs) {
        return reconcile(assignIPs, () -> { });
    }

    /** @param progressed called as each Service is taken up (the one before it is done) */
    public Result reconcile(AssignIPs assignIPs, Runnable progressed) {
        List<IPPool> pools = datastore.list(ResourceKind.IP_POOL).items().stream().map(IPPool.class::cast)
                .filter(p -> p.spec() != null && p.spec().allowedUses().contains(IPPoolSpec.AllowedUse.LoadBalancer)
                        && !Boolean.TRUE.equals(p.spec().disabled()))
                .toList();
        Map<String, Set<IpAddress>> held = new HashMap<>();
        for (Allocation a : Allocation.inBlocks(datastore.list(ResourceKind.IPAM_BLOCK).items().stream()
                .map(calico.api.model.IPAMBlock.class::cast).toList())) {
            if (a.handle() != null && a.handle().startsWith("lb-") && a.attributes().containsKey("service")) {
                held.computeIfAbsent(a.handle(), h -> new TreeSet<>()).add(a.ip());
            }
        }
        List<String> released = new ArrayList<>();
        Map<String, String> refused = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (ServiceView s : services.all()) {
            progressed.run();
            String handle = handle(s);
            seen.add(handle);
            Set<IpAddress> mine = held.getOrDefault(handle, Set.of());
            if (!managed(s, assignIPs)) {
                if (!mine.isEmpty()) {
                    ipam.releaseByHandle(handle);
                    released.add(handle);
                    held.remove(handle);
                    if (s.loadBalancer()) {
                        Set<String> ours = mine.stream().map(IpAddress::toString).collect(Collectors.toSet());
                        services.setIngress(s, s.ingress().stream().filter(ip -> !ours.contains(ip)).toList());
                    }
                }
                continue;
            }
            if (pools.isEmpty()) {
                continue; // as Calico: nothing to allocate from yet
            }
            try {
                Set<IpAddress> now = allocate(s, handle, mine, pools);
                held.put(handle, now);
                List<String> ingress = now.stream().map(IpAddress::toString).toList();
                if (!new TreeSet<>(ingress).equals(new TreeSet<>(s.ingress()))) {
                    services.allocated(s, ingress, "allocated " + String.join(", ", ingress));
                }
            } catch (Refused | IpamException e) {
                refused.put(s.namespace() + "/" + s.name(), e.getMessage());
                LOG.warn("Service {}/{}: no LoadBalancer address: {}", s.namespace(), s.name(), e.getMessage());
                services.refused(s, e.getMessage());
            }
        }
        for (String handle : List.copyOf(held.keySet())) {
            if (!seen.contains(handle)) {
                ipam.releaseByHandle(handle); // its Service is gone
                released.add(handle);
                held.remove(handle);
            }
        }
        return new Result(held, released, refused);
    }

    private Set<IpAddress> allocate(ServiceView s, String handle, Set<IpAddress> mine, List<IPPool> pools) {
        Optional<List<IpAddress>> requested = requestedIps(s, pools);
        Optional<List<Cidr>> v4 = poolAnnotation(s, IPV4_POOLS, 4, pools);
        Optional<List<Cidr>> v6 = poolAnnotation(s, IPV6_POOLS, 6, pools);
        Set<IpAddress> keep = new TreeSet<>();
        for (IpAddress ip : mine) {
            boolean wanted = requested.map(r -> r.contains(ip)).orElseGet(() -> {
                Optional<List<Cidr>> restrict = ip.version() == 4 ? v4 : v6;
                return restrict.map(cs -> cs.stream().anyMatch(c -> c.contains(ip)))
                        .orElseGet(() -> pools.stream().anyMatch(p -> Cidr.parse(p.spec().cidr()).contains(ip)));
            });
            if (wanted) {
                keep.add(ip);
            }
        }
        if (keep.size() < mine.size()) {
            List<IpAddress> drop = mine.stream().filter(ip -> !keep.contains(ip)).toList();
            ipam.releaseIps(drop);
            LOG.info("Service {}/{}: released {} (no longer asked for)", s.namespace(), s.name(), drop);
        }
        Map<String, String> attrs = Map.of("service", s.name(), "namespace", s.namespace(), "type", "LoadBalancer");
        Set<IpAddress> out = new TreeSet<>(keep);
        if (requested.isPresent()) {
            for (IpAddress ip : requested.get()) {
                if (!out.contains(ip)) {
                    ipam.assignIp(new AssignIpRequest(handle, ip, HOST, attrs));
                    out.add(ip);
                }
            }
            return out;
        }
        boolean hasV4 = out.stream().anyMatch(ip -> ip.version() == 4);
        boolean hasV6 = out.stream().anyMatch(ip -> ip.version() == 6);
        List<String> families = s.ipFamilies().isEmpty() ? List.of("IPv4") : s.ipFamilies();
        int num4 = families.contains("IPv4") && !hasV4 ? 1 : 0;
        int num6 = families.contains("IPv6") && !hasV6 ? 1 : 0;
        if (num4 + num6 > 0) {
            List<Cidr> v4Pools = v4.orElseGet(() -> lbPools(pools, 4));
            List<Cidr> v6Pools = v6.orElseGet(() -> lbPools(pools, 6));
            if (num4 > 0 && v4Pools.isEmpty() || num6 > 0 && v6Pools.isEmpty()) {
                throw new Refused("no IP pool with allowedUses LoadBalancer for " + (num4 > 0 && v4Pools.isEmpty() ? "IPv4" : "IPv6"));
            }
            var r = ipam.autoAssign(new AutoAssignRequest(handle, HOST, num4, num6, v4Pools, v6Pools, attrs,
                    IntendedUse.LOAD_BALANCER));
            r.ipv4().forEach(c -> out.add(c.address()));
            r.ipv6().forEach(c -> out.add(c.address()));
        }
        return out;
    }

    private static List<Cidr> lbPools(List<IPPool> pools, int version) {
        return pools.stream().map(p -> Cidr.parse(p.spec().cidr())).filter(c -> c.version() == version).toList();
    }

    private static Optional<List<IpAddress>> requestedIps(ServiceView s, List<IPPool> pools) {
        String text = s.annotations().get(LOAD_BALANCER_IPS);
        if (text == null || text.isBlank()) {
            return Optional.empty();
        }
        List<IpAddress> out = new ArrayList<>();
        for (String v : json(text, LOAD_BALANCER_IPS)) {
            IpAddress ip = IpAddress.tryParse(v.trim()).orElseThrow(() -> new Refused(LOAD_BALANCER_IPS + ": \"" + v
                    + "\" is not an IP address"));
            if (pools.stream().noneMatch(p -> Cidr.parse(p.spec().cidr()).contains(ip))) {
                throw new Refused(LOAD_BALANCER_IPS + ": " + ip + " is outside every IP pool with allowedUses LoadBalancer");
            }
            out.add(ip);
        }
        if (out.stream().filter(ip -> ip.version() == 4).count() > 1 || out.stream().filter(ip -> ip.version() == 6).count() > 1) {
            throw new Refused(LOAD_BALANCER_IPS + ": at most one IPv4 and one IPv6 address, got " + out);
        }
        return Optional.of(out);
    }

    private static Optional<List<Cidr>> poolAnnotation(ServiceView s, String key, int version, List<IPPool> pools) {
        String text = s.annotations().get(key);
        if (text == null || text.isBlank()) {
            return Optional.empty();
        }
        List<Cidr> out = new ArrayList<>();
        for (String id : json(text, key)) {
            Cidr c = Cidr.tryParse(id.trim()).or(() -> pools.stream().filter(p -> p.metadata().name().equals(id.trim()))
                            .findFirst().map(p -> Cidr.parse(p.spec().cidr())))
                    .orElseThrow(() -> new Refused(key + ": \"" + id + "\" is neither a CIDR nor an IP pool with allowedUses "
                            + "LoadBalancer"));
            if (c.version() != version) {
                throw new Refused(key + ": " + c + " is not an IPv" + version + " pool");
            }
            out.add(c);
        }
        return Optional.of(out);
    }

    private static List<String> json(String text, String key) {
        try {
            return JSON.readValue(text, STRINGS);
        } catch (JsonProcessingException e) {
            throw new Refused(key + ": not a JSON list of strings: " + text);
        }
    }

    static boolean managed(ServiceView s, AssignIPs assignIPs) {
        if (!s.loadBalancer()) {
            return false;
        }
        return assignIPs != AssignIPs.RequestedServicesOnly || s.annotations().containsKey(IPV4_POOLS)
                || s.annotations().containsKey(IPV6_POOLS) || s.annotations().containsKey(LOAD_BALANCER_IPS);
    }

    /** Calico's handle of a Service's addresses: {@code lb-} and the URL-safe SHA-256 of name, namespace and uid. */
    public static String handle(ServiceView s) {
        String id = (s.name() + "-" + s.namespace() + "-" + s.uid()).toLowerCase(Locale.ROOT);
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
            String h = "lb-" + Base64.getUrlEncoder().withoutPadding().encodeToString(hash).replaceAll("[-_.]", "");
            return h.length() > 253 ? h.substring(0, 253) : h;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
