package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.EncapsulationMode;
import calico.felix.e2e.MultiNodeCluster.ClusterNode;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Routes between nodes on a real etcd (the Kubernetes objects converted as Calico's Kubernetes datastore presents them). */
class MultiNodeRoutesTest extends MultiNodeRoutes {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    MultiNodeRoutesTest() {
        super(new TestDatastore.Etcd(ETCD));
    }

    /**
     * No encapsulation, as Calico's BGP networking: felix blackholes each node's own block, confd
     * renders BIRD's configuration and BIRD's node-to-node mesh puts the other nodes' blocks into
     * each kernel ({@code proto bird}); pods on two nodes talk in plain IP, and no tunnel device exists.
     */
    @Test
    void plainBgpRoutesBetweenNodesComeFromBirdConfiguredByConfd() {
        assumeTrue(Files.isExecutable(Path.of(MultiNodeCluster.BIRD)), "needs BIRD 2 (scripts/lib/install-deps.sh)");
        try (MultiNodeCluster c = new MultiNodeCluster(new TestDatastore.Etcd(ETCD), Backend.NFTABLES, false, "wg-")) {
            c.pool(EncapsulationMode.Never, EncapsulationMode.Never);
            ClusterNode a = c.addNode("bgp-node-a", 1, 0);
            ClusterNode b = c.addNode("bgp-node-b", 2, 0);
            c.startFelix(a);
            c.startFelix(b);
            c.startBird(a);
            c.startBird(b);
            Await.until("A's kernel learns B's block from BIRD", Duration.ofSeconds(60),
                    () -> a.netns().exec("ip", "route", "show", "proto", "bird").contains("10.75.2.0/26 via 172.30.0.12 dev eth0"));
            Await.until("B's kernel learns A's block from BIRD", Duration.ofSeconds(60),
                    () -> b.netns().exec("ip", "route", "show", "proto", "bird").contains("10.75.1.0/26 via 172.30.0.11 dev eth0"));
            assertThat(a.netns().exec("ip", "route", "show", "proto", "80")).contains("blackhole 10.75.1.0/26");
            Workload pa = c.pod(a, "bgp", "pa");
            Workload pb = c.pod(b, "bgp", "pb");
            awaitTcp(pa, pb);
            awaitTcp(pb, pa);
            assertThat(a.netns().tryExec("ip", "link", "show", "vxlan.calico").status()).as("no VXLAN device").isNotZero();
        }
    }
}
