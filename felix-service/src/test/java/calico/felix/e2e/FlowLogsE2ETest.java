package calico.felix.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.dataplane.testing.NetNs;
import calico.felix.flows.InProcessGoldmane;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.testing.EtcdServerExtension;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 6's end-to-end test: the whole felix (kernel dataplane, flow logs on) programs the test
 * cluster's namespaces; a policy on prod/api allows TCP 8080 and denies TCP 9000, a staged
 * policy ordered before it would deny 8080; real TCP connections from dev/client; the flows appear in a real
 * goldmane with the action, the enforced policy and rule index, a pending hit for the staged
 * policy, byte counters and the addresses.
 */
class FlowLogsE2ETest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();
    private static final ResourceCodec CODEC = ResourceCodec.get();

    @Test
    void nftables() throws Exception {
        run(Backend.NFTABLES);
    }

    @Test
    void iptablesNft() throws Exception {
        run(Backend.IPTABLES_NFT);
    }

    @Test
    void iptablesLegacy() throws Exception {
        run(Backend.IPTABLES_LEGACY);
    }

    private void run(Backend backend) throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(backend.unavailableReason() == null, () -> backend + ": " + backend.unavailableReason());
        TestDatastore etcd = new TestDatastore.Etcd(ETCD);
        etcd.reset();
        try (InProcessGoldmane goldmane = new InProcessGoldmane(0, null);
             Datastore store = etcd.open();
             Cluster cluster = new Cluster(etcd.clusterObjects())) {
            Writes.clusterReady(store);
            store.create(CODEC.parse("""
                    apiVersion: projectcalico.org/v3
                    kind: NetworkPolicy
                    metadata: {name: api-ingress, namespace: prod}
                    spec:
                      order: 100
                      selector: app == 'api'
                      types: [Ingress]
                      ingress:
                        - action: Allow
                          protocol: TCP
                          destination: {ports: [8080]}
                        - action: Deny
                          protocol: TCP
                          destination: {ports: [9000]}
                    """));
            store.create(CODEC.parse("""
                    apiVersion: projectcalico.org/v3
                    kind: StagedNetworkPolicy
                    metadata: {name: api-lockdown, namespace: prod}
                    spec:
                      stagedAction: Set
                      order: 10
                      selector: app == 'api'
                      types: [Ingress]
                      ingress:
                        - action: Deny
                          protocol: TCP
                          destination: {ports: [8080]}
                    """));
            try (FelixProcess felix = new FelixProcess(etcd.felixArgs(), cluster.host.name(), backend, "Warning",
                    "--FELIX_FLOWLOGSGOLDMANESERVER=" + goldmane.target(), "--FELIX_FLOWLOGSFLUSHINTERVAL=1s")) {
                felix.awaitReady(Duration.ofSeconds(60));
                Workload client = cluster.client;
                Workload api = cluster.api;
                // The policy is in the kernel once 8080 connects and 9000 does not (polled: the
                // readiness probe does not wait for the kernel).
                awaitTrue("client -> api:8080 connects", () -> client.netns().tcpConnects(api.ip(), 8080,
                        Duration.ofMillis(500)));
                assertThat(client.netns().tcpConnects(api.ip(), 9000, Duration.ofMillis(300))).isFalse();
                for (int i = 0; i < 3; i++) {
                    assertThat(client.netns().tcpConnects(api.ip(), 8080, Duration.ofSeconds(2))).isTrue();
                }

                Flow allowed = awaitFlow(goldmane, "api", 8080, Reporter.Dst, Action.Allow);
                FlowKey k = allowed.getKey();
                assertThat(k.getSourceName()).isEqualTo("client");
                assertThat(k.getSourceNamespace()).isEqualTo("dev");
                assertThat(k.getSourceType()).isEqualTo(EndpointType.WorkloadEndpoint);
                assertThat(k.getDestNamespace()).isEqualTo("prod");
                assertThat(k.getProto()).isEqualTo("tcp");
                PolicyHit hit = k.getPolicies().getEnforcedPolicies(0);
                assertThat(hit.getName()).isEqualTo("api-ingress");
                assertThat(hit.getNamespace()).isEqualTo("prod");
                assertThat(hit.getTier()).isEqualTo("default");
                assertThat(hit.getKind()).isEqualTo(PolicyKind.CalicoNetworkPolicy);
                assertThat(hit.getRuleIndex()).isZero();
                assertThat(hit.getAction()).isEqualTo(Action.Allow);
                PolicyHit pending = k.getPolicies().getPendingPolicies(0);
                assertThat(pending.getKind()).isEqualTo(PolicyKind.StagedNetworkPolicy);
                assertThat(pending.getName()).isEqualTo("api-lockdown");
                assertThat(pending.getAction()).isEqualTo(Action.Deny);
                assertThat(pending.getRuleIndex()).isZero();
                assertThat(allowed.getSourceIpsList()).contains(client.ip());
                assertThat(allowed.getDestIpsList()).contains(api.ip());
                // At least the handshake each way: SYN, ACK, FIN... in, SYN-ACK, FIN... out (IP lengths).
                Flow total = awaitCounters(goldmane, "api", 8080, Reporter.Dst, Action.Allow);
                assertThat(total.getBytesIn()).isGreaterThanOrEqualTo(4 * 2 * 40);
                assertThat(total.getPacketsOut()).isGreaterThanOrEqualTo(4);
                assertThat(total.getNumConnectionsStarted()).isGreaterThanOrEqualTo(4);
                // Each connection was closed at once: conntrack keeps it in TIME_WAIT, which counts
                // as completed, not live.
                Flow closed = awaitCompleted(goldmane, "api", 8080, Reporter.Dst, Action.Allow, 4);
                assertThat(closed.getNumConnectionsCompleted()).isGreaterThanOrEqualTo(4);

                Flow denied = awaitFlow(goldmane, "api", 9000, Reporter.Dst, Action.Deny);
                PolicyHit deny = denied.getKey().getPolicies().getEnforcedPolicies(0);
                assertThat(deny.getName()).isEqualTo("api-ingress");
                assertThat(deny.getRuleIndex()).isEqualTo(1);
                assertThat(deny.getAction()).isEqualTo(Action.Deny);
                assertThat(denied.getPacketsIn()).isGreaterThanOrEqualTo(1);
                assertThat(denied.getBytesIn()).isGreaterThanOrEqualTo(40);
                assertThat(denied.getNumConnectionsLive()).isZero();
                // The source side saw both connections leave through its profile (kns.dev allows).
                Flow src = awaitFlow(goldmane, "api", 8080, Reporter.Src, Action.Allow);
                assertThat(src.getKey().getPolicies().getEnforcedPolicies(0).getKind()).isEqualTo(PolicyKind.Profile);
                if (backend == Backend.NFTABLES) {
                    dnatToAService(cluster, goldmane);
                }
                System.out.printf("[flow logs e2e %s] allowed: %s%n  denied: %s%n", backend,
                        oneLine(total), oneLine(denied));
            }
        }
    }

    /**
     * kube-proxy style: the host DNATs a service VIP 10.96.0.10:80 to api:8080 (a table of the
     * test's own, {@code ip f6svc}); the client dials the VIP. The flow is the post-DNAT one (api,
     * 8080, the ingress rule), carries the service port 80, and its counters come from the
     * conntrack entry whose original tuple has the VIP.
     */
    private static void dnatToAService(Cluster cluster, InProcessGoldmane goldmane) throws Exception {
        cluster.host.exec("nft", "add", "table", "ip", "f6svc");
        cluster.host.exec("nft", "add", "chain", "ip", "f6svc", "pre", "{", "type", "nat", "hook", "prerouting",
                "priority", "-100", ";", "}");
        cluster.host.exec("nft", "add", "rule", "ip", "f6svc", "pre", "ip", "daddr", "10.96.0.10", "tcp", "dport",
                "80", "dnat", "to", "10.70.0.2:8080");
        for (int i = 0; i < 2; i++) {
            assertThat(cluster.client.netns().tcpConnects("10.96.0.10", 80, Duration.ofSeconds(2))).isTrue();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Optional<Flow> svc = Optional.empty();
        while (System.nanoTime() < deadline) {
            svc = flows(goldmane, "api", 8080, Reporter.Dst, Action.Allow).stream()
                    .filter(f -> f.getKey().getDestServicePort() == 80).findFirst();
            if (svc.isPresent() && svc.get().getNumConnectionsStarted() >= 2 && svc.get().getPacketsOut() >= 2
                    && svc.get().getNumConnectionsCompleted() >= 2) {
                break;
            }
            Thread.sleep(200);
        }
        assertThat(svc).as("a flow to api:8080 with dest_service_port 80; goldmane holds: "
                + goldmane.list().getFlowsList().stream().map(f -> oneLine(f.getFlow()))
                .collect(Collectors.joining("\n"))).isPresent();
        Flow f = svc.get();
        assertThat(f.getKey().getSourceName()).isEqualTo("client");
        assertThat(f.getKey().getPolicies().getEnforcedPolicies(0).getName()).isEqualTo("api-ingress");
        // On etcd no Service reaches felix (Calico's felix syncer watches Services in KDD mode only);
        // the name from a Service: ServiceFlowTest.
        assertThat(f.getKey().getDestServiceName()).isEmpty();
        assertThat(f.getDestIpsList()).containsExactly(cluster.api.ip());
        assertThat(f.getNumConnectionsStarted()).isGreaterThanOrEqualTo(2);
        assertThat(f.getNumConnectionsCompleted()).isGreaterThanOrEqualTo(2);
        // Conntrack counters (joined through the DNAT): the replies came back.
        assertThat(f.getPacketsOut()).isGreaterThanOrEqualTo(2);
        assertThat(f.getBytesIn()).isGreaterThanOrEqualTo(2 * 2 * 40);
        System.out.printf("[flow logs e2e DNAT] %s%n", oneLine(f));
    }

    private static String oneLine(Flow f) {
        return f.toString().replace('\n', ' ');
    }

    private static void awaitTrue(String what, java.util.function.BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!c.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    private static List<Flow> flows(InProcessGoldmane g, String dest, int port, Reporter r, Action a)
            throws Exception {
        return g.list().getFlowsList().stream().map(FlowResult::getFlow)
                .filter(f -> f.getKey().getDestName().equals(dest) && f.getKey().getDestPort() == port
                        && f.getKey().getReporter() == r && f.getKey().getAction() == a).toList();
    }

    private static Flow awaitFlow(InProcessGoldmane g, String dest, int port, Reporter r, Action a) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            List<Flow> l = flows(g, dest, port, r, a);
            if (!l.isEmpty()) {
                assertThat(l).as("one key per flow").hasSize(1);
                return l.get(0);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + a + " flow to " + dest + ":" + port + " reported by " + r
                        + "; goldmane holds: " + g.list().getFlowsList().stream()
                        .map(f -> f.getFlow().getKey().toString().replace('\n', ' ')).collect(Collectors.joining("\n")));
            }
            Thread.sleep(200);
        }
    }

    /** Waits until at least {@code n} connections of the flow have been reported completed. */
    private static Flow awaitCompleted(InProcessGoldmane g, String dest, int port, Reporter r, Action a, int n)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Optional<Flow> f = Optional.empty();
        while (System.nanoTime() < deadline) {
            f = flows(g, dest, port, r, a).stream().findFirst();
            if (f.isPresent() && f.get().getNumConnectionsCompleted() >= n) {
                return f.get();
            }
            Thread.sleep(200);
        }
        throw new AssertionError("fewer than " + n + " completed connections to " + dest + ":" + port + ": "
                + f.map(FlowLogsE2ETest::oneLine).orElse("no flow"));
    }

    /** Waits until the four connections' counters have all arrived (they come over several flushes). */
    private static Flow awaitCounters(InProcessGoldmane g, String dest, int port, Reporter r, Action a)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Optional<Flow> f = Optional.empty();
        while (System.nanoTime() < deadline) {
            f = flows(g, dest, port, r, a).stream().findFirst();
            if (f.isPresent() && f.get().getNumConnectionsStarted() >= 4 && f.get().getPacketsOut() >= 4) {
                return f.get();
            }
            Thread.sleep(200);
        }
        return f.orElseThrow();
    }
}
