package calico.ctl;

import calico.libcalico.bird.BirdControl;
import calico.libcalico.bird.BirdProtocol;
import calico.libcalico.bird.PeerType;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code calicoctl node status} as Calico prints it: "Calico process is running.", then per family
 * a table of BGP sessions (PEER ADDRESS, PEER TYPE, STATE, SINCE, INFO) or "No IPv4 peers found.".
 * Our BIRD 2 serves both families on one socket, so both tables come from it. When BIRD does not
 * answer, "Calico process is not running." and the reason on stderr, exit status 1.
 */
final class NodeStatusCommand {

    /** Calico's socket path (confd's {@code CALICO_BIRD_SOCKET} default). */
    static final String DEFAULT_SOCKET = "/var/run/calico/bird.ctl";
    private static final List<String> HEADER = List.of("PEER ADDRESS", "PEER TYPE", "STATE", "SINCE", "INFO");

    private final BirdControl bird;
    private final PrintStream out;
    private final PrintStream err;

    NodeStatusCommand(Path socket, PrintStream out, PrintStream err) {
        this.bird = new BirdControl(socket, Duration.ofSeconds(10));
        this.out = out;
        this.err = err;
    }

    static Path socket(Map<String, String> env) {
        String s = env.get("CALICO_BIRD_SOCKET");
        return Path.of(s == null || s.isBlank() ? DEFAULT_SOCKET : s);
    }

    int run() {
        List<BirdProtocol> protocols;
        try {
            protocols = bird.protocols();
        } catch (IOException e) {
            out.println("Calico process is not running.");
            err.println("calicoctl: BIRD is not running: cannot query its control socket " + bird.socket() + " ("
                    + e.getMessage() + "); is calico-node running on this host? (CALICO_BIRD_SOCKET names another socket)");
            return 1;
        }
        out.println("Calico process is running.");
        for (String family : List.of("IPv4", "IPv6")) {
            boolean v6 = family.equals("IPv6");
            List<List<String>> rows = new ArrayList<>();
            for (BirdProtocol p : protocols) {
                Optional<PeerType> type = PeerType.of(p);
                if (type.isPresent() && PeerType.ipv6(p) == v6) {
                    rows.add(List.of(PeerType.address(p), type.get().displayName(), p.state(), p.since(), p.info()));
                }
            }
            out.println();
            out.println(family + " BGP status");
            if (rows.isEmpty()) {
                out.println("No " + family + " peers found.");
            } else {
                BorderedTable.print(out, HEADER, rows, Set.of());
            }
        }
        out.println();
        return 0;
    }
}
