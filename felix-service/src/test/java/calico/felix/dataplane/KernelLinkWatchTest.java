package calico.felix.dataplane;

import static calico.felix.dataplane.KernelTestbed.allowAllProfile;
import static calico.felix.dataplane.KernelTestbed.felixConfig;
import static calico.felix.dataplane.KernelTestbed.tier;
import static calico.felix.dataplane.KernelTestbed.wep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.Await;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The link monitor: with the refresh interval at 10 minutes, an endpoint that arrives before its
 * veth is routed (and its interface configured) as soon as the veth appears, not at the next
 * refresh; when the veth vanishes the interface is pending again, and a re-created veth is routed
 * again. No refresh runs during the test, so only the link announcements can have done it.
 */
class KernelLinkWatchTest {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    /** The brief's bound: the route follows the veth within a second (the refresh is 10 minutes away). */
    private static final Duration PROMPT = Duration.ofSeconds(1);
    private static final String A_IP = "10.67.0.1";
    private static final String C_IP = "10.67.0.3";
    private static final String A_IF = "calia1b2c3d6";
    private static final String C_IF = "calic1b2c3d6";

    private KernelTestbed bed;

    @AfterEach
    void tearDown() {
        if (bed != null) {
            bed.close();
        }
    }

    /**
     * Calico's VXLAN device deleted behind felix's back is rebuilt from the link announcement, with
     * its neighbour, FDB entry and route, long before the 10-minute refresh.
     */
    @Test
    void aDeletedVxlanDeviceIsRebuiltAtOnce() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        bed = new KernelTestbed("klv");
        bed.dataplane = new KernelDataplane(bed.host.name());
        bed.put(felixConfig(Map.of("iptablesRefreshInterval", "10m")), tier("default", 1000.0),
                new calico.api.model.IPPool(calico.api.model.ObjectMeta.named("p"), new calico.api.model.IPPoolSpec(
                        "10.76.0.0/16", calico.api.model.EncapsulationMode.Always, null, null, null, null, 26, null, null,
                        null, null)),
                vxlanNode(KernelTestbed.NODE, "192.168.255.1/32", "10.76.0.0"),
                vxlanNode("node2", "192.168.255.2/32", "10.76.1.0"),
                new calico.api.model.IPAMBlock(calico.api.model.ObjectMeta.named("10-76-1-0-26"),
                        new calico.api.model.IPAMBlockSpec("10.76.1.0/26", "host:node2", null,
                                java.util.Collections.nCopies(64, null), java.util.stream.IntStream.range(0, 64).boxed().toList(),
                                null, 0L, null, null, null)));
        bed.inSync();
        Predicate<String> programmed = r -> r.contains("10.76.1.0/26 via 10.76.1.0 dev vxlan.calico onlink");
        Await.until("VXLAN route programmed", Duration.ofSeconds(10), () -> programmed.test(remoteRoutes()));

