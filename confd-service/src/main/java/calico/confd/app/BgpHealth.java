package calico.confd.app;

import calico.confd.daemon.ConfdDaemon;
import calico.confd.daemon.ConfdStatus;
import calico.confd.status.PeerStates;
import calico.confd.status.PeerStatusMonitor;
import calico.libcalico.bird.BirdProtocol;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code bgp} component of {@code /actuator/health}: UP while BIRD answers on its socket; details
 * carry each session's state, the last render result and what was skipped. Sessions that are not
 * Established do not make it DOWN (a peer being away is the network's state, not confd's).
 */
final class BgpHealth {

    /** @param up whether BIRD answers (or BGP is off); {@code details} as Actuator's JSON has them */
    record Answer(boolean up, Map<String, Object> details) {
    }

    private final ConfdService service;

    BgpHealth(ConfdService service) {
        this.service = service;
    }

    Answer health() {
        Map<String, Object> details = new LinkedHashMap<>();
        ConfdDaemon daemon = service.daemon();
        if (daemon == null) {
            details.put("bgp", "disabled (CALICO_NETWORKING_BACKEND=" + service.properties().networkingBackend() + ")");
            return new Answer(true, details);
        }
        PeerStates live = service.monitor().last();
        ConfdStatus status = daemon.status();
        Map<String, String> sessions = new LinkedHashMap<>();
        for (BirdProtocol p : PeerStatusMonitor.sessions(live)) {
            sessions.put(p.name(), p.established() ? "Established" : p.state() + " " + p.info());
        }
        if (!live.reachable()) {
            details.put("birdError", live.error());
        }
        details.put("config", status.result() + (status.message() == null ? "" : ": " + status.message()));
        details.put("generation", status.generation());
        details.put("sessions", sessions);
        if (!status.skipped().isEmpty()) {
            details.put("skipped", status.skipped().stream().map(s -> s.source() + ": " + s.reason()).toList());
        }
        return new Answer(live.reachable(), details);
    }
}
