package calico.confd.render;

import calico.api.model.BGPConfigurationSpec;
import calico.api.model.BGPFilter;
import calico.api.model.BGPPassword;
import calico.api.model.BGPPeer;
import calico.api.model.BGPPeerSpec;
import calico.api.model.Node;
import calico.api.model.WorkloadEndpoint;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.api.selector.Selector;
import calico.confd.render.Session.PeerType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Decides this node's BGP sessions: the node-to-node mesh, then every BGPPeer in name order.
 * A peer with bad input is skipped with a {@link Skipped} reason; the others still render.
 * Two sessions to the same address and port keep the first (mesh before explicit peers).
 */
final class PeerPlanner {

    private static final Pattern V4_PORT = Pattern.compile("(\\d+\\.\\d+\\.\\d+\\.\\d+):(\\d+)");
    private static final Pattern V6_PORT = Pattern.compile("\\[([0-9a-fA-F:.]+)]:(\\d+)");

    private final LocalNode local;
    private final Map<String, LocalNode> others;
    private final BGPConfigurationSpec config;
    private final Map<String, BGPFilter> filters;
    private final SecretSource secrets;
    private final Integer listenPort;
    private final List<WorkloadEndpoint> workloads;
    private final Map<String, Session> byEndpoint = new LinkedHashMap<>();
    private final List<Skipped> skipped = new ArrayList<>();

    PeerPlanner(LocalNode local, Map<String, Node> nodes, BGPConfigurationSpec config, Map<String, BGPFilter> filters,
                SecretSource secrets, long defaultAs, List<WorkloadEndpoint> workloads) {
        this.local = local;
        this.workloads = List.copyOf(workloads);
        this.config = config;
        this.filters = filters;
        this.secrets = secrets;
        this.listenPort = config.listenPort() == null || config.listenPort() == 179 ? null : config.listenPort();
        this.others = new LinkedHashMap<>();
        for (Node n : nodes.values()) {
            if (n.metadata().name().equals(local.name())) {
                continue;
            }
            Optional<LocalNode> id = LocalNode.of(n, defaultAs);
            if (id.isPresent() && (id.get().asNumber() < 1 || id.get().asNumber() > 0xFFFF_FFFFL)) {
                skipped.add(new Skipped("Node " + n.metadata().name(), "spec.bgp.asNumber: " + id.get().asNumber()
                        + " is not an AS number (1-4294967295), so no session to it"));
            } else if (id.isPresent()) {
                others.put(n.metadata().name(), id.get());
            } else {
                skipped.add(new Skipped("Node " + n.metadata().name(),
                        "spec.bgp: no ipv4Address or ipv6Address, so no session to it"));
            }
        }
    }

    List<Session> sessions() {
        return List.copyOf(byEndpoint.values());
    }

    List<Skipped> skipped() {
        return List.copyOf(skipped);
    }

    PeerPlanner plan(List<BGPPeer> peers) {
        if (!Boolean.FALSE.equals(config.nodeToNodeMeshEnabled())) {
            mesh();
        }
        for (BGPPeer p : peers) {
            try {
                peer(p);
            } catch (IllegalArgumentException e) {
                skipped.add(new Skipped("BGPPeer " + p.metadata().name(), e.getMessage()));
            }
        }
        return this;
    }

    private void mesh() {
        String password = null;
        if (config.nodeMeshPassword() != null) {
            try {
                password = password(config.nodeMeshPassword(), "spec.nodeMeshPassword");
            } catch (IllegalArgumentException e) {
                skipped.add(new Skipped("BGPConfiguration default", e.getMessage() + "; node-to-node mesh not rendered"));
                return;
            }
        }
        Long restart = config.nodeMeshMaxRestartTime() == null ? null
                : GoDuration.seconds(config.nodeMeshMaxRestartTime());
        for (LocalNode other : others.values()) {
            for (int family : new int[] {4, 6}) {
                if (local.address(family) == null || other.address(family) == null) {
                    continue;
                }
                add(new Session(Session.protocolName(PeerType.MESH, other.address(family), listenPort), PeerType.MESH,
                        "node-to-node mesh", "ipv" + family, other.address(family), listenPort, other.asNumber(),
                        local.address(family), local.asNumber(), password, null, restart, null, null, null,
                        List.of(), List.of(), null), null);
            }
        }
    }

