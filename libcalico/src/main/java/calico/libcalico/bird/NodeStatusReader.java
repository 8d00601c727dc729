package calico.libcalico.bird;

import calico.api.model.CalicoNodeStatusSpec;
import calico.api.model.CalicoNodeStatusStatus;
import calico.api.model.CalicoNodeStatusStatus.Agent;
import calico.api.model.CalicoNodeStatusStatus.Bgp;
import calico.api.model.CalicoNodeStatusStatus.Daemon;
import calico.api.model.CalicoNodeStatusStatus.LearnedFrom;
import calico.api.model.CalicoNodeStatusStatus.Peer;
import calico.api.model.CalicoNodeStatusStatus.Route;
import calico.api.model.CalicoNodeStatusStatus.Routes;
import java.io.IOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A CalicoNodeStatus's status, read from one BIRD: only the requested classes are asked of BIRD
 * and filled. Our BIRD 2 serves IPv4 and IPv6 from one daemon and one socket, so {@code birdV4}
 * and {@code birdV6} describe the same daemon (Calico runs BIRD 1.6 twice, {@code bird.ctl} and
 * {@code bird6.ctl}); peers and routes are split by address family.
 */
public final class NodeStatusReader {

    private final BirdControl bird;

    public NodeStatusReader(BirdControl bird) {
        this.bird = bird;
    }

    /**
     * {@return the status for {@code classes} at {@code now}}. When BIRD does not answer, the agent
     * (if asked) says {@code NotReady} and the BGP and route classes are left out: nothing is reported
     * that was not read.
     */
    public CalicoNodeStatusStatus read(List<String> classes, Instant now) {
        String at = now.truncatedTo(ChronoUnit.SECONDS).toString();
        boolean agent = classes.contains(CalicoNodeStatusSpec.AGENT);
        boolean bgp = classes.contains(CalicoNodeStatusSpec.BGP);
        boolean routes = classes.contains(CalicoNodeStatusSpec.ROUTES);
        try {
            Agent a = agent ? agent(bird.status()) : null;
            List<BirdProtocol> protocols = bgp || routes ? bird.protocols() : List.of();
            return new CalicoNodeStatusStatus(at, a, bgp ? bgp(protocols) : null,
                    routes ? routes(bird.routes(), protocols) : null);
        } catch (IOException e) {
            Daemon down = new Daemon(Daemon.NOT_READY, null, null, null, null);
            return new CalicoNodeStatusStatus(at, agent ? new Agent(down, down) : null, null, null);
        }
    }

    private static Agent agent(BirdStatus s) {
        Daemon d = new Daemon(s.up() ? Daemon.READY : Daemon.NOT_READY, s.version(), s.routerId(), s.lastReboot(),
                s.lastReconfiguration());
        return new Agent(d, d);
    }

    private static Bgp bgp(List<BirdProtocol> protocols) {
        List<Peer> v4 = new ArrayList<>();
        List<Peer> v6 = new ArrayList<>();
        int[] established = new int[2];
        int[] not = new int[2];
        for (BirdProtocol p : protocols) {
            Optional<PeerType> type = PeerType.of(p);
            if (type.isEmpty()) {
                continue;
            }
            int family = PeerType.ipv6(p) ? 1 : 0;
            if (p.established()) {
                established[family]++;
            } else {
                not[family]++;
            }
            (family == 1 ? v6 : v4).add(new Peer(PeerType.address(p), type.get().statusName(), sessionState(p), p.since()));
        }
        return new Bgp(established[0], not[0], established[1], not[1], v4, v6);
    }

    /** {@return BGP's session state}: the detail's {@code BGP state}, else the info column's first word; BIRD's {@code Down} is BGP's {@code Idle} */
    static String sessionState(BirdProtocol p) {
        String s = p.bgpState() != null ? p.bgpState() : p.info().isEmpty() ? "" : p.info().split("\\s+")[0];
        return s.isEmpty() || s.equals("Down") || s.equals("Passive") ? "Idle" : s;
    }

    private static Routes routes(List<BirdRoute> routes, List<BirdProtocol> protocols) {
        Map<String, BirdProtocol> byName = protocols.stream()
                .collect(Collectors.toMap(BirdProtocol::name, Function.identity(), (a, b) -> a));
        List<Route> v4 = new ArrayList<>();
        List<Route> v6 = new ArrayList<>();
        for (BirdRoute r : routes) {
            String iface = r.iface() != null ? r.iface() : r.kind().equals("unicast") ? "" : r.kind();
            Route out = new Route(r.primary() ? "FIB" : "RIB", r.destination(),
                    r.gateway() != null ? r.gateway() : "N/A", iface, learnedFrom(byName.get(r.protocol())));
            (r.ipv6() ? v6 : v4).add(out);
        }
        return new Routes(v4, v6);
    }

    private static LearnedFrom learnedFrom(BirdProtocol p) {
        if (p == null) {
            return null;
        }
        Optional<PeerType> type = PeerType.of(p);
        if (type.isPresent()) {
            return new LearnedFrom(type.get() == PeerType.NODE_MESH ? "NodeMesh" : "BGPPeer", PeerType.address(p));
        }
        return switch (p.proto()) {
            case "Kernel" -> new LearnedFrom("Kernel", null);
            case "Static" -> new LearnedFrom("Static", null);
            case "Direct" -> new LearnedFrom("Direct", null);
            default -> new LearnedFrom(p.proto(), null);
        };
    }
}
