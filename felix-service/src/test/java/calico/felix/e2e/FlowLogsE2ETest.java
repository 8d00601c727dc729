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
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.testing.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 6's end-to-end test: the whole felix (kernel dataplane, flow logs on) programs the test
 * cluster's namespaces; a policy on prod/api allows TCP 8080 and denies TCP 9000, a staged
 * policy ordered before it would deny 8080; real TCP connections from dev/client; the flows appear in a real
 * goldmane with the action, the enforced policy and rule index, a pending hit for the staged
 * policy, byte counters and the addresses; also over mutual TLS, as Calico runs it.
 */
class FlowLogsE2ETest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();
    private static final ResourceCodec CODEC = ResourceCodec.get();
    /** Flows reach goldmane within a few of felix's 1 s flushes; this is the outer bound. */
    private static final Duration FLOW_DEADLINE = Duration.ofSeconds(30);

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

    /**
     * The eBPF driver: hits come from its ring buffer instead of NFLOG, counters and the end of each
     * connection from its own conntrack map instead of the kernel's (which tracks nothing in a
     * namespace without netfilter rules), into the same aggregator: the same flows, traces
     * (enforced and staged), packets, bytes and completed connections reach goldmane.
     */
    @Test
    void bpf() throws Exception {
        run(Backend.BPF);
    }

    /**
     * IPv6 on the eBPF driver: client and api dual-stack, connections over IPv6 only. The flows
     * reach goldmane with the IPv6 addresses, the same trace (api-ingress rule 0, the staged
     * api-lockdown pending; the deny rule 1) and the counters and ends of BPF's IPv6 conntrack.
     */
    @Test
    void bpfIpv6() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Backend.BPF.unavailableReason() == null, () -> "BPF: " + Backend.BPF.unavailableReason());
        TestDatastore etcd = new TestDatastore.Etcd(ETCD);
        etcd.reset();
        String client6 = "fd00:70:1::1";
        String api6 = "fd00:70::2";
        try (InProcessGoldmane goldmane = new InProcessGoldmane(0, null, null);
             Datastore store = etcd.open();
             Cluster cluster = new Cluster(etcd.clusterObjects())) {
            Writes.clusterReady(store);
            createPolicies(store);
            cluster.addIpv6(cluster.client, client6);
            cluster.addIpv6(cluster.api, api6);
            try (FelixProcess felix = new FelixProcess(etcd.felixArgs(), cluster.host.name(), Backend.BPF, "Warning",
                    "--FELIX_FLOWLOGSGOLDMANESERVER=" + goldmane.target(), "--FELIX_FLOWLOGSFLUSHINTERVAL=1s")) {
                felix.awaitReady(Duration.ofSeconds(60));
                NetNs client = cluster.client.netns();
                Await.until("client -> [api]:8080 over IPv6", Duration.ofSeconds(20),
                        () -> client.tcpConnects(api6, 8080, Duration.ofMillis(500)));
                assertThat(client.tcpConnects(api6, 9000, Duration.ofMillis(300))).as("9000 denied over IPv6").isFalse();
                for (int i = 0; i < 3; i++) {
                    assertThat(client.tcpConnects(api6, 8080, Duration.ofSeconds(2))).isTrue();
                }
                Flow allowed = awaitFlow(goldmane, "api", 8080, Reporter.Dst, Action.Allow,
                        "4 IPv6 connections completed", f -> f.getNumConnectionsCompleted() >= 4);
                FlowKey k = allowed.getKey();
                assertThat(k.getSourceName()).isEqualTo("client");
                assertThat(k.getProto()).isEqualTo("tcp");
                assertThat(allowed.getSourceIpsList()).as("IPv6 addresses in Go's (RFC 5952) form, as Calico's")
                        .containsExactly(client6);
                assertThat(allowed.getDestIpsList()).containsExactly(api6);
                PolicyHit hit = k.getPolicies().getEnforcedPolicies(0);
                assertThat(hit.getName()).isEqualTo("api-ingress");
                assertThat(hit.getRuleIndex()).isZero();
                assertThat(k.getPolicies().getPendingPolicies(0).getName()).isEqualTo("api-lockdown");
                // IPv6 lengths: at least the handshake each way, 60 bytes a packet (40 + 20 of TCP).
                Flow total = awaitFlow(goldmane, "api", 8080, Reporter.Dst, Action.Allow, "4 packets out",
                        f -> f.getPacketsOut() >= 4);
                assertThat(total.getBytesIn()).isGreaterThanOrEqualTo(4 * 2 * 60);
                Flow denied = deniedAndSource(goldmane);
                assertThat(denied.getSourceIpsList()).containsExactly(client6);
                System.out.printf("[flow logs e2e bpf ipv6] allowed: %s%n  denied: %s%n", oneLine(total),
                        oneLine(denied));
            }
        }
    }

    /**
     * As Calico's felix: flow logs go to a goldmane that asks for a client certificate, over
     * mutual TLS with felix's typha client files (FELIX_TYPHACAFILE, FELIX_TYPHACERTFILE,
     * FELIX_TYPHAKEYFILE; typhaCN goes with them but names typha, not goldmane). The refusals:
     * {@code flows/FlowLogsTlsTest}.
     */
    @Test
    void nftablesOverMutualTls(@TempDir Path dir) throws Exception {
        run(Backend.NFTABLES, TestCertificates.generate(dir));
    }

    private void run(Backend backend) throws Exception {
        run(backend, null);
    }

    private void run(Backend backend, TestCertificates tls) throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(backend.unavailableReason() == null, () -> backend + ": " + backend.unavailableReason());
        TestDatastore etcd = new TestDatastore.Etcd(ETCD);
        etcd.reset();
        try (InProcessGoldmane goldmane = new InProcessGoldmane(0, null, tls);
             Datastore store = etcd.open();
             Cluster cluster = new Cluster(etcd.clusterObjects())) {
            Writes.clusterReady(store);
            createPolicies(store);
            List<String> flowLogArgs = new java.util.ArrayList<>(List.of(
                    "--FELIX_FLOWLOGSGOLDMANESERVER=" + goldmane.target(), "--FELIX_FLOWLOGSFLUSHINTERVAL=1s"));
            if (tls != null) {
                flowLogArgs.addAll(List.of("--FELIX_TYPHACAFILE=" + tls.caCert(),
                        "--FELIX_TYPHACERTFILE=" + tls.clientCert(), "--FELIX_TYPHAKEYFILE=" + tls.clientKey(),
                        "--FELIX_TYPHACN=typha-server"));
            }
            try (FelixProcess felix = new FelixProcess(etcd.felixArgs(), cluster.host.name(), backend, "Warning",
                    flowLogArgs.toArray(String[]::new))) {
                felix.awaitReady(Duration.ofSeconds(60));
                Workload client = cluster.client;
                Workload api = cluster.api;
                // The policy is in the kernel once 8080 connects and 9000 does not (polled: the
                // readiness probe does not wait for the kernel).
                Await.until("client -> api:8080 connects", Duration.ofSeconds(20),
                        () -> client.netns().tcpConnects(api.ip(), 8080, Duration.ofMillis(500)));
                assertThat(client.netns().tcpConnects(api.ip(), 9000, Duration.ofMillis(300))).isFalse();
                for (int i = 0; i < 3; i++) {
                    assertThat(client.netns().tcpConnects(api.ip(), 8080, Duration.ofSeconds(2))).isTrue();
                }

                Flow allowed = awaitOneFlow(goldmane, "api", 8080, Reporter.Dst, Action.Allow);
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
                Flow total = awaitFlow(goldmane, "api", 8080, Reporter.Dst, Action.Allow,
                        "4 connections started, 4 packets out",
                        f -> f.getNumConnectionsStarted() >= 4 && f.getPacketsOut() >= 4);
                assertThat(total.getBytesIn()).isGreaterThanOrEqualTo(4 * 2 * 40);
                assertThat(total.getPacketsOut()).isGreaterThanOrEqualTo(4);
                assertThat(total.getNumConnectionsStarted()).isGreaterThanOrEqualTo(4);
                // Each connection was closed at once: conntrack keeps it in TIME_WAIT, which counts
                // as completed, not live.
                Flow closed = awaitFlow(goldmane, "api", 8080, Reporter.Dst, Action.Allow, "4 connections completed",
                        f -> f.getNumConnectionsCompleted() >= 4);
                assertThat(closed.getNumConnectionsCompleted()).isGreaterThanOrEqualTo(4);

                Flow denied = deniedAndSource(goldmane);
                if (backend == Backend.NFTABLES) {
                    dnatToAService(cluster, goldmane);
                    acrossARestart(cluster, goldmane, felix,
                            () -> new FelixProcess(etcd.felixArgs(), cluster.host.name(), backend, "Warning",
                                    flowLogArgs.toArray(String[]::new)));
                }
                System.out.printf("[flow logs e2e %s] allowed: %s%n  denied: %s%n", backend,
                        oneLine(total), oneLine(denied));
            }
        }
    }

    /** api-ingress (allow TCP 8080, deny TCP 9000 to app == 'api') and the staged api-lockdown (deny 8080) before it. */
    private static void createPolicies(Datastore store) throws Exception {
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
    }

    /** {@return the denied flow (9000, rule 1 of api-ingress)}, after checking it and the Src side's profile */
    private static Flow deniedAndSource(InProcessGoldmane goldmane) throws Exception {
        Flow denied = awaitOneFlow(goldmane, "api", 9000, Reporter.Dst, Action.Deny);
        PolicyHit deny = denied.getKey().getPolicies().getEnforcedPolicies(0);
        assertThat(deny.getName()).isEqualTo("api-ingress");
        assertThat(deny.getRuleIndex()).isEqualTo(1);
        assertThat(deny.getAction()).isEqualTo(Action.Deny);
        assertThat(denied.getPacketsIn()).isGreaterThanOrEqualTo(1);
        assertThat(denied.getBytesIn()).isGreaterThanOrEqualTo(40);
        assertThat(denied.getNumConnectionsLive()).isZero();
        // The source side saw both connections leave through its profile (kns.dev allows).
        Flow src = awaitOneFlow(goldmane, "api", 8080, Reporter.Src, Action.Allow);
        assertThat(src.getKey().getPolicies().getEnforcedPolicies(0).getKind()).isEqualTo(PolicyKind.Profile);
        return denied;
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
        Flow f = awaitFlow(goldmane, "api", 8080, Reporter.Dst, Action.Allow,
                "dest_service_port 80, 2 connections started and completed, 2 packets out",
                svc -> svc.getKey().getDestServicePort() == 80 && svc.getNumConnectionsStarted() >= 2
                        && svc.getPacketsOut() >= 2 && svc.getNumConnectionsCompleted() >= 2);
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

    /**
     * Issue 29: a UDP exchange client → db:53 goes on while felix is stopped and started again. The
     * new felix finds the connection in conntrack and reports it as a partial record (the key's
     * {@code partial} mark) with conntrack's counters since it began, so the datagrams sent while
     * felix was away are counted; its trace is derived from the policy in force (db's namespace
     * profile), and it is not counted as started again. The first felix's complete record stays apart,
     * under its own key.
     */
    private static void acrossARestart(Cluster cluster, InProcessGoldmane goldmane, FelixProcess first,
            java.util.function.Supplier<FelixProcess> start) throws Exception {
        Workload db = cluster.db;
        try (java.net.DatagramSocket udp = cluster.client.netns().call(() -> new java.net.DatagramSocket(
                new java.net.InetSocketAddress(java.net.InetAddress.getByName(cluster.client.ip()), 0)))) {
            udp.setSoTimeout(2000);
            int sent = exchange(udp, db, 3);
            Flow seen = awaitFlow(goldmane, "db", 53, Reporter.Dst, Action.Allow, "the first felix's record",
                    f -> !f.getKey().getPartial() && f.getKey().getProto().equals("udp"));
            assertThat(seen.getPacketsIn()).isPositive();
            first.close();
            sent += exchange(udp, db, 5); // felix is away: no one reports these
            try (FelixProcess second = start.get()) {
                second.awaitReady(Duration.ofSeconds(60));
                int all = sent;
                Flow partial = awaitFlow(goldmane, "db", 53, Reporter.Dst, Action.Allow,
                        "the partial record with every datagram sent, " + all,
                        f -> f.getKey().getPartial() && f.getPacketsIn() >= all);
                assertThat(partial.getKey().getSourceName()).isEqualTo("client");
                assertThat(partial.getKey().getProto()).isEqualTo("udp");
                assertThat(partial.getPacketsOut()).as("the echoes").isGreaterThanOrEqualTo(all);
                assertThat(partial.getBytesIn()).isGreaterThanOrEqualTo(all * (20 + 8 + 16L));
                assertThat(partial.getKey().getPolicies().getEnforcedPolicies(0).getKind()).as("derived")
                        .isEqualTo(PolicyKind.Profile);
                assertThat(partial.getNumConnectionsLive()).isEqualTo(1);
                assertThat(partial.getNumConnectionsStarted()).as("continuing: the first felix counted its start")
                        .isZero();
                Flow src = awaitFlow(goldmane, "db", 53, Reporter.Src, Action.Allow, "the client's partial record",
                        f -> f.getKey().getPartial() && f.getPacketsOut() >= all);
                assertThat(src.getKey().getSourceName()).isEqualTo("client");
                System.out.printf("[flow logs e2e restart] %d datagrams, %d while felix was away; partial: %s%n",
                        all, 5, oneLine(partial));
            }
        }
    }

    /** {@return {@code n}}, after {@code n} datagrams to {@code to}'s UDP echo on 53, each answered. */
    private static int exchange(java.net.DatagramSocket udp, Workload to, int n) throws Exception {
        byte[] buf = new byte[64];
        for (int i = 0; i < n; i++) {
            byte[] token = ("flw-probe-" + i + "-" + System.nanoTime()).substring(0, 16).getBytes(
                    java.nio.charset.StandardCharsets.US_ASCII);
            udp.send(new java.net.DatagramPacket(token, token.length, java.net.InetAddress.getByName(to.ip()), 53));
            java.net.DatagramPacket p = new java.net.DatagramPacket(buf, buf.length);
            udp.receive(p);
            assertThat(java.util.Arrays.copyOf(p.getData(), p.getLength())).as("echo " + i).isEqualTo(token);
        }
        return n;
    }

    private static String oneLine(Flow f) {
        return f.toString().replace('\n', ' ');
    }

    /** {@return every flow goldmane holds now}. */
    private static List<Flow> all(InProcessGoldmane g) {
        try {
            return g.list().getFlowsList().stream().map(FlowResult::getFlow).toList();
        } catch (Exception e) {
            throw new IllegalStateException("goldmane's flow list: " + e.getMessage(), e);
        }
    }

    private static List<Flow> flows(InProcessGoldmane g, String dest, int port, Reporter r, Action a) {
        return all(g).stream().filter(f -> f.getKey().getDestName().equals(dest) && f.getKey().getDestPort() == port
                && f.getKey().getReporter() == r && f.getKey().getAction() == a).toList();
    }

    /**
     * {@return the first flow to {@code dest:port} reported by {@code r} with action {@code a} for
     * which {@code enough} holds} (counters arrive over several flushes); the failure names what
     * goldmane holds.
     */
    private static Flow awaitFlow(InProcessGoldmane g, String dest, int port, Reporter r, Action a, String what,
            Predicate<Flow> enough) {
        String awaited = a + " flow to " + dest + ":" + port + " reported by " + r + " with " + what;
        try {
            return Await.value(awaited, FLOW_DEADLINE, () -> flows(g, dest, port, r, a).stream().filter(enough)
                    .findFirst());
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; goldmane holds:\n" + all(g).stream()
                    .map(FlowLogsE2ETest::oneLine).collect(Collectors.joining("\n")), e);
        }
    }

    /** {@link #awaitFlow} of any flow there, which must be the only one under its key. */
    private static Flow awaitOneFlow(InProcessGoldmane g, String dest, int port, Reporter r, Action a) {
        Flow f = awaitFlow(g, dest, port, r, a, "any counters", any -> true);
        assertThat(flows(g, dest, port, r, a)).as("one key per flow").hasSize(1);
        return f;
    }
}