    private void peer(BGPPeer p) {
        BGPPeerSpec s = p.spec();
        if (s == null) {
            throw new IllegalArgumentException("spec: missing");
        }
        String source = "BGPPeer " + p.metadata().name();
        boolean workloads = notEmpty(s.localWorkloadSelector());
        boolean hasIp = s.peerIP() != null && !s.peerIP().isEmpty();
        boolean hasSelector = s.peerSelector() != null && !s.peerSelector().isEmpty();
        if (workloads) {
            if (hasIp || hasSelector) {
                throw new IllegalArgumentException((hasIp ? "spec.peerIP" : "spec.peerSelector")
                        + ": must be empty when localWorkloadSelector is set");
            }
            if (s.asNumber() == null) {
                throw new IllegalArgumentException("spec.asNumber: required when localWorkloadSelector is set");
            }
        } else if (hasIp == hasSelector) {
            throw new IllegalArgumentException(hasIp ? "spec.peerIP: must be empty when peerSelector is set"
                    : "spec: needs peerIP or peerSelector (neither is set)");
        }
        asNumber(s.asNumber() == null ? null : s.asNumber().value(), "spec.asNumber");
        asNumber(s.localASNumber() == null ? null : s.localASNumber().value(), "spec.localASNumber");
        boolean scoped = notEmpty(s.node()) || notEmpty(s.nodeSelector());
        Selector scope = scope(s);
        PeerType type = scoped ? PeerType.NODE : PeerType.GLOBAL;
        boolean appliesHere = scope.matches(labels(local));
        Options o = options(s);
        if (notEmpty(s.reachableBy()) && !hasIp) {
            throw new IllegalArgumentException("spec.reachableBy: needs spec.peerIP");
        }

        if (workloads) {
            if (appliesHere) {
                workloadSessions(source, s, o);
            }
            return;
        }
        if (hasIp) {
            if (!appliesHere) {
                return;
            }
            Endpoint e = endpoint(s.peerIP());
            int family = e.family();
            if (local.address(family) == null) {
                throw new IllegalArgumentException("spec.peerIP: " + s.peerIP() + " is IPv" + family
                        + " but this node has no IPv" + family + " BGP address");
            }
            long as = s.asNumber() == null ? local.asNumber() : s.asNumber().value();
            add(withReachableBy(session(type, source, family, e.address(), e.port(), as, o, null), s.reachableBy(),
                    family), source);
            return;
        }
        Selector peers = selector(s.peerSelector(), "spec.peerSelector");
        Set<String> done = new HashSet<>();
        if (appliesHere) {
            for (LocalNode other : others.values()) {
                if (peers.matches(labels(other)) && done.add(other.name())) {
                    nodeSessions(type, source, other, o);
                }
            }
        }
        // Calico peers both ways: the selected peers also peer with the nodes in scope.
        if (peers.matches(labels(local))) {
            for (LocalNode other : others.values()) {
                if (scope.matches(labels(other)) && done.add(other.name())) {
                    nodeSessions(type, source, other, o);
                }
            }
        }
    }

    /** {@code reachableBy}: a gateway of the peer's family, printed as a static route to the peer. */
    private static Session withReachableBy(Session s, String reachableBy, int family) {
        if (!notEmpty(reachableBy)) {
            return s;
        }
        IpAddress gw = IpAddress.tryParse(reachableBy).orElseThrow(() -> new IllegalArgumentException(
                "spec.reachableBy: \"" + reachableBy + "\" is not an IP address"));
        if (gw.version() != family) {
            throw new IllegalArgumentException("spec.reachableBy: " + reachableBy + " is IPv" + gw.version()
                    + " but spec.peerIP is IPv" + family);
        }
        return new Session(s.name(), s.type(), s.source(), s.family(), s.neighbor(), s.port(), s.asNumber(),
                s.localAddress(), s.localAs(), s.password(), s.rrClusterId(), s.restartTime(), s.ttlSecurity(),
                s.allowLocalAs(), s.nextHop(), s.importCalls(), s.exportCalls(), gw.toString());
    }

