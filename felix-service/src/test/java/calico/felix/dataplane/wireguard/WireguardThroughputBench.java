package calico.felix.dataplane.wireguard;

import calico.felix.testing.Iperf3;
import calico.libcalico.testing.Await;
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
                underlay.add(Iperf3.gbps(net.nodeB, net.nodeIp(2), net.nodeA, seconds));
                wireguard.add(Iperf3.gbps(net.podB, net.podIp(1), net.podA, seconds));
                System.out.printf("round %d: node -> node %.2f Gbit/s, pod -> pod (WireGuard) %.2f Gbit/s%n", i + 1,
                        underlay.get(i), wireguard.get(i));
            }
            double u = Iperf3.median(underlay);
            double w = Iperf3.median(wireguard);
            System.out.printf("median over %d rounds of %d s: node -> node %.2f Gbit/s, pod -> pod through wireguard-go "
                    + "%.2f Gbit/s, ratio %.3f%n", rounds, seconds, u, w, w / u);
        }
    }
}
