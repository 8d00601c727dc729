package calico.node.startup.steps;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CIDR of a default pool whose variable ({@code CALICO_IPV4POOL_CIDR}, {@code CALICO_IPV6POOL_CIDR})
 * is unset, chosen as calico-node chooses it: kubeadm's {@code podSubnet} when the cluster has one;
 * else, for IPv4, the first of 192.168.0.0/16 and 172.16.0.0/16 … 172.31.0.0/16 that holds none of
 * the host's addresses (192.168.0.0/16 when all do), and for IPv6 a random unique local /48.
 * Asked only when a default pool is about to be created, so a second start-up reads nothing.
 */
final class DefaultPoolCidrs {

    private static final Logger LOG = LoggerFactory.getLogger(DefaultPoolCidrs.class);
    static final Cidr PREFERRED_IPV4 = Cidr.parse("192.168.0.0/16");
    private static final Pattern POD_SUBNET = Pattern.compile("podSubnet: (.*)");

    /** kubeadm's pod network: its first IPv4 and first IPv6 CIDR, each when present. */
    record PodSubnets(Optional<Cidr> ipv4, Optional<Cidr> ipv6) {
        static final PodSubnets NONE = new PodSubnets(Optional.empty(), Optional.empty());
    }

    private final KubeadmConfig kubeadm;
    private final Supplier<List<IpAddress>> hostIpv4;
    private final Supplier<Cidr> ula;
    private PodSubnets podSubnets;

    DefaultPoolCidrs(KubeadmConfig kubeadm, Supplier<List<IpAddress>> hostIpv4, Supplier<Cidr> ula) {
        this.kubeadm = kubeadm;
        this.hostIpv4 = hostIpv4;
        this.ula = ula;
    }

    Cidr ipv4() {
        Optional<Cidr> fromKubeadm = podSubnets().ipv4();
        if (fromKubeadm.isPresent()) {
            LOG.info("Default IPv4 pool {}: kubeadm's podSubnet", fromKubeadm.get());
            return fromKubeadm.get();
        }
        Cidr chosen = freeIpv4(hostIpv4.get());
        LOG.info("Default IPv4 pool {}: the first private range holding no address of this host", chosen);
        return chosen;
    }

    Cidr ipv6() {
        Optional<Cidr> fromKubeadm = podSubnets().ipv6();
        fromKubeadm.ifPresent(c -> LOG.info("Default IPv6 pool {}: kubeadm's podSubnet", c));
        return fromKubeadm.orElseGet(ula);
    }

    private PodSubnets podSubnets() {
        if (podSubnets == null) {
            podSubnets = kubeadm.data().map(DefaultPoolCidrs::podSubnets).orElse(PodSubnets.NONE);
        }
        return podSubnets;
    }

    /** {@return the first candidate range that contains none of {@code host}}, the preferred one when each does. */
    static Cidr freeIpv4(List<IpAddress> host) {
        List<Cidr> candidates = new ArrayList<>(List.of(PREFERRED_IPV4));
        for (int second = 16; second <= 31; second++) {
            candidates.add(Cidr.parse("172." + second + ".0.0/16"));
        }
        return candidates.stream().filter(c -> host.stream().noneMatch(c::contains)).findFirst().orElse(PREFERRED_IPV4);
    }

    /**
     * {@return the pod CIDRs of the first {@code podSubnet: A[,B]} line in the ConfigMap's values}
     * (kubeadm writes its ClusterConfiguration as YAML text in one value). The first CIDR of each IP
     * version counts; reading stops at the first that does not parse, as calico-node's does.
     */
    static PodSubnets podSubnets(Map<String, String> data) {
        for (String value : data.values()) {
            Matcher m = POD_SUBNET.matcher(value == null ? "" : value);
            if (!m.find()) {
                continue;
            }
            Optional<Cidr> v4 = Optional.empty();
            Optional<Cidr> v6 = Optional.empty();
            for (String part : m.group(1).split(",")) {
                Optional<Cidr> c = Cidr.tryParse(part.trim());
                if (c.isEmpty()) {
                    LOG.warn("kubeadm's podSubnet: {} is not a CIDR; ignoring the rest of {}", part.trim(), m.group(1));
                    break;
                }
                if (c.get().version() == 4 && v4.isEmpty()) {
                    v4 = c;
                } else if (c.get().version() == 6 && v6.isEmpty()) {
                    v6 = c;
                }
            }
            return new PodSubnets(v4, v6);
        }
        return PodSubnets.NONE;
    }
}