    /**
     * {@code localWorkloadSelector}: one session per address of each of this node's workload
     * endpoints the selector matches, from the BGPConfiguration's {@code localWorkloadPeeringIPV4/6}.
     */
    private void workloadSessions(String source, BGPPeerSpec s, Options o) {
        Selector selector = selector(s.localWorkloadSelector(), "spec.localWorkloadSelector");
        for (WorkloadEndpoint wep : workloads) {
            if (wep.spec() == null || !local.name().equals(wep.spec().node())
                    || !selector.matches(wep.metadata().labels())) {
                continue;
            }
            for (String net : wep.spec().ipNetworks()) {
                Optional<Cidr> c = Cidr.tryParseCidrOrIp(net);
                if (c.isEmpty()) {
                    skipped.add(new Skipped(source, "WorkloadEndpoint " + wep.metadata().namespace() + "/"
                            + wep.metadata().name() + " spec.ipNetworks: \"" + net + "\" is not a CIDR"));
                    continue;
                }
                int family = c.get().version();
                String peeringIp = family == 4 ? config.localWorkloadPeeringIPV4() : config.localWorkloadPeeringIPV6();
                Optional<IpAddress> localIp = notEmpty(peeringIp) ? IpAddress.tryParse(peeringIp) : Optional.empty();
                if (localIp.isEmpty() || localIp.get().version() != family) {
                    skipped.add(new Skipped(source, "BGPConfiguration: spec.localWorkloadPeeringIPV" + family
                            + (notEmpty(peeringIp) ? " \"" + peeringIp + "\" is not an IPv" + family + " address"
                            : " is not set") + ", so no session to workload " + wep.metadata().namespace() + "/"
                            + wep.metadata().name() + " at " + c.get().address()));
                    continue;
                }
                String address = c.get().address().toString();
                add(new Session(Session.protocolName(PeerType.LOCAL_WORKLOAD, address, null), PeerType.LOCAL_WORKLOAD,
                        source, "ipv" + family, address, null, s.asNumber().value(), localIp.get().toString(),
                        o.localAs() == null ? local.asNumber() : o.localAs(), o.password(), null, o.restart(), o.ttl(),
                        o.allowLocalAs(), o.nextHop(),
                        o.filters().stream().map(f -> FilterRenderer.functionName(f, "import", family)).toList(),
                        o.filters().stream().map(f -> FilterRenderer.functionName(f, "export", family)).toList(),
                        null), source);
            }
        }
    }

    private void nodeSessions(PeerType type, String source, LocalNode other, Options o) {
        // A reflector treats peers outside its cluster as clients.
        String rr = local.clusterId() != null && !local.clusterId().equals(other.clusterId()) ? local.clusterId() : null;
        for (int family : new int[] {4, 6}) {
            if (local.address(family) != null && other.address(family) != null) {
                add(session(type, source, family, other.address(family), listenPort, other.asNumber(), o, rr), source);
            }
        }
    }

    private Session session(PeerType type, String source, int family, String address, Integer port, long as, Options o,
                            String rrCluster) {
        return new Session(Session.protocolName(type, address, port), type, source, "ipv" + family, address, port, as,
                o.useNodeIp() ? local.address(family) : null, o.localAs() == null ? local.asNumber() : o.localAs(),
                o.password(), rrCluster, o.restart(), o.ttl(), o.allowLocalAs(), o.nextHop(),
                o.filters().stream().map(f -> FilterRenderer.functionName(f, "import", family)).toList(),
                o.filters().stream().map(f -> FilterRenderer.functionName(f, "export", family)).toList(), null);
    }

    /** Session settings shared by all sessions of one BGPPeer. */
    private record Options(boolean useNodeIp, Long localAs, String password, Long restart, Integer ttl,
                           Integer allowLocalAs, String nextHop, List<String> filters) {
    }

    private Options options(BGPPeerSpec s) {
        for (int i = 0; i < s.filters().size(); i++) {
            if (!filters.containsKey(s.filters().get(i))) {
                throw new IllegalArgumentException("spec.filters[" + i + "]: BGPFilter \"" + s.filters().get(i)
                        + "\" does not exist");
            }
        }
        Long restart;
        try {
            restart = s.maxRestartTime() == null ? null : GoDuration.seconds(s.maxRestartTime());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("spec.maxRestartTime: " + e.getMessage());
        }
        if (s.ttlSecurity() != null && (s.ttlSecurity() < 0 || s.ttlSecurity() > 255)) {
            throw new IllegalArgumentException("spec.ttlSecurity: must be between 0 and 255, got " + s.ttlSecurity());
        }
        if (s.numAllowedLocalASNumbers() != null && s.numAllowedLocalASNumbers() < 0) {
            throw new IllegalArgumentException("spec.numAllowedLocalASNumbers: must not be negative");
        }
        String nextHop = null;
        if (s.nextHopMode() == BGPPeerSpec.NextHopMode.Keep || Boolean.TRUE.equals(s.keepOriginalNextHop())) {
            nextHop = "keep";
        } else if (s.nextHopMode() == BGPPeerSpec.NextHopMode.Self) {
            nextHop = "self";
        }
        return new Options(s.sourceAddress() != BGPPeerSpec.SourceAddress.None,
                s.localASNumber() == null ? null : s.localASNumber().value(),
                s.password() == null ? null : password(s.password(), "spec.password"), restart,
                s.ttlSecurity() == null || s.ttlSecurity() == 0 ? null : s.ttlSecurity(),
                s.numAllowedLocalASNumbers() == null || s.numAllowedLocalASNumbers() == 0 ? null
                        : s.numAllowedLocalASNumbers(),
                nextHop, s.filters());
    }

