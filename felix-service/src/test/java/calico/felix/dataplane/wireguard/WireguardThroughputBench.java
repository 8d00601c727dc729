package calico.felix.dataplane.wireguard;

import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * iperf3 (Debian's) pod to pod across two nodes through WireGuard (wireguard-go: this kernel has
 * no module), against node to node on the same veth underlay in the same run, on the
 * {@link GraphNodes} fixture (two kernel dataplanes, each fed by its own calculation graph).
 * Usage: {@code bench/run.sh felix-service calico.felix.dataplane.wireguard.WireguardThroughputBench [seconds] [rounds]}.
 * Prints each round and the median of each path; the ratio is reported, not a goal.
 */
public final class WireguardThroughputBench {

    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        try (GraphNodes nodes = new GraphNodes("wg-bn", "10.97.0", "10.246")) {
            nodes.startWithWireguard();
            TwoNodeUnderlay net = nodes.net;
            if (!Await.within(Duration.ofSeconds(20), () -> net.podA.pings(net.podIp(1), Duration.ofSeconds(1)))) {
                throw new IllegalStateException("pod A does not reach pod B through WireGuard");
            }
            List<Double> underlay = new ArrayList<>();
            List<Double> wireguard = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                underlay.add(iperf(net.nodeB, net.nodeIp(2), net.nodeA, seconds));
                wireguard.add(iperf(net.podB, net.podIp(1), net.podA, seconds));
                System.out.printf("round %d: node -> node %.2f Gbit/s, pod -> pod (WireGuard) %.2f Gbit/s%n", i + 1,
                        underlay.get(i), wireguard.get(i));
            }
            double u = median(underlay);
            double w = median(wireguard);
            System.out.printf("median over %d rounds of %d s: node -> node %.2f Gbit/s, pod -> pod through wireguard-go "
                    + "%.2f Gbit/s, ratio %.3f%n", rounds, seconds, u, w, w / u);
        }
    }

    /** {@return Gbit/s received by an iperf3 server at {@code ip} in {@code server} from a client in {@code client}} */
    static double iperf(NetNs server, String ip, NetNs client, int seconds) throws IOException, InterruptedException {
        Process s = new ProcessBuilder("ip", "netns", "exec", server.name(), "iperf3", "-s", "-B", ip)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            Await.until("iperf3 server listening", Duration.ofSeconds(10),
                    () -> !server.exec("ss", "-ltnH", "sport = :5201").isBlank());
            String out = client.exec("iperf3", "-c", ip, "-t", Integer.toString(seconds), "-J");
            JsonNode end = JSON.readTree(out).path("end").path("sum_received");
            return end.path("bits_per_second").asDouble() / 1e9;
        } finally {
            s.destroy();
            s.waitFor();
        }
    }

    static double median(List<Double> v) {
        List<Double> sorted = new ArrayList<>(v);
        sorted.sort(Double::compare);
        return sorted.get(sorted.size() / 2);
    }
}
