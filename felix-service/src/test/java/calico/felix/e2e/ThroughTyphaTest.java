package calico.felix.e2e;

import static calico.felix.e2e.Probe.icmp;
import static calico.felix.e2e.Probe.tcp;
import static calico.felix.e2e.Reachability.expectations;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.dataplane.testing.NetNs;
import calico.felix.testing.LogCapture;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.typha.TyphaClient;
import ch.qos.logback.classic.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Felix reading through typha enforces policy in the kernel: a real etcd, a real
 * {@link TyphaServer} in process over it, and the whole felix application with the kernel
 * dataplane programming the {@link Cluster}'s host namespace. Felix is given an etcd address
 * where nothing listens, so everything it programs came through typha. A policy written to etcd
 * changes real TCP and ICMP reachability between the pods; then typha is replaced while the
 * policy is deleted, and felix's reconnect to the new typha (same address) restores the
 * traffic.
 */
class ThroughTyphaTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    /** The direct path's bound is 2 s; typha adds at most its 50 ms coalescing, the shared machine more. */
    private static final Duration CHANGE_DEADLINE = Duration.ofSeconds(5);
    /** Felix's reconnect backoff grows while typha is down (100 ms doubling, at most 1 s ± 20 %); the deadline is generous. */
    private static final Duration RECONNECT_DEADLINE = Duration.ofSeconds(20);

    private final TestDatastore etcd = new TestDatastore.Etcd(ETCD);
    private Datastore store;
    private InProcessTypha typha;
    private Cluster cluster;
    private FelixProcess felix;
    private Backend backend;

    @AfterEach
    void tearDown() throws Exception {
        if (felix != null) {
            felix.close();
        }
        if (typha != null) {
            typha.close();
        }
        if (store != null) {
            store.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void policyWrittenToEtcdReachesTheKernelThroughTypha() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        backend = Stream.of(Backend.NFTABLES, Backend.IPTABLES_NFT).filter(b -> b.unavailableReason() == null)
                .findFirst().orElse(null);
        assumeTrue(backend != null, "neither nft nor iptables-nft-restore is installed");

        etcd.reset();
        store = etcd.open();
        cluster = new Cluster(etcd.clusterObjects());
        Writes.clusterReady(store);

        typha = new InProcessTypha(etcd);
        int port = typha.start(0);
        // An etcd address where nothing listens: felix must not need the datastore when it reads through typha.
        felix = new FelixProcess(etcd.felixArgsThroughTypha(), cluster.host.name(), backend, "Warning",
                "--FELIX_TYPHAADDR=127.0.0.1:" + port);
        felix.awaitReady(Duration.ofSeconds(60));
        assertThat(typha.connectionCount()).as("felix's stream to typha").isEqualTo(1);

        Workload web = cluster.web;
        Workload api = cluster.api;
        Workload client = cluster.client;
        try (Reachability reach = new Reachability(CHANGE_DEADLINE)) {
            long t = System.nanoTime();
            reach.await("typha", "no policy: profiles allow all", t, Map.of(tcp(web, api, 8080), true,
                    tcp(client, api, 8080), true, icmp(client, api), true), () -> { }, this::diagnostics);

            Instant wall = Instant.now();
            t = System.nanoTime();
            store.create(ResourceCodec.get().parse("""
                    apiVersion: projectcalico.org/v3
                    kind: NetworkPolicy
                    metadata: {name: api-from-web, namespace: prod}
                    spec:
                      selector: app == 'api'
                      types: [Ingress]
                      ingress:
                        - action: Allow
                          source: {selector: app == 'web'}
                    """));
            Reachability.Observed o = reach.await("typha", "api accepts only app=web", t, expectations(
                    tcp(web, api, 8080), true, tcp(client, api, 8080), false, icmp(client, api), false,
                    icmp(web, api), true), settle(wall), this::diagnostics);
            System.out.printf("[e2e typha %s] policy created -> kernel in %d ms%n", backend, o.millis());

            // typha goes away; the policy is deleted meanwhile; a new typha on the same address
            // serves a snapshot without it, and felix (reconnecting) programs the difference.
            try (LogCapture typhaClient = new LogCapture(TyphaClient.class, Level.INFO)) {
                typha.stop();
                wall = Instant.now();
                t = System.nanoTime();
                store.delete(ResourceKey.of(ResourceKind.NETWORK_POLICY, "prod", "api-from-web"), null);
                // Felix saw its stream end, and a reconnect to the closed port fail: it has done
                // what it does without typha. It keeps what it programmed.
                Await.until("felix's typha stream ended and a reconnect failed", RECONNECT_DEADLINE,
                        () -> typhaClient.containing("Typha stream ended"), ended -> ended.size() >= 2);
                assertThat(felix.lastApply().queued()).as("nothing waiting to be programmed").isZero();
                assertThat(tcp(client, api, 8080).passes(Reachability.NEGATIVE))
                        .as("without typha felix keeps what it programmed").isFalse();
            }
            typha.restart();
            try (Reachability slow = new Reachability(RECONNECT_DEADLINE)) {
                o = slow.await("typha", "policy deleted while typha was down", t, expectations(
                        tcp(client, api, 8080), true, icmp(client, api), true, tcp(web, api, 8080), true),
                        settle(wall), this::diagnostics);
            }
            System.out.printf("[e2e typha %s] policy deleted while typha was down -> kernel %d ms after the "
                    + "delete (typha restart included)%n", backend, o.millis());
            assertThat(typha.connectionCount()).as("felix reconnected to the new typha").isEqualTo(1);
        }
    }

    private Runnable settle(Instant since) {
        return () -> felix.awaitApplyAfter(since, Duration.ofSeconds(1));
    }

    private String diagnostics() {
        return "typha connections: " + (typha == null ? "(none)" : typha.connectionCount()) + "\nreadiness: "
                + felix.readiness() + "\nstatus: " + felix.get("/felix/v1/status") + "\npolicies: "
                + felix.get("/felix/v1/policies") + "\n" + backend.rulesetDump(cluster.host);
    }
}
