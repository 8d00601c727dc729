package calico.felix.e2e;

import calico.api.model.EncapsulationMode;
import calico.api.model.IPAMBlock;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.net.Cidr;
import calico.felix.e2e.MultiNodeCluster.ClusterNode;
import calico.libcalico.testing.EtcdServerExtension;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import calico.dataplane.testing.NetNs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Issue 23's first benchmark: from "CNI ADD returned" on node A to the first packet from a pod
 * on node B arriving in the new pod, over VXLAN ({@code --mode=vxlan}, the default), plain BGP
 * ({@code --mode=bgp}: no encapsulation, confd + BIRD on each node carry the blocks) or WireGuard
 * ({@code --mode=wireguard}: no encapsulation, wireguard-go; B's peer for A allows A's blocks),
 * p50/p99 over 100 pods.
 *
 * <p>Two nodes of a {@link MultiNodeCluster} on one underlay subnet, a real etcd on tmpfs, one
 * in-process felix per node (the backend is the first argument: {@code nftables}, the default, or
 * {@code iptables-nft}). One sender pod on node B sends a UDP datagram every {@link #SEND_EVERY_MS}
 * ms to the pod being measured. Per pod, sequentially: the pod is wired on node A as the CNI plugin
 * leaves it and its WorkloadEndpoint is written ({@link MultiNodeCluster#pod}: that call's return
 * is "CNI ADD returned", t0); a UDP socket in the pod records when the first datagram arrives. The
 * delay is that arrival minus t0 (resolution: the send interval). Node B already routes A's
 * blocks through {@code vxlan.calico} (or BIRD's route, or the WireGuard peer: they are affine to A
 * before the pods exist), so the delay is felix on A seeing the endpoint and programming its route,
 * proxy ARP and policy.
 *
 * <p>Run: {@code bench/run.sh felix-service calico.felix.e2e.CrossNodeFirstPacketBench [nftables|iptables-nft] [--pods=N] [--mode=vxlan|bgp|wireguard]}
 * (as root).
 */
public final class CrossNodeFirstPacketBench {

    private static final int SEND_EVERY_MS = 2;
    private static final int UDP_PORT = 7000;
    private static final Duration GIVE_UP = Duration.ofSeconds(20);

    private CrossNodeFirstPacketBench() {
    }

    public static void main(String[] args) throws Exception {
        Backend backend = Backend.NFTABLES;
        int pods = 100;
        String mode = "vxlan";
        for (String a : args) {
            if (a.startsWith("--pods=")) {
                pods = Integer.parseInt(a.substring("--pods=".length()));
            } else if (a.startsWith("--mode=")) {
                mode = a.substring("--mode=".length());
                if (!List.of("vxlan", "bgp", "wireguard").contains(mode)) {
                    throw new IllegalArgumentException("--mode=" + mode + ": vxlan, bgp or wireguard");
                }
            } else if (a.equals("iptables-nft")) {
                backend = Backend.IPTABLES_NFT;
            } else if (!a.equals("nftables")) {
                throw new IllegalArgumentException("unknown argument " + a
                        + ": [nftables|iptables-nft] [--pods=N] [--mode=vxlan|bgp|wireguard]");
            }
        }
        if (pods > 120) {
            throw new IllegalArgumentException("--pods=" + pods + ": at most 120 (node A has two /26 blocks)");
        }
        EtcdServerExtension etcd = new EtcdServerExtension();
        etcd.beforeAll(null); // the extension outside JUnit: starts etcd on tmpfs (the context is unused)
        List<Double> delaysMs = new ArrayList<>();
        try {
            TestDatastore.Etcd datastore = new TestDatastore.Etcd(etcd);
            datastore.reset();
            try (MultiNodeCluster c = new MultiNodeCluster(datastore, backend)) {
                if (mode.equals("wireguard")) {
                    Writes.upsert(c.store(), new calico.api.model.FelixConfiguration(ObjectMeta.named("default"),
                            calico.api.codec.ResourceCodec.get().jsonMapper().convertValue(
                                    java.util.Map.of("wireguardEnabled", true), calico.api.model.FelixConfigurationSpec.class)));
                }
                c.pool(mode.equals("vxlan") ? EncapsulationMode.Always : EncapsulationMode.Never, EncapsulationMode.Never);
                ClusterNode a = c.addNode("bench-node-a", 1, 0);
                ClusterNode b = c.addNode("bench-node-b", 2, 0);
                // A second block for A's pods beyond the first /26 (the fixture numbers pods on from its tunnel address).
                String extra = "10.75.1.64/26";
                Writes.upsert(c.store(), new IPAMBlock(ObjectMeta.named(IpamNames.blockName(Cidr.parse(extra))),
                        MultiNodeCluster.emptyBlock(extra, a.name())));
                long t = System.nanoTime();
                c.startFelix(a);
                c.startFelix(b);
                if (mode.equals("bgp")) {
                    // A's second block is confirmed affine too, so BIRD advertises it (startBird writes the first's).
                    Writes.upsert(c.store(), new calico.api.model.BlockAffinity(ObjectMeta.named(
                            IpamNames.affinityName(a.name(), Cidr.parse(extra))), calico.api.model.BlockAffinitySpec.of(
                                    calico.api.model.BlockAffinitySpec.CONFIRMED, a.name(), extra)));
                    c.startBird(a);
                    c.startBird(b);
                    calico.libcalico.testing.Await.until("B's BIRD routes to A's two blocks", Duration.ofSeconds(60),
                            () -> b.netns().exec("ip", "route", "show", "proto", "bird").contains("10.75.1.0/26 via")
                                    && b.netns().exec("ip", "route", "show", "proto", "bird").contains("10.75.1.64/26 via"));
                }
                System.out.printf(Locale.ROOT, "[bench] %s, two felixes ready in %d ms, load average %s%n", backend,
                        (System.nanoTime() - t) / 1_000_000, loadAverage());
                Workload sender = c.pod(b, "bench", "sender");
                try (DatagramSocket out = sender.netns().call(DatagramSocket::new)) {
                    // Warm-up, not counted: until felix on B has the sender's endpoint, its packets are dropped
                    // there (Calico drops traffic from a workload interface it does not know).
                    Workload warm = c.pod(a, "bench", "warm");
                    long w0 = System.nanoTime();
                    if (firstArrival(sender, out, warm, GIVE_UP) < 0) {
                        throw new IllegalStateException("warm-up: no packet from " + sender + " reached " + warm);
                    }
                    System.out.printf(Locale.ROOT, "[bench] warm-up pod (sender's endpoint too): %d ms%n",
                            (System.nanoTime() - w0) / 1_000_000);
                    // Control: a pod wired on A whose endpoint is never written receives nothing (else the
                    // delays below would measure the wiring, not felix).
                    NetNs ctl = NetNs.create("rt-ctl");
                    try {
                        Cluster.wireAsCni(a.netns(), "calictl0", ctl, "10.75.1.119");
                        Workload control = new Workload("bench", "control", "10.75.1.119", "calictl0", ctl);
                        if (firstArrival(sender, out, control, Duration.ofSeconds(1)) >= 0) {
                            throw new IllegalStateException("a pod without a WorkloadEndpoint received a packet");
                        }
                        System.out.println("[bench] control: a pod wired on A without its endpoint received nothing in 1 s");
                    } finally {
                        ctl.close();
                    }
                    for (int i = 1; i <= pods; i++) {
                        Workload target = c.pod(a, "bench", "p" + i);
                        long t0 = System.nanoTime();
                        long arrived = firstArrival(sender, out, target, GIVE_UP);
                        if (arrived < 0) {
                            throw new IllegalStateException("no packet from " + sender + " reached " + target + " ("
                                    + target.ip() + ") within 20 s");
                        }
                        delaysMs.add((arrived - t0) / 1e6);
                    }
                }
            }
        } finally {
            etcd.afterAll(null);
        }
        List<Double> sorted = new ArrayList<>(delaysMs);
        Collections.sort(sorted);
        System.out.printf(Locale.ROOT,
                "[bench] CNI ADD on node A -> first packet from node B (%s, %s), %d pods: p50 %.0f ms, p90 %.0f ms, "
                        + "p99 %.0f ms, max %.0f ms, min %.0f ms; load average %s%n",
                mode, backend, sorted.size(), pct(sorted, 50), pct(sorted, 90), pct(sorted, 99), sorted.get(sorted.size() - 1),
                sorted.get(0), loadAverage());
        System.out.println("[bench] delays in pod order (ms): " + delaysMs.stream()
                .map(d -> String.format(Locale.ROOT, "%.0f", d)).toList());
        System.exit(0);
    }

    /**
     * Sends from {@code sender} to {@code target} every {@link #SEND_EVERY_MS} ms until a socket in
     * the target pod receives one; {@return the receive time ({@link System#nanoTime}), or -1 after {@code giveUp}}.
     */
    private static long firstArrival(Workload sender, DatagramSocket out, Workload target, Duration giveUp)
            throws IOException {
        try (DatagramSocket in = target.netns().call(() -> new DatagramSocket(new InetSocketAddress(target.ip(), UDP_PORT)))) {
            in.setSoTimeout(SEND_EVERY_MS);
            byte[] payload = sender.ip().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            DatagramPacket probe = new DatagramPacket(payload, payload.length, new InetSocketAddress(target.ip(), UDP_PORT));
            DatagramPacket got = new DatagramPacket(new byte[64], 64);
            long start = System.nanoTime();
            while (System.nanoTime() - start < giveUp.toNanos()) {
                try {
                    out.send(probe);
                } catch (IOException e) {
                    // no route yet on this side: keep trying
                }
                try {
                    in.receive(got);
                    return System.nanoTime();
                } catch (SocketTimeoutException e) {
                    // nothing yet
                }
            }
            return -1;
        }
    }

    private static double pct(List<Double> sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private static String loadAverage() {
        return String.format(Locale.ROOT, "%.1f",
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
}
