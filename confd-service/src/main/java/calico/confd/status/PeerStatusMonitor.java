package calico.confd.status;

import calico.libcalico.bird.BirdControl;
import calico.libcalico.bird.BirdProtocol;
import calico.confd.render.Session.PeerType;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * Asks BIRD for {@code show protocols all} and keeps the answer for the REST endpoint, the
 * health indicator and the metrics. Metrics are per peer type (mesh, node, global), never per
 * peer address, so their cardinality does not grow with the cluster.
 */
public final class PeerStatusMonitor {

    private final BirdControl bird;
    private volatile PeerStates last = new PeerStates(List.of(), "not asked yet", Instant.EPOCH);

    public PeerStatusMonitor(BirdControl bird, MeterRegistry meters) {
        this.bird = bird;
        for (PeerType t : PeerType.values()) {
            String type = t.name().toLowerCase(Locale.ROOT);
            Gauge.builder("confd_bgp_sessions_established", this, m -> m.count(t, true))
                    .description("BGP sessions in state Established, by peer type").tag("peer_type", type)
                    .register(meters);
            Gauge.builder("confd_bgp_sessions", this, m -> m.count(t, false))
                    .description("BGP sessions BIRD has configured, by peer type").tag("peer_type", type)
                    .register(meters);
        }
        Gauge.builder("confd_bird_up", this, m -> m.last.reachable() ? 1 : 0)
                .description("1 when BIRD answered on its control socket at the last poll").register(meters);
    }

    /** Asks BIRD now; never throws. */
    public PeerStates refresh() {
        PeerStates s;
        try {
            s = new PeerStates(bird.protocols(), null, Instant.now());
        } catch (IOException | RuntimeException e) {
            s = new PeerStates(List.of(), "BIRD at " + bird.socket() + ": " + e.getMessage(), Instant.now());
        }
        last = s;
        return s;
    }

    public PeerStates last() {
        return last;
    }

    private double count(PeerType type, boolean establishedOnly) {
        return last.protocols().stream().filter(p -> "BGP".equals(p.proto()))
                .filter(p -> PeerType.ofProtocol(p.name()) == type)
                .filter(p -> !establishedOnly || p.established()).count();
    }

    /** {@return the protocols that are BGP sessions} */
    public static List<BirdProtocol> sessions(PeerStates s) {
        return s.protocols().stream().filter(p -> "BGP".equals(p.proto())).toList();
    }
}
