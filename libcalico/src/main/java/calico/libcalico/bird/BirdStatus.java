package calico.libcalico.bird;

/**
 * BIRD's {@code show status}: who it is and when it last (re)started and read its configuration.
 *
 * @param version             BIRD's version ({@code 2.0.12})
 * @param routerId            the router id it uses
 * @param lastReboot          when it started, as BIRD prints it
 * @param lastReconfiguration when it last read its configuration, as BIRD prints it
 * @param up                  whether it says {@code Daemon is up and running} (code 0013)
 */
public record BirdStatus(String version, String routerId, String lastReboot, String lastReconfiguration, boolean up) {

    /** Reads {@code show status}: 1000 the version, 1011 the facts, 0013 up (0014/0015 shutting down, graceful restart). */
    static BirdStatus parse(BirdReply reply) {
        String version = "";
        String routerId = "";
        String boot = "";
        String reconf = "";
        for (BirdReply.Line l : reply.lines()) {
            String t = l.text().trim();
            if (l.code() == 1000 && t.startsWith("BIRD ")) {
                version = t.substring("BIRD ".length()).trim();
            } else if (t.startsWith("Router ID is ")) {
                routerId = t.substring("Router ID is ".length()).trim();
            } else if (t.startsWith("Last reboot on ")) {
                boot = t.substring("Last reboot on ".length()).trim();
            } else if (t.startsWith("Last reconfiguration on ")) {
                reconf = t.substring("Last reconfiguration on ".length()).trim();
            }
        }
        return new BirdStatus(version, routerId, boot, reconf, reply.finalCode() == 13);
    }
}