        String before = bed.host.exec("cat", "/sys/class/net/vxlan.calico/ifindex").strip();
        bed.host.exec("ip", "link", "del", "vxlan.calico");
        // A new device (new ifindex) with its route, long before the refresh: the announcement did it.
        Await.until("vxlan.calico and its route rebuilt from the link announcement", Duration.ofSeconds(2),
                () -> programmed.test(remoteRoutes()) && !before.equals(bed.host.tryExec("cat",
                        "/sys/class/net/vxlan.calico/ifindex").output().strip()));
        assertThat(bed.host.exec("ip", "-4", "neigh", "show", "dev", "vxlan.calico")).contains("10.76.1.0 lladdr");
        assertThat(bed.host.exec("bridge", "fdb", "show", "dev", "vxlan.calico")).contains("dst 192.168.255.2 self permanent");
    }

    private String remoteRoutes() {
        return bed.host.exec("ip", "-4", "route", "show", "proto", "80");
    }

    private static calico.api.model.Node vxlanNode(String name, String address, String tunnel) {
        return new calico.api.model.Node(calico.api.model.ObjectMeta.named(name), new calico.api.model.NodeSpec(
                new calico.api.model.NodeSpec.BGP(null, address, null, null, null), tunnel, null, null, null, null, null,
                null, null));
    }

    @Test
    void anEndpointBeforeItsVethIsRoutedAsSoonAsTheVethAppears() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        bed = new KernelTestbed("klw");
        NetNs a = bed.workload("klwa", A_IF, A_IP);
        NetNs c = bed.ns("klwc");
        bed.dataplane = new KernelDataplane(bed.host.name());

        bed.put(felixConfig(Map.of("iptablesRefreshInterval", "10m")), tier("default", 1000.0),
                allowAllProfile("kns.test"), wep("a", A_IP, A_IF, "a"), wep("c", C_IP, C_IF, "c"));
        bed.inSync();
        assertThat(bed.dataplane.refreshInterval()).isEqualTo(Duration.ofMinutes(10));
        assertThat(bed.dataplane.status().pendingInterfaces()).containsExactly(C_IF);
        assertThat(routes()).contains(A_IP + " dev " + A_IF).doesNotContain(C_IP);

        // The veth appears (as the CNI plugin creates it, set up on both ends).
        long t0 = System.nanoTime();
        bed.wire(c, C_IF, C_IP);
        awaitRoutes("route to c after its veth appeared", r -> r.contains(C_IP + " dev " + C_IF));
        System.out.printf("route programmed %.1f ms after the veth was created%n", (System.nanoTime() - t0) / 1e6);
        assertThat(bed.host.sysctl("ipv4/conf/" + C_IF + "/proxy_arp")).isEqualTo("1");
        assertThat(bed.host.sysctl("ipv4/conf/" + C_IF + "/forwarding")).isEqualTo("1");
        assertThat(bed.dataplane.status().pendingInterfaces()).isEmpty();
        InetAddress aAddr = InetAddress.getByName(A_IP);
        try (ServerSocket server = a.call(() -> new ServerSocket(8080, 50, aAddr))) {
            assertThat(c.tcpConnects(A_IP, 8080, CONNECT_TIMEOUT)).as("c reaches a through the host").isTrue();
        }

        // The veth vanishes: pending again. A new one (a new ifindex) is routed again.
        bed.host.exec("ip", "link", "del", C_IF);
        Await.until("interface pending again", PROMPT, () -> bed.dataplane.status().pendingInterfaces(),
                p -> p.contains(C_IF));
        t0 = System.nanoTime();
        bed.wire(c, C_IF, C_IP);
        awaitRoutes("route to c after its veth came back", r -> r.contains(C_IP + " dev " + C_IF));
        System.out.printf("route re-programmed %.1f ms after the veth was re-created%n",
                (System.nanoTime() - t0) / 1e6);

        // An administrator sets it down (the kernel drops its routes) and up again: routed again.
        bed.host.exec("ip", "link", "set", C_IF, "down");
        awaitRoutes("the kernel dropped the route of a down link", r -> !r.contains(C_IP));
        bed.host.exec("ip", "link", "set", C_IF, "up");
        awaitRoutes("route to c after its link came up", r -> r.contains(C_IP + " dev " + C_IF));

        KernelDataplane.Status st = bed.dataplane.status();
        assertThat(st.refreshes()).as("no refresh ran: the link monitor did it").isZero();
        assertThat(st.linkUpdates()).isPositive();
        assertThat(bed.dataplane.errors()).isEmpty();
    }

    private String routes() {
        return bed.host.exec("ip", "route", "show", "proto", "80");
    }

    /** Waits (at most {@link #PROMPT}) until felix's routes meet {@code done}; a failure shows the last listing. */
    private void awaitRoutes(String what, Predicate<String> done) {
        Await.until(what, PROMPT, this::routes, done);
    }
}
