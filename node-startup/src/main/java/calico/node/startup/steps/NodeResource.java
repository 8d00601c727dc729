package calico.node.startup.steps;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.node.startup.autodetect.AddressDetector;
import calico.node.startup.autodetect.AutodetectionMethod;
import calico.node.startup.autodetect.Detection;
import calico.node.startup.autodetect.HostInterface;
import calico.libcalico.datastore.Datastore;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's Node resource, as calico-node's start-up writes it: the BGP addresses (from
 * {@code IP}/{@code IP6} or autodetected), the AS number, the host's interfaces and the
 * orchestrator reference; every other field (tunnel addresses, labels, WireGuard, status) is kept
 * as it is. Written only when something changed, so a second start changes nothing.
 */
final class NodeResource {

    private static final Logger LOG = LoggerFactory.getLogger(NodeResource.class);

    private final Datastore datastore;
    private final AddressDetector detector;

    NodeResource(Datastore datastore, AddressDetector detector) {
        this.datastore = datastore;
        this.detector = detector;
    }

    /** {@return the Node as stored after this step} */
    Node ensure(NodeSettings s, boolean kubernetesDatastore, Changes changes) {
        ResourceKey key = ResourceKey.of(ResourceKind.NODE, s.nodeName());
        Optional<Resource> stored = datastore.get(key);
        if (stored.isEmpty() && kubernetesDatastore) {
            throw new StartupException("the Kubernetes Node " + s.nodeName() + " does not exist: on the kubernetes "
                    + "datastore Calico's Node is the Kubernetes Node (NODENAME must name it)");
        }
        Node before = stored.map(Node.class::cast).orElseGet(() -> new Node(ObjectMeta.named(s.nodeName()),
                new NodeSpec(null, null, null, null, null, null, null, null, null)));
        NodeSpec spec = before.spec() == null ? new NodeSpec(null, null, null, null, null, null, null, null, null)
                : before.spec();
        NodeSpec.BGP bgp = spec.bgp() == null ? new NodeSpec.BGP(null, null, null, null, null) : spec.bgp();
        List<NodeSpec.Interface> interfaces = spec.interfaces();
        if (!s.policyOnly()) {
            String v4 = address(4, s.ipv4(), s.ipv4Method(), bgp.ipv4Address(), s.kubernetesNodeName());
            String v6 = address(6, s.ipv6(), s.ipv6Method(), bgp.ipv6Address(), s.kubernetesNodeName());
            if (v4 == null && v6 == null) {
                throw new StartupException("no IPv4 or IPv6 address configured or detected for node " + s.nodeName()
                        + ", and Calico networking needs one (set IP or IP6, or CALICO_NETWORKING_BACKEND=none)");
            }
            bgp = new NodeSpec.BGP(s.asNumber() != null ? s.asNumber() : bgp.asNumber(), v4, v6,
                    bgp.ipv4IPIPTunnelAddr(), bgp.routeReflectorClusterID());
            if (s.checkConflicts() && (!Objects.equals(v4, spec.bgp() == null ? null : spec.bgp().ipv4Address())
                    || !Objects.equals(v6, spec.bgp() == null ? null : spec.bgp().ipv6Address()))) {
                checkConflicts(s.nodeName(), v4, v6);
            }
            // The kubernetes datastore keeps no interfaces (Calico's KDD has no annotation for them).
            interfaces = kubernetesDatastore ? spec.interfaces() : interfaces(s);
        }
        List<NodeSpec.OrchRef> orchRefs = s.orchestratorRef()
                ? List.of(new NodeSpec.OrchRef(s.kubernetesNodeName(), "k8s")) : spec.orchRefs();
        NodeSpec.BGP written = bgp.equals(new NodeSpec.BGP(null, null, null, null, null)) ? null : bgp;
        NodeSpec after = new NodeSpec(written, spec.ipv4VXLANTunnelAddr(), spec.vxlanTunnelMACAddr(),
                spec.ipv6VXLANTunnelAddr(), spec.vxlanTunnelMACAddrV6(), orchRefs, spec.wireguard(), spec.addresses(),
                interfaces);
        if (stored.isPresent() && after.equals(spec)) {
            return before;
        }
        Node node = new Node(before.metadata(), after, before.status());
        if (stored.isEmpty()) {
            changes.add("created Node " + s.nodeName() + " " + describe(written));
            return (Node) datastore.create(node);
        }
        changes.add("updated Node " + s.nodeName() + " " + describe(written));
        return (Node) datastore.update(node);
    }

