package calico.controllers.node;

import calico.api.model.HostEndpoint;
import calico.api.model.HostEndpointSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.controllers.reconcile.Change;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Automatic host endpoints ({@code hostEndpoint.autoCreate: Enabled}), as Calico makes them. With
 * {@code createDefaultHostEndpoint} (the default) one {@code <node>-auto-hep} per Calico Node, interface
 * {@code *}, the node's addresses as {@code expectedIPs}; per template ({@link HostEndpointTemplate}) and
 * selected node, {@code <node>-<generateName>-auto-hep} without interface name holding the node's
 * addresses inside the template's CIDRs (none inside: no host endpoint), or with an
 * {@code interfacePattern} one {@code <node>-<generateName>-<interface>-auto-hep} per matching interface of
 * the node ({@code spec.interfaces}) with that interface's addresses inside the CIDRs. Labels: the node's,
 * then the template's, plus {@value #CREATED_BY}={@value #CONTROLLER}; profile {@value #DEFAULT_ALLOW}.
 * Kept equal to that (labels, addresses, interface, node); deleted when their node goes, stops being
 * selected, its template goes, or auto-creation is switched off. Host endpoints without the label are
 * never touched.
 */
public final class AutoHostEndpoints {

    public static final String CREATED_BY = "projectcalico.org/created-by";
    public static final String CONTROLLER = "calico-kube-controllers";
    public static final String DEFAULT_ALLOW = "projectcalico-default-allow";
    public static final String SUFFIX = "-auto-hep";

    private static final Logger LOG = LoggerFactory.getLogger(AutoHostEndpoints.class);

    private AutoHostEndpoints() {
    }

    /** {@return the host endpoints created, updated and deleted} */
    public static List<Change> reconcile(Datastore datastore, ClusterNodes nodes, HostEndpointSettings settings) {
        Map<String, HostEndpoint> existing = new HashMap<>();
        for (Resource r : datastore.list(ResourceKind.HOST_ENDPOINT).items()) {
            HostEndpoint h = (HostEndpoint) r;
            if (CONTROLLER.equals(h.metadata().labels().get(CREATED_BY))) {
                existing.put(h.metadata().name(), h);
            }
        }
        List<Change> out = new ArrayList<>();
        Map<String, HostEndpoint> desired = new HashMap<>();
        if (settings.autoCreate()) {
            nodes.calico().values().forEach(n -> desired(n, settings).forEach(h -> desired.put(h.metadata().name(), h)));
        }
        for (HostEndpoint want : desired.values()) {
            HostEndpoint have = existing.get(want.metadata().name());
            try {
                if (have == null) {
                    datastore.create(want);
                    out.add(new Change.Created(want.key()));
                } else if (!same(have, want)) {
                    datastore.update(want.withMetadata(want.metadata().withResourceVersion(have.metadata().resourceVersion())));
                    out.add(new Change.Updated(want.key()));
                }
            } catch (DatastoreException.AlreadyExists | DatastoreException.Conflict | DatastoreException.NotFound e) {
                LOG.info("host endpoint {} changed meanwhile; next run settles it", want.metadata().name());
            } catch (DatastoreException.Invalid e) {
                // A node or interface name that makes no valid host endpoint (too long, an interface name with
                // characters a resource name may not hold): the others are still kept.
                LOG.warn("host endpoint {} cannot be written: {}", want.metadata().name(), e.getMessage());
            }
        }
        for (HostEndpoint h : existing.values()) {
            if (!desired.containsKey(h.metadata().name())) {
                try {
                    datastore.delete(h.key(), h.metadata().resourceVersion());
                    out.add(new Change.Deleted(h.key()));
                } catch (DatastoreException.NotFound | DatastoreException.Conflict e) {
                    LOG.info("host endpoint {} changed or went meanwhile; next run settles it", h.metadata().name());
                }
            }
        }
        out.forEach(c -> LOG.info("auto host endpoint {}", c));
        return out;
    }