    private String password(BGPPassword p, String field) {
        if (p.secretKeyRef() == null || !notEmpty(p.secretKeyRef().name()) || !notEmpty(p.secretKeyRef().key())) {
            throw new IllegalArgumentException(field + ".secretKeyRef: name and key are required");
        }
        String name = p.secretKeyRef().name();
        String key = p.secretKeyRef().key();
        Optional<String> value = secrets.get(name, key);
        if (value.isEmpty()) {
            if (Boolean.TRUE.equals(p.secretKeyRef().optional())) {
                return null;
            }
            throw new IllegalArgumentException(field + ": secret \"" + name + "\" has no key \"" + key
                    + "\" (or does not exist)");
        }
        String v = value.get();
        if (v.isEmpty() || v.chars().anyMatch(c -> c < 0x20 || c == '"' || c == '\\' || c == 0x7f)) {
            throw new IllegalArgumentException(field + ": secret \"" + name + "\" key \"" + key
                    + "\" is empty or holds a control character, quote or backslash");
        }
        return v;
    }

    private void add(Session s, String source) {
        String endpoint = s.neighbor() + (s.port() == null ? "" : ":" + s.port());
        Session existing = byEndpoint.get(endpoint);
        if (existing != null) {
            if (source != null) {
                skipped.add(new Skipped(source, "session to " + endpoint + " already rendered as " + existing.name()
                        + " (" + existing.source() + ")"));
            }
            return;
        }
        byEndpoint.put(endpoint, s);
    }

    private static void asNumber(Long as, String field) {
        if (as != null && (as < 1 || as > 0xFFFF_FFFFL)) {
            throw new IllegalArgumentException(field + ": " + as + " is not an AS number (1-4294967295)");
        }
    }

    private Selector scope(BGPPeerSpec s) {
        if (notEmpty(s.node())) {
            if (s.node().contains("'")) {
                throw new IllegalArgumentException("spec.node: \"" + s.node() + "\" is not a node name");
            }
            return Selector.parse(NODE_NAME_LABEL + " == '" + s.node() + "'");
        }
        return notEmpty(s.nodeSelector()) ? selector(s.nodeSelector(), "spec.nodeSelector") : Selector.all();
    }

    private static Selector selector(String text, String field) {
        try {
            return Selector.parse(text);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(field + ": " + e.getMessage());
        }
    }

    private static Map<String, String> labels(LocalNode n) {
        Map<String, String> l = new LinkedHashMap<>(n.labels());
        // spec.node is matched through the name, as a selector on a reserved label.
        l.put(NODE_NAME_LABEL, n.name());
        return l;
    }

    static final String NODE_NAME_LABEL = "projectcalico.org/confd-node-name";

    /** A peer address with its optional port. */
    private record Endpoint(String address, Integer port, int family) {
    }

    private static Endpoint endpoint(String peerIp) {
        String host = peerIp;
        Integer port = null;
        Matcher v4 = V4_PORT.matcher(peerIp);
        Matcher v6 = V6_PORT.matcher(peerIp);
        if (v4.matches()) {
            host = v4.group(1);
            port = Integer.parseInt(v4.group(2));
        } else if (v6.matches()) {
            host = v6.group(1);
            port = Integer.parseInt(v6.group(2));
        }
        if (port != null && (port < 1 || port > 65535)) {
            throw new IllegalArgumentException("spec.peerIP: port " + port + " is not 1-65535");
        }
        IpAddress ip = IpAddress.tryParse(host).orElseThrow(() -> new IllegalArgumentException(
                "spec.peerIP: \"" + peerIp + "\" is not <IP>, <IPv4>:<port> or [<IPv6>]:<port>"));
        return new Endpoint(ip.toString(), port == null || port == 179 ? null : port, ip.version());
    }

    private static boolean notEmpty(String s) {
        return s != null && !s.isEmpty();
    }
}
