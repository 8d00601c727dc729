package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * natOutgoing through the whole felix: IPPools and FelixConfiguration written to a real etcd (the
 * kubernetes datastore: {@link NatOutgoingKddE2ETest}), the
 * test cluster's pods, and an "outside" namespace (in no pool) behind the node's {@code ext0}.
 * prod's pool masquerades: the outside server sees the node's address and a source port from
 * {@code natPortRange}; dev's pool does not: it sees the pod; prod to dev (another pool) keeps
 * the pod's address; turning natOutgoing off on prod's pool shows the pod's address again.
 */
class NatOutgoingE2ETest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();
    private static final ResourceCodec CODEC = ResourceCodec.get();
    private static final String NODE_IP = "192.168.254.1";
    private static final String OUT_IP = "192.168.254.2";
    private static final Duration PROGRAMMED = Duration.ofSeconds(20);

    @Test
    void nftables() throws Exception {
        run(Backend.NFTABLES, new TestDatastore.Etcd(ETCD));
    }

    @Test
    void iptablesNft() throws Exception {
        run(Backend.IPTABLES_NFT, new TestDatastore.Etcd(ETCD));
    }

    /** The scenario with {@code backend} on {@code datastore}. */
    static void run(Backend backend, TestDatastore datastore) throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(backend.unavailableReason() == null, () -> backend + ": " + backend.unavailableReason());
        datastore.reset();
        try (Datastore store = datastore.open();
             Cluster cluster = new Cluster(datastore.clusterObjects());
             NetNs outside = NetNs.create("nm-out")) {
            cluster.host.veth("ext0", outside, "eth0");
            cluster.host.exec("ip", "addr", "add", NODE_IP + "/24", "dev", "ext0");
            outside.exec("ip", "addr", "add", OUT_IP + "/24", "dev", "eth0");
            outside.exec("ip", "route", "add", "10.70.0.0/16", "via", NODE_IP);
            Writes.clusterReady(store);
            store.create(CODEC.parse("""
                    apiVersion: projectcalico.org/v3
                    kind: FelixConfiguration
                    metadata: {name: default}
                    spec: {natPortRange: "40000:40010"}
                    """));
            Writes.upsert(store, pool("prod-pool", "10.70.0.0/24", true));
            Writes.upsert(store, pool("dev-pool", "10.70.1.0/24", false));
            try (FelixProcess felix = new FelixProcess(datastore.felixArgs(), cluster.host.name(), backend, "Warning");
                 ServerSocket srv = outside.call(() -> new ServerSocket(7070, 50, InetAddress.getByName(OUT_IP)));
                 ServerSocket db = cluster.db.netns().call(() -> new ServerSocket(7071, 50,
                         InetAddress.getByName(cluster.db.ip())))) {
                felix.awaitReady(Duration.ofSeconds(60));
                InetSocketAddress web = Await.until("web -> outside masqueraded", PROGRAMMED,
                        () -> peer(cluster.web, srv, OUT_IP, 7070).orElse(null),
                        p -> p != null && p.getAddress().getHostAddress().equals(NODE_IP));
                assertThat(web.getPort()).as("natPortRange").isBetween(40000, 40010);
                assertThat(peer(cluster.client, srv, OUT_IP, 7070)).as("dev's pool has no natOutgoing")
                        .map(p -> p.getAddress().getHostAddress()).contains(cluster.client.ip());
                assertThat(peer(cluster.web, db, cluster.db.ip(), 7071)).as("to another pool: not masqueraded")
                        .map(p -> p.getAddress().getHostAddress()).contains(cluster.web.ip());

                Writes.upsert(store, pool("prod-pool", "10.70.0.0/24", false));
                Await.until("natOutgoing off: the pod's own address", PROGRAMMED,
                        () -> peer(cluster.web, srv, OUT_IP, 7070).map(p -> p.getAddress().getHostAddress())
                                .orElse("(no connection)"), cluster.web.ip()::equals);
            }
        }
    }

    private static calico.api.model.Resource pool(String name, String cidr, boolean natOutgoing) {
        return CODEC.parse("""
                apiVersion: projectcalico.org/v3
                kind: IPPool
                metadata: {name: %s}
                spec: {cidr: %s, natOutgoing: %s, ipipMode: Never, vxlanMode: Never}
                """.formatted(name, cidr, natOutgoing));
    }

    /** {@return what {@code srv} sees when {@code from} connects to {@code ip:port}}, empty when it did not connect. */
    private static Optional<InetSocketAddress> peer(Workload from, ServerSocket srv, String ip, int port)
            throws IOException {
        if (!from.netns().tcpConnects(ip, port, Duration.ofMillis(500))) {
            return Optional.empty();
        }
        srv.setSoTimeout(2000);
        try (Socket s = srv.accept()) {
            return Optional.of((InetSocketAddress) s.getRemoteSocketAddress());
        } catch (SocketTimeoutException e) {
            throw new UncheckedIOException("connected but not accepted", e);
        }
    }
}
