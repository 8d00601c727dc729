package calico.felix.e2e;

import static calico.felix.e2e.Probe.icmp;
import static calico.felix.e2e.Probe.tcp;
import static calico.felix.e2e.Reachability.expectations;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.testing.KernelChanges;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 21's fault: kube-apiserver killed while felix runs on the kubernetes datastore. Felix
 * (nftables, directly on the API server) enforces a Kubernetes NetworkPolicy; the API server is
 * killed (SIGKILL) and kept away well past felix's datastore timeout, then started again. The
 * kernel itself is watched throughout ({@link KernelChanges}: {@code nft monitor}, {@code ip
 * monitor route} in felix's namespace) and felix's dataplane counters read before and after:
 *
 * <ul>
 *   <li>while the API server is away, nothing felix programmed leaves the kernel: the policy
 *       still holds for real packets, and the monitors see no change at all;</li>
 *   <li>felix turns not ready once the datastore has not answered for {@code felix.datastore-timeout}
 *       (3 s here), naming the datastore, and stays live;</li>
 *   <li>when the API server is back felix is ready again, its watches are back on the API server,
 *       and its resync changed nothing: no rule, set, chain or route was removed or re-added (the
 *       monitors stay silent, and no dataplane apply, rewrite or repair happened);</li>
 *   <li>a policy change made after the return is enforced.</li>
 * </ul>
 */
class ApiServerOutageTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final Duration DATASTORE_TIMEOUT = Duration.ofSeconds(3);
    /** After the return, a change is in the kernel within this (felix's watches reconnect with a backoff). */
    private static final Duration AFTER_RETURN = Duration.ofSeconds(30);

    private final Deque<AutoCloseable> open = new ArrayDeque<>();
    private Cluster cluster;
    private FelixProcess felix;
    private KernelChanges kernel;
    private final Backend backend = Backend.NFTABLES;

    @AfterEach
    void tearDown() throws Exception {
        if (!KUBE.controlPlane().running()) {
            KUBE.controlPlane().startApiServer();
        }
        while (!open.isEmpty()) {
            open.pop().close();
        }
    }

    /** {@return {@code c}, closed after the test (newest first)}. */
    private <T extends AutoCloseable> T open(T c) {
        open.push(c);
        return c;
    }

    @Test
    void felixKeepsItsRulesWhileTheApiServerIsAwayAndResyncsWithoutFlapping() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(backend.unavailableReason() == null, () -> backend + ": " + backend.unavailableReason());
        TestDatastore kdd = new TestDatastore.Kubernetes(KUBE);
        Writes.clusterReady(open(kdd.open()));
        cluster = open(new Cluster(kdd.clusterObjects()));
        cluster.applyNetworkPolicy("""
                metadata: {name: api-from-web, namespace: prod}
                spec:
                  podSelector: {matchLabels: {app: api}}
                  ingress:
                    - from: [{podSelector: {matchLabels: {app: web}}}]
                      ports: [{protocol: TCP, port: 8080}]
                """);
        felix = open(new FelixProcess(kdd.felixArgs(), cluster.host.name(), backend, "Warning",
                "--FELIX_DATASTORETIMEOUT=" + DATASTORE_TIMEOUT.toSeconds() + "s"));
        felix.awaitReady(Duration.ofSeconds(60));
        // The kubernetes datastore's count of skipped invalid objects is felix's too, from 0.
        assertThat(felix.gauge("calico_datastore_invalid_objects_total")).isZero();
        Workload web = cluster.web;
        Workload api = cluster.api;
        Workload client = cluster.client;
        Map<Probe, Boolean> enforced = expectations(tcp(web, api, 8080), true, tcp(client, api, 8080), false,
                icmp(client, api), false, tcp(client, cluster.db, 8080), true);
        try (Reachability reach = new Reachability(Duration.ofSeconds(5))) {
            reach.await("outage", "knp api-from-web enforced", System.nanoTime(), enforced, () -> { },
                    this::diagnostics);
            // Felix has applied everything and gone quiet; from here on, nothing may change.
            Await.until("felix's dataplane idle", Duration.ofSeconds(10), () -> felix.lastApply().queued() == 0);
            int watches = apiServerWatches();
            kernel = open(KernelChanges.start(cluster.host));
            FelixProcess.Counters before = felix.counters().writes();

            Instant killedAt = Instant.now();
            KUBE.controlPlane().killApiServer();
            Await.until("felix not ready after the datastore timeout", DATASTORE_TIMEOUT.plusSeconds(10),
                    () -> !felix.ready());
            long notReadyAfter = Duration.between(killedAt, Instant.now()).toMillis();
            assertThat(felix.readiness()).contains("DatastoreConnection").contains("has not answered for over PT3S");
            assertThat(felix.live()).as("felix stays live").isTrue();
            // Away for a while longer: the packets still meet the same rules.
            reach.await("outage", "API server away: the policy still holds", System.nanoTime(), enforced,
                    () -> { }, this::diagnostics);
            assertThat(kernel.lines()).as("kernel changes while the API server is away").isEmpty();

            KUBE.controlPlane().startApiServer();
            Instant backAt = Instant.now();
            Await.until("felix ready again", AFTER_RETURN, felix::ready);
            long readyAfter = Duration.between(backAt, Instant.now()).toMillis();
            Await.until("felix's watches back on the API server (" + watches + ")", AFTER_RETURN,
                    () -> apiServerWatches() >= watches);
            long watchesAfter = Duration.between(backAt, Instant.now()).toMillis();
            Await.until("felix's dataplane idle", Duration.ofSeconds(10), () -> felix.lastApply().queued() == 0);
            reach.await("outage", "API server back: the policy still holds", System.nanoTime(), enforced,
                    () -> { }, this::diagnostics);
            assertThat(kernel.lines()).as("kernel changes from the kill to after the resync").isEmpty();
            assertThat(felix.counters().writes()).as("felix's dataplane writes (applies, rewrites, repairs, "
                    + "failures) across the outage").isEqualTo(before);
            System.out.printf("[e2e outage] not ready %d ms after the kill; ready %d ms and watching %d ms after the "
                    + "API server's return; no kernel change%n", notReadyAfter, readyAfter, watchesAfter);

            // A change after the return is enforced.
            long t = System.nanoTime();
            cluster.applyNetworkPolicy("""
                    metadata: {name: api-from-web, namespace: prod}
                    spec:
                      podSelector: {matchLabels: {app: api}}
                      ingress:
                        - from: [{podSelector: {matchLabels: {app: web}}}, {namespaceSelector: {matchLabels: {env: dev}}}]
                          ports: [{protocol: TCP, port: 8080}]
                    """);
            Reachability.Observed o = reach.await("outage", "after the return: dev allowed too", t,
                    expectations(tcp(client, api, 8080), true, icmp(client, api), false, tcp(web, api, 8080), true),
                    () -> { }, this::diagnostics);
            assertThat(kernel.lines()).as("the change after the return reached the kernel").isNotEmpty();
            System.out.printf("[e2e outage] policy change after the return -> kernel in %d ms%n", o.millis());
        }
    }

    /** {@return the watches kube-apiserver is serving now} (its {@code apiserver_longrunning_requests} gauge). */
    private static int apiServerWatches() {
        String metrics;
        try {
            metrics = KUBE.kubectl("get", "--raw", "/metrics");
        } catch (IllegalStateException e) {
            return -1; // not answering yet
        }
        return (int) metrics.lines().filter(l -> l.startsWith("apiserver_longrunning_requests{") && l.contains("verb=\"WATCH\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    private String diagnostics() {
        return "readiness: " + felix.readiness() + "\ndataplane: " + felix.dataplaneStatus() + "\nkernel changes: "
                + (kernel == null ? "(not watched)" : kernel.lines()) + "\n" + backend.rulesetDump(cluster.host);
    }
}
