package calico.confd.app;

import calico.libcalico.bird.BirdProtocol;
import calico.confd.daemon.ConfdDaemon;
import calico.confd.daemon.ConfdStatus;
import calico.confd.status.PeerStates;
import calico.confd.status.PeerStatusMonitor;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * Actuator's {@code bgp} health: UP while BIRD answers on its socket; details carry each
 * session's state, the last render result and what was skipped. Sessions that are not
 * Established do not make it DOWN (a peer being away is the network's state, not confd's).
 */
@Component("bgp")
public class BgpHealthIndicator implements HealthIndicator {

    private final ConfdService service;

    public BgpHealthIndicator(ConfdService service) {
        this.service = service;
    }

    @Override
    public Health health() {
        ConfdDaemon daemon = service.daemon();
        if (daemon == null) {
            return Health.up().withDetail("bgp", "disabled (CALICO_NETWORKING_BACKEND="
                    + service.properties().networkingBackend() + ")").build();
        }
        PeerStates live = service.monitor().last();
        ConfdStatus status = daemon.status();
        Map<String, String> sessions = new LinkedHashMap<>();
        for (BirdProtocol p : PeerStatusMonitor.sessions(live)) {
            sessions.put(p.name(), p.established() ? "Established" : p.state() + " " + p.info());
        }
        Health.Builder b = live.reachable() ? Health.up() : Health.down().withDetail("birdError", live.error());
        b.withDetail("config", status.result() + (status.message() == null ? "" : ": " + status.message()))
                .withDetail("generation", status.generation())
                .withDetail("sessions", sessions);
        if (!status.skipped().isEmpty()) {
            b.withDetail("skipped", status.skipped().stream().map(s -> s.source() + ": " + s.reason()).toList());
        }
        return b.build();
    }
}