    /** {@return the host endpoints node {@code n} should have} (auto-creation on). */
    static List<HostEndpoint> desired(Node n, HostEndpointSettings settings) {
        String node = n.metadata().name();
        List<HostEndpoint> out = new ArrayList<>();
        if (settings.createDefault()) {
            out.add(hostEndpoint(name(node), node, "*", expectedIps(n), n.metadata().labels(), Map.of()));
        }
        for (HostEndpointTemplate t : settings.templates()) {
            if (!t.nodeSelector().matches(n.metadata().labels())) {
                continue;
            }
            String base = node + "-" + t.generateName();
            if (t.interfacePattern().isEmpty()) {
                List<String> ips = expectedIps(n).stream().filter(t::admits).toList();
                if (!ips.isEmpty()) {
                    out.add(hostEndpoint(base + SUFFIX, node, "", ips,
                            n.metadata().labels(), t.labels()));
                }
                continue;
            }
            for (NodeSpec.Interface i : n.spec() == null ? List.<NodeSpec.Interface>of() : n.spec().interfaces()) {
                if (i.name() != null && t.selectsInterface(i.name())) {
                    List<String> ips = i.addresses().stream().map(AutoHostEndpoints::address).flatMap(Optional::stream)
                            .filter(t::admits).distinct().toList();
                    out.add(hostEndpoint(base + "-" + i.name() + SUFFIX, node, i.name(), ips, n.metadata().labels(),
                            t.labels()));
                }
            }
        }
        return out;
    }

    private static HostEndpoint hostEndpoint(String name, String node, String interfaceName, List<String> ips,
                                             Map<String, String> nodeLabels, Map<String, String> templateLabels) {
        Map<String, String> labels = new HashMap<>(nodeLabels);
        labels.putAll(templateLabels);
        labels.put(CREATED_BY, CONTROLLER);
        HostEndpointSpec spec = new HostEndpointSpec(node, interfaceName, ips, List.of(DEFAULT_ALLOW), List.of());
        return new HostEndpoint(ObjectMeta.named(name).withLabels(labels), spec);
    }

    static String name(String node) {
        return node + SUFFIX;
    }

    /**
     * BGP addresses (without prefix), the IPIP and VXLAN tunnel addresses, the WireGuard addresses, the
     * InternalIPs, then the addresses of the interfaces the node reported; no repeats.
     */
    static List<String> expectedIps(Node n) {
        NodeSpec s = n.spec();
        Set<String> ips = new LinkedHashSet<>();
        if (s == null) {
            return List.of();
        }
        if (s.bgp() != null) {
            address(s.bgp().ipv4Address()).ifPresent(ips::add);
            address(s.bgp().ipv6Address()).ifPresent(ips::add);
            address(s.bgp().ipv4IPIPTunnelAddr()).ifPresent(ips::add);
        }
        address(s.ipv4VXLANTunnelAddr()).ifPresent(ips::add);
        address(s.ipv6VXLANTunnelAddr()).ifPresent(ips::add);
        if (s.wireguard() != null) {
            address(s.wireguard().interfaceIPv4Address()).ifPresent(ips::add);
            address(s.wireguard().interfaceIPv6Address()).ifPresent(ips::add);
        }
        for (NodeSpec.Address a : s.addresses()) {
            if ("InternalIP".equals(a.type())) {
                address(a.address()).ifPresent(ips::add);
            }
        }
        for (NodeSpec.Interface i : s.interfaces()) {
            i.addresses().forEach(a -> address(a).ifPresent(ips::add));
        }
        return List.copyOf(ips);
    }

    private static Optional<String> address(String cidrOrIp) {
        if (cidrOrIp == null || cidrOrIp.isEmpty()) {
            return Optional.empty();
        }
        return Cidr.tryParseCidrOrIp(cidrOrIp).map(c -> c.address().toString());
    }

    /** What Calico compares: labels, expected addresses, interface (profiles and ports are the user's to add). */
    private static boolean same(HostEndpoint have, HostEndpoint want) {
        return have.metadata().labels().equals(want.metadata().labels())
                && have.spec() != null
                && have.spec().expectedIPs().equals(want.spec().expectedIPs())
                && want.spec().interfaceName().equals(have.spec().interfaceName() == null ? "" : have.spec().interfaceName())
                && want.spec().node().equals(have.spec().node());
    }

    /** For tests: the key of node {@code node}'s default host endpoint. */
    public static ResourceKey key(String node) {
        return new ResourceKey(ResourceKind.HOST_ENDPOINT, null, name(node));
    }
}
