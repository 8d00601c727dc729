package calico.felix.dataplane.wireguard;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.testing.NetNs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Two node namespaces joined by a veth underlay ({@code eth1}, {@code <underlay>.1/24} and
 * {@code .2/24}, default route out of it so proxy ARP answers the pods), and a pod on each,
 * wired as the CNI plugin leaves it ({@code <pods>.0.5} behind {@code calipoda} on node A,
 * {@code <pods>.1.5} behind {@code calipodb} on node B). {@link #close()} removes the
 * WireGuard devices before the namespaces (a wireguard-go daemon keeps its namespace alive
 * after {@code ip netns delete}) and their socket directories.
 */
public final class TwoNodeUnderlay implements AutoCloseable {

    public static final String DEVICE = "wireguard.cali";

    private final List<NetNs> namespaces = new ArrayList<>();
    public final NetNs nodeA;
    public final NetNs nodeB;
    public final NetNs podA;
    public final NetNs podB;
    /** e.g. {@code 10.99.0}: the nodes are {@code .1} and {@code .2}. */
    public final String underlay;
    /** e.g. {@code 10.244}: the pods are {@code <pods>.0.5} and {@code <pods>.1.5}. */
    public final String pods;

    public TwoNodeUnderlay(String prefix, String underlay, String pods) {
        this.underlay = underlay;
        this.pods = pods;
        try {
            nodeA = ns(prefix + "a");
            nodeB = ns(prefix + "b");
            nodeA.veth("eth1", nodeB, "eth1");
            nodeA.exec("ip", "addr", "add", nodeIp(1) + "/24", "dev", "eth1");
            nodeB.exec("ip", "addr", "add", nodeIp(2) + "/24", "dev", "eth1");
            nodeA.exec("ip", "route", "add", "default", "dev", "eth1");
            nodeB.exec("ip", "route", "add", "default", "dev", "eth1");
            podA = pod(prefix + "p", nodeA, "calipoda", podIp(0));
            podB = pod(prefix + "p", nodeB, "calipodb", podIp(1));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    public String nodeIp(int n) {
        return underlay + "." + n;
    }

    /** {@return the pod address on node {@code block}} (0: A, 1: B) */
    public String podIp(int block) {
        return pods + "." + block + ".5";
    }

    /** {@return node {@code block}'s WireGuard interface address} */
    public String wireguardIp(int block) {
        return pods + "." + block + ".1";
    }

    private NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }

    private NetNs pod(String prefix, NetNs node, String hostIf, String ip) {
        NetNs pod = ns(prefix);
        node.veth(hostIf, pod, "eth0");
        pod.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        pod.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
        return pod;
    }

    /** Node {@code name} at {@code ip} with a WireGuard interface address and, when not null, a published key. */
    public static Node node(String name, String ip, String wgAddr, String key) {
        NodeSpec spec = new NodeSpec(new NodeSpec.BGP(null, ip + "/24", null, null, null), null, null, null, null, null,
                new NodeSpec.Wireguard(wgAddr, null), null, null);
        return new Node(ObjectMeta.named(name), spec, key == null ? null : new NodeStatus(key, null, null));
    }

    /** A pod's endpoint, named as Calico names it ({@code <node>-k8s-<pod>-eth0}), with the {@code kns.test} profile. */
    public static WorkloadEndpoint wep(String pod, String node, String ip, String iface) {
        return new WorkloadEndpoint(ObjectMeta.namespaced("test", node + "-k8s-" + pod + "-eth0"),
                new WorkloadEndpointSpec("k8s", null, node, null, pod, "eth0", null, List.of(ip + "/32"), null,
                        null, null, List.of("kns.test"), iface, "ee:ee:ee:ee:ee:ee", List.of(), null));
    }

    /** {@return where felix keeps node {@code ns}'s wireguard-go socket} */
    public static Path socketDir(NetNs ns) {
        return WireguardHost.socketDirFor(ns.name());
    }

    @Override
    public void close() {
        for (NetNs n : namespaces) {
            n.tryExec("ip", "link", "del", DEVICE);
            n.close();
            Path dir = socketDir(n);
            if (Files.exists(dir)) {
                try (var files = Files.walk(dir)) {
                    files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        namespaces.clear();
    }
}
