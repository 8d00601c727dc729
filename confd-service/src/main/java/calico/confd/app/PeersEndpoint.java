package calico.confd.app;

import calico.confd.daemon.ConfdDaemon;
import calico.confd.daemon.ConfdStatus;
import calico.confd.render.Session;
import calico.confd.render.Skipped;
import calico.confd.status.PeerStates;
import calico.libcalico.bird.BirdProtocol;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code GET /peers}: this node's BGP sessions as configured and as BIRD reports them right
 * now (what {@code calicoctl node status} shows), plus what was skipped and why.
 */
public final class PeersEndpoint {

    private final ConfdService service;

    PeersEndpoint(ConfdService service) {
        this.service = service;
    }

    /** One session: from the configuration and from BIRD. */
    public record Peer(String name, String peerType, String source, String neighbor, Integer port, long asNumber,
                       String state, String info, String since, boolean established, String lastError) {
    }

    /** The whole answer. */
    public record PeersResponse(String node, boolean birdReachable, String birdError, String configResult,
                                String configMessage, long generation, List<Peer> peers, List<Skipped> skipped) {
    }

    public PeersResponse peers() {
        ConfdDaemon daemon = service.daemon();
        PeerStates live = service.monitor().refresh();
        ConfdStatus status = daemon == null ? null : daemon.status();
        Map<String, BirdProtocol> byName = new LinkedHashMap<>();
        live.protocols().forEach(p -> byName.put(p.name(), p));
        List<Peer> peers = new ArrayList<>();
        if (status != null) {
            for (Session s : status.sessions()) {
                BirdProtocol p = byName.get(s.name());
                peers.add(new Peer(s.name(), s.type().name().toLowerCase(Locale.ROOT), s.source(), s.neighbor(),
                        s.port(), s.asNumber(), p == null ? "unknown" : p.state(), p == null ? null : p.info(),
                        p == null ? null : p.since(), p != null && p.established(), p == null ? null : p.lastError()));
            }
        }
        return new PeersResponse(service.properties().nodename(), live.reachable(), live.error(),
                status == null ? "DISABLED" : status.result().name(), status == null ? null : status.message(),
                status == null ? 0 : status.generation(), peers, status == null ? List.of() : status.skipped());
    }
}