    /**
     * The address of one IP version, Calico's rules: IPv4 unset means "keep the Node's, detect if it
     * has none"; IPv6 unset means "keep the Node's"; {@code autodetect} detects at every start (a
     * failure keeps the old address if there is one); {@code none} keeps what is there.
     */
    private String address(int version, AddressSetting setting, AutodetectionMethod method, String current,
                           String kubernetesNodeName) {
        boolean detect = setting instanceof AddressSetting.Autodetect
                || (version == 4 && setting instanceof AddressSetting.Unset && current == null);
        String variable = version == 4 ? "IP" : "IP6";
        if (detect) {
            Detection d = detector.detect(method, version, kubernetesNodeName);
            if (d.cidr().isPresent()) {
                LOG.info("Using autodetected IPv{} address {}{} ({}={})", version, d.cidr().get(),
                        d.interfaceName() == null ? "" : " on interface " + d.interfaceName(),
                        version == 4 ? "IP_AUTODETECTION_METHOD" : "IP6_AUTODETECTION_METHOD", method.text());
                return d.cidr().get().toString();
            }
            if (current == null) {
                throw new StartupException("cannot autodetect an IPv" + version + " address with "
                        + (version == 4 ? "IP_AUTODETECTION_METHOD" : "IP6_AUTODETECTION_METHOD") + "="
                        + method.text() + ": " + d.reason() + " (choose another method, or set " + variable + ")");
            }
            LOG.warn("Autodetection of the IPv{} address failed ({}), keeping {}", version, d.reason(), current);
            warnIfNotOnHost(current);
            return current;
        }
        if (setting instanceof AddressSetting.Explicit e) {
            Cidr c = e.prefixGiven() ? e.cidr() : detector.onHost(e.cidr().address()).orElse(e.cidr());
            warnIfNotOnHost(c.toString());
            return c.toString();
        }
        warnIfNotOnHost(current);
        return current;
    }

    private void warnIfNotOnHost(String cidr) {
        if (cidr == null) {
            return;
        }
        Cidr.tryParseCidrOrIp(cidr).ifPresent(c -> {
            if (detector.onHost(c.address()).isEmpty()) {
                LOG.warn("Unable to confirm IPv{} address {} is assigned to this host", c.version(), c.address());
            }
        });
    }

    /** The host's interfaces (Calico's exclusion list applied), by name, for the versions in use. */
    private List<NodeSpec.Interface> interfaces(NodeSettings s) {
        boolean v4 = s.ipv4() instanceof AddressSetting.Explicit || s.ipv4() instanceof AddressSetting.Autodetect;
        boolean v6 = s.ipv6() instanceof AddressSetting.Explicit || s.ipv6() instanceof AddressSetting.Autodetect;
        if (!v4 && !v6) {
            return List.of();
        }
        int[] versions = v4 && v6 ? new int[] {4, 6} : v4 ? new int[] {4} : new int[] {6};
        return detector.reportable(versions).stream()
                .sorted(java.util.Comparator.comparing(HostInterface::name))
                .map(i -> new NodeSpec.Interface(i.name(), i.cidrs().stream().map(c -> c.address().toString()).toList()))
                .toList();
    }

    private void checkConflicts(String me, String v4, String v6) {
        for (Resource r : datastore.list(ResourceKind.NODE).items()) {
            Node other = (Node) r;
            if (other.metadata().name().equals(me) || other.spec() == null || other.spec().bgp() == null) {
                continue;
            }
            NodeSpec.BGP b = other.spec().bgp();
            if (sameAddress(v4, b.ipv4Address()) || sameAddress(v6, b.ipv6Address())) {
                throw new StartupException("Calico node " + other.metadata().name() + " already uses the address "
                        + (sameAddress(v4, b.ipv4Address()) ? v4 : v6) + " (set DISABLE_NODE_IP_CHECK=true to allow)");
            }
        }
    }

    private static boolean sameAddress(String a, String b) {
        Optional<IpAddress> x = a == null ? Optional.empty() : Cidr.tryParseCidrOrIp(a).map(Cidr::address);
        Optional<IpAddress> y = b == null ? Optional.empty() : Cidr.tryParseCidrOrIp(b).map(Cidr::address);
        return x.isPresent() && x.equals(y);
    }

    private static String describe(NodeSpec.BGP bgp) {
        if (bgp == null) {
            return "(no BGP addresses)";
        }
        return "(ipv4Address " + bgp.ipv4Address() + ", ipv6Address " + bgp.ipv6Address() + ", asNumber "
                + (bgp.asNumber() == null ? null : bgp.asNumber().value()) + ")";
    }
}
