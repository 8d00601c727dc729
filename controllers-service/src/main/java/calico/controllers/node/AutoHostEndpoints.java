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
 * Automatic host endpoints ({@code hostEndpoint.autoCreate: Enabled}), as Calico makes them: one
 * {@code <node>-auto-hep} per Calico Node, interface {@code *}, the node's addresses as
 * {@code expectedIPs}, its labels plus {@value #CREATED_BY}={@value #CONTROLLER}, profile
 * {@value #DEFAULT_ALLOW}. Kept equal to that (labels, addresses, interface); deleted when its
 * node goes or auto-creation is switched off. Host endpoints without the label are never touched.
 */
public final class AutoHostEndpoints {

    public static final String CREATED_BY = "projectcalico.org/created-by";
    public static final String CONTROLLER = "calico-kube-controllers";
    public static final String DEFAULT_ALLOW = "projectcalico-default-allow";
    public static final String SUFFIX = "-auto-hep";

    private static final Logger LOG = LoggerFactory.getLogger(AutoHostEndpoints.class);

    private AutoHostEndpoints() {
    }

    /**
     * @param enabled whether auto host endpoints are on; off deletes every one this controller made
     * {@return the host endpoints created, updated and deleted}
     */
    public static List<Change> reconcile(Datastore datastore, ClusterNodes nodes, boolean enabled) {
        Map<String, HostEndpoint> existing = new HashMap<>();
        for (Resource r : datastore.list(ResourceKind.HOST_ENDPOINT).items()) {
            HostEndpoint h = (HostEndpoint) r;
            if (CONTROLLER.equals(h.metadata().labels().get(CREATED_BY))) {
                existing.put(h.metadata().name(), h);
            }
        }
        List<Change> out = new ArrayList<>();
        Map<String, HostEndpoint> desired = new HashMap<>();
        if (enabled) {
            nodes.calico().values().forEach(n -> desired.put(name(n.metadata().name()), desired(n)));
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

    static String name(String node) {
        return node + SUFFIX;
    }

    /** {@return the host endpoint node {@code n} should have} */
    static HostEndpoint desired(Node n) {
        Map<String, String> labels = new HashMap<>(n.metadata().labels());
        labels.put(CREATED_BY, CONTROLLER);
        HostEndpointSpec spec = new HostEndpointSpec(n.metadata().name(), "*", expectedIps(n), List.of(DEFAULT_ALLOW),
                List.of());
        return new HostEndpoint(ObjectMeta.named(name(n.metadata().name())).withLabels(labels), spec);
    }

    /** BGP addresses (without prefix), tunnel and WireGuard addresses, then InternalIPs; no repeats. */
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
        if (s.wireguard() != null) {
            address(s.wireguard().interfaceIPv4Address()).ifPresent(ips::add);
        }
        for (NodeSpec.Address a : s.addresses()) {
            if ("InternalIP".equals(a.type())) {
                address(a.address()).ifPresent(ips::add);
            }
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
                && want.spec().interfaceName().equals(have.spec().interfaceName())
                && want.spec().node().equals(have.spec().node());
    }

    /** For tests: the key of node {@code node}'s host endpoint. */
    public static ResourceKey key(String node) {
        return new ResourceKey(ResourceKind.HOST_ENDPOINT, null, name(node));
    }
}
