package calico.felix.e2e;

import static calico.felix.e2e.Probe.icmp;
import static calico.felix.e2e.Probe.tcp;
import static calico.felix.e2e.Probe.udp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.model.Action;
import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.bpf.BpfMap;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.health.HealthAggregator;
import calico.typha.server.ServerSettings;
import calico.typha.server.TyphaServer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The policy matrix with real packets through the whole felix application: felix started once
 * per backend and datastore (subclasses) programming the {@link Cluster}'s host namespace, on a
 * real etcd with the cluster's Kubernetes objects converted as Calico's Kubernetes datastore
 * would present them, or on a real kube-apiserver where they are real objects read through the
 * kubernetes datastore ({@link TestDatastore}); directly, or through a real typha serving from
 * that datastore. Calico's own resources are written through libcalico's datastore. Every
 * scenario writes its policies, polls real TCP, UDP and ICMP exchanges between the pods until
 * they show the expected outcome (at most 2 s after the write, the bound), records that
 * delay, and puts everything back as it found it (then waits for the baseline, so scenarios are
 * independent). The delays are printed per class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class PolicyMatrix {

    /** A NetworkPolicy letting dev's namespaces into prod's api on TCP 8080 (and isolating api). */
    private static final String API_FROM_DEV = """
            metadata: {name: api-from-dev, namespace: prod}
            spec:
              podSelector: {matchLabels: {app: api}}
              ingress:
                - from: [{namespaceSelector: {matchLabels: {env: dev}}}]
                  ports: [{protocol: TCP, port: 8080}]
            """;

    /**
     * How long a step may take before it fails: a safety bound, not the speed goal. The goal (a change in the
     * kernel within two seconds) is read from the times each step prints; asserting it failed a quiet-machine
     * figure of ~1.4 s when the machine was loaded (a repair waiting for a 1 s refresh took over 2 s at load 25).
     */
    private static final Duration CHANGE_DEADLINE = Duration.ofSeconds(10);
    private static final ResourceCodec CODEC = ResourceCodec.get();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private final Backend backend;
    private final TestDatastore datastore;
    private final boolean throughTypha;
    private final String label;
    private Cluster cluster;
    private Datastore store;
    private Datastore typhaStore;
    private TyphaServer typha;
    /** One felix per node, in {@link Cluster#hosts} order. */
    private final List<FelixProcess> felixes = new ArrayList<>();
    private final boolean twoNodes;
    private Reachability reach;
    /**
     * How to put back each thing this scenario changed, by what it is ({@code calico:<key>},
     * {@code namespace:<name>}, ...): recorded at its first change, run newest first.
     */
    private final Map<String, Runnable> undo = new LinkedHashMap<>();
    private String scenario;
    private String skipReason;
    private long writtenAt;
    private Instant writtenAtWall = Instant.EPOCH;

    Workload web;
    Workload api;
    Workload client;
    Workload db;

    PolicyMatrix(Backend backend, TestDatastore datastore, boolean throughTypha) {
        this(backend, datastore, throughTypha, false);
    }

    /**
     * @param twoNodes the pods on two nodes ({@link PodHosts#twoNodesVxlan}: prod's on one, dev's on
     *                 the other, VXLAN between them), one felix each; else all on one node
     */
    PolicyMatrix(Backend backend, TestDatastore datastore, boolean throughTypha, boolean twoNodes) {
        this.backend = backend;
        this.datastore = datastore;
        this.throughTypha = throughTypha;
        this.twoNodes = twoNodes;
        this.label = backend + " " + datastore.name() + (throughTypha ? " through typha" : "")
                + (twoNodes ? " on two nodes (VXLAN)" : "");
    }

    @BeforeAll
    void startFelix() throws Exception {
        // Skipped per test (in name()), so that reports list each scenario as skipped with the reason.
        skipReason = !NetNs.available() ? "needs root to create network namespaces" : backend.unavailableReason();
        if (skipReason != null) {
            return;
        }
        datastore.reset();
        store = datastore.open();
        reach = new Reachability(CHANGE_DEADLINE);
        Writes.clusterReady(store);
        cluster = new Cluster(datastore.clusterObjects(),
                twoNodes ? PodHosts.twoNodesVxlan(datastore, backend) : PodHosts.oneNode());
        web = cluster.web;
        api = cluster.api;
        client = cluster.client;
        db = cluster.db;
        if (twoNodes) {
            // Every prod-dev pair crosses nodes (both ways in the baseline every scenario restores).
            assertThat(cluster.hostOf(web)).as("prod's node").isEqualTo(cluster.hostOf(api))
                    .isNotEqualTo(cluster.hostOf(client));
            assertThat(cluster.hostOf(client)).as("dev's node").isEqualTo(cluster.hostOf(db));
        }
        List<String> felixDatastore = datastore.felixArgs();
        if (throughTypha) {
            typhaStore = datastore.open();
            typha = new TyphaServer(typhaStore, ServerSettings.defaults(0), null, new SimpleMeterRegistry(),
                    new HealthAggregator(Clock.systemUTC()), "e2e");
            typha.start();
            felixDatastore = new ArrayList<>(datastore.felixArgsThroughTypha());
            felixDatastore.add("--FELIX_TYPHAADDR=127.0.0.1:" + typha.port());
        }
        long t0 = System.nanoTime();
        // A refresh every second, so that a stranger's edit is repaired within the 2 s bound.
        for (PodHosts.Host h : cluster.hosts()) {
            felixes.add(new FelixProcess(h.node(), felixDatastore, h.netns().name(), backend, "Warning",
                    "--FELIX_IPTABLESREFRESHINTERVAL=1"));
        }
        felixes.forEach(f -> f.awaitReady(Duration.ofSeconds(60)));
        if (typha != null) {
            assertThat(typha.connectionCount()).as("felix's streams to typha").isEqualTo(felixes.size());
        }
        System.out.printf("[e2e %s] felix started and ready in %d ms%n", label, (System.nanoTime() - t0) / 1_000_000);
    }

    @AfterAll
    void stopFelix() {
        if (reach != null) {
            System.out.println(reach.report("e2e " + label));
            reach.close();
        }
        felixes.forEach(FelixProcess::close);
        if (typha != null) {
            typha.close();
            typhaStore.close();
        }
        if (store != null) {
            store.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void name(TestInfo info) {
        assumeTrue(skipReason == null, () -> label + ": " + skipReason);
        scenario = info.getTestMethod().map(m -> m.getName()).orElse("?");
    }

    /** Puts back everything the scenario changed, newest first, and waits for the baseline. */
    @AfterEach
    void restore() {
        if (store == null) {
            return;
        }
        List<Runnable> changed = new ArrayList<>(undo.values());
        Collections.reverse(changed);
        markWrite();
        changed.forEach(Runnable::run);
        undo.clear();
        Map<Probe, Boolean> baseline = new LinkedHashMap<>();
        for (Workload from : cluster.workloads()) {
            for (Workload to : cluster.workloads()) {
                if (from != to) {
                    baseline.put(tcp(from, to, 8080), true);
                }
            }
        }
        try (Reachability r = new Reachability(Duration.ofSeconds(5))) {
            r.await(scenario, "restore", writtenAt, baseline, this::settle, this::diagnostics);
        }
    }

    // ---------------------------------------------------------------- scenarios

    @Test
    @Order(1)
    void noPolicyProfilesAllow() {
        Expect e = expect("no policy: kns.* profiles allow all");
        for (Workload from : cluster.workloads()) {
            for (Workload to : cluster.workloads()) {
                if (from != to) {
                    e.allow(tcp(from, to, 8080), udp(from, to, 53), icmp(from, to));
                }
            }
        }
        markWrite();
        e.check();
    }

    @Test
    @Order(2)
    void denyAll() {
        put(yaml("""
                kind: GlobalNetworkPolicy
                metadata: {name: deny-all}
                spec:
                  selector: projectcalico.org/orchestrator == 'k8s'
                  types: [Ingress, Egress]
                """));
        expect("GNP selecting every pod, no rules").block(allThree(web, api)).block(allThree(client, db))
                .block(tcp(api, client, 8080), icmp(db, web)).check();
        delete(key("GlobalNetworkPolicy", null, "deny-all"));
        expect("deny-all deleted").allow(allThree(web, api)).allow(allThree(client, db)).check();
    }

    @Test
    @Order(3)
    void allowBySelector() {
        put(yaml("""
                kind: NetworkPolicy
                metadata: {name: api-from-web, namespace: prod}
                spec:
                  selector: app == 'api'
                  types: [Ingress]
                  ingress:
                    - action: Allow
                      source: {selector: app == 'web'}
                """));
        expect("allow app=web to app=api").allow(allThree(web, api)).block(allThree(client, api))
                .block(tcp(db, api, 8080)).allow(tcp(api, web, 80), icmp(api, client)).check();
        relabel(client, Map.of("app", "web"));
        expect("dev/client relabelled app=web: rule selector is namespaced").block(tcp(client, api, 8080))
                .allow(tcp(web, api, 8080)).check();
        relabel(web, Map.of("app", "other"));
        expect("prod/web relabelled app=other").block(allThree(web, api)).check();
        relabel(web, Map.of("app", "web"));
        expect("prod/web relabelled back to app=web").allow(allThree(web, api)).block(tcp(client, api, 8080)).check();
    }

    @Test
    @Order(4)
    void allowByNamespaceSelector() {
        put(yaml("""
                kind: NetworkPolicy
                metadata: {name: api-from-dev, namespace: prod}
                spec:
                  selector: app == 'api'
                  ingress:
                    - action: Allow
                      source: {namespaceSelector: env == 'dev'}
                """));
        expect("allow from namespaces env=dev").allow(allThree(client, api)).allow(tcp(db, api, 8080))
                .block(allThree(web, api)).check();
        relabelNamespace("dev", Map.of("env", "staging"));
        expect("namespace dev relabelled env=staging (profile kns.dev)").block(allThree(client, api))
                .block(tcp(db, api, 8080)).check();
        relabelNamespace("dev", Map.of("env", "dev"));
        expect("namespace dev relabelled back").allow(allThree(client, api)).block(tcp(web, api, 8080)).check();
    }

    @Test
    @Order(5)
    void allowByServiceAccounts() {
        put(yaml("""
                kind: GlobalNetworkPolicy
                metadata: {name: api-from-frontend-sa}
                spec:
                  selector: app == 'api'
                  ingress:
                    - action: Allow
                      source:
                        serviceAccounts: {names: [frontend]}
                """));
        expect("allow service account name frontend").allow(allThree(web, api)).block(allThree(client, api))
                .check();
        put(yaml("""
                kind: GlobalNetworkPolicy
                metadata: {name: api-from-frontend-sa}
                spec:
                  selector: app == 'api'
                  ingress:
                    - action: Allow
                      source:
                        serviceAccounts: {selector: role == 'fe'}
                """));
        expect("allow service accounts role=fe").allow(tcp(web, api, 8080)).block(tcp(client, api, 8080)).check();
        relabelServiceAccount("dev", "default", Map.of("role", "fe"));
        expect("dev/default relabelled role=fe (profile ksa.dev.default)").allow(allThree(client, api))
                .allow(tcp(db, api, 8080)).check();
        relabelServiceAccount("prod", "frontend", Map.of());
        expect("prod/frontend loses role=fe").block(allThree(web, api)).allow(tcp(client, api, 8080)).check();
        relabelServiceAccount("prod", "frontend", Map.of("role", "fe"));
        relabelServiceAccount("dev", "default", Map.of());
        expect("service accounts relabelled back").allow(tcp(web, api, 8080)).block(tcp(client, api, 8080)).check();
    }

    @Test
    @Order(6)
    void portsRangesAndNamedPorts() {
        put(apiIngress("""
                    - action: Allow
                      protocol: TCP
                      destination: {ports: [8080]}
                    - action: Allow
                      protocol: UDP
                      destination: {ports: [53]}
                """));
        expect("TCP 8080 and UDP 53 only").allow(tcp(web, api, 8080), udp(web, api, 53))
                .block(tcp(web, api, 8081), tcp(web, api, 80), udp(web, api, 5353), icmp(web, api)).check();
        put(apiIngress("""
                    - action: Allow
                      protocol: TCP
                      destination: {ports: ["8000:8080"]}
                """));
        expect("TCP range 8000:8080").allow(tcp(web, api, 8080))
                .block(tcp(web, api, 8081), tcp(web, api, 9000), udp(web, api, 53)).check();
        put(apiIngress("""
                    - action: Allow
                      protocol: TCP
                      destination: {ports: ["8081:9000", 80]}
                """));
        expect("TCP range 8081:9000 and 80").allow(tcp(web, api, 8081), tcp(web, api, 9000), tcp(web, api, 80))
                .block(tcp(web, api, 8080)).check();
        put(apiIngress("""
                    - action: Allow
                      protocol: TCP
                      destination: {ports: [http-alt]}
                    - action: Allow
                      protocol: UDP
                      destination: {ports: [dns]}
                """));
        expect("named ports http-alt (TCP 8080) and dns (UDP 53)").allow(tcp(web, api, 8080), udp(web, api, 53))
                .block(tcp(web, api, 8081), tcp(web, api, 9000), udp(web, api, 5353)).check();
        put(apiIngress("""
                    - action: Allow
                      protocol: TCP
                      destination: {notPorts: [8080, "9000:9001"]}
                """));
        expect("TCP notPorts 8080, 9000:9001").allow(tcp(web, api, 8081), tcp(web, api, 80))
                .block(tcp(web, api, 8080), tcp(web, api, 9000), udp(web, api, 53)).check();
    }

    @Test
    @Order(7)
    void netsAndNotNets() {
        put(apiIngress("""
                    - action: Allow
                      source: {nets: [10.70.1.0/24]}
                """));
        expect("source nets 10.70.1.0/24 (dev pods)").allow(allThree(client, api)).allow(tcp(db, api, 8080))
                .block(allThree(web, api)).check();
        put(apiIngress("""
                    - action: Allow
                      source: {nets: [10.70.1.0/24], notNets: [10.70.1.2/32]}
                """));
        expect("nets 10.70.1.0/24 minus notNets db").allow(tcp(client, api, 8080)).block(tcp(db, api, 8080), tcp(web, api, 8080))
                .check();
        put(apiIngress("""
                    - action: Allow
                      source: {nets: [10.70.0.1/32, 10.70.1.2/32]}
                """));
        expect("two source nets (web, db)").allow(tcp(web, api, 8080), udp(db, api, 53))
                .block(tcp(client, api, 8080)).check();
        put(apiIngress("""
                    - action: Deny
                      source: {notNets: [10.70.0.0/24]}
                    - action: Allow
                """));
        expect("deny notNets 10.70.0.0/24, then allow").allow(allThree(web, api))
                .block(allThree(client, api)).block(tcp(db, api, 8080)).check();
    }

    @Test
    @Order(8)
    void egressRules() {
        put(yaml("""
                kind: NetworkPolicy
                metadata: {name: web-egress, namespace: prod}
                spec:
                  selector: app == 'web'
                  types: [Egress]
                  egress:
                    - action: Allow
                      protocol: TCP
                      destination: {selector: app == 'api', ports: [8080]}
                    - action: Allow
                      protocol: ICMP
                      destination: {selector: app == 'api'}
                """));
        expect("web egress: TCP 8080 and ICMP to api").allow(tcp(web, api, 8080), icmp(web, api))
                .block(tcp(web, api, 8081), udp(web, api, 53), tcp(web, client, 8080), icmp(web, db))
                .allow(tcp(client, web, 80), icmp(api, web)).check();
        put(yaml("""
                kind: NetworkPolicy
                metadata: {name: web-egress, namespace: prod}
                spec:
                  selector: app == 'web'
                  types: [Egress]
                  egress:
                    - action: Deny
                      destination: {nets: [10.70.1.2/32]}
                    - action: Allow
                      destination: {nets: [10.70.1.0/24]}
                """));
        expect("web egress: deny db's /32, allow dev's /24").allow(allThree(web, client))
                .block(allThree(web, db)).block(tcp(web, api, 8080)).check();
    }

    @Test
    @Order(9)
    void tiersPassAndEndOfTierDeny() {
        put(new Tier(ObjectMeta.named("security"), new TierSpec(100.0, null)));
        put(yaml("""
                kind: GlobalNetworkPolicy
                metadata: {name: security.gate}
                spec:
                  tier: security
                  order: 10
                  selector: projectcalico.org/orchestrator == 'k8s'
                  types: [Ingress]
                  ingress:
                    - action: Allow
                      source: {selector: app == 'web'}
                    - action: Pass
                      source: {namespaceSelector: env == 'dev'}
                """));
        put(yaml("""
                kind: GlobalNetworkPolicy
                metadata: {name: api-from-client}
                spec:
                  selector: app == 'api'
                  ingress:
                    - action: Allow
                      source: {selector: app == 'client'}
                """));
        expect("security tier allows web, passes dev, denies the rest")
                .allow(allThree(web, api))                 // allowed in the security tier
                .allow(allThree(client, api))              // passed, allowed by the default tier
                .block(allThree(db, api))                  // passed, default tier's end-of-tier deny
                .block(tcp(api, client, 8080), icmp(api, web)) // security tier's end-of-tier deny
                .allow(tcp(client, db, 8080))              // passed, no default-tier policy: profile
                .check();
        put(new Tier(ObjectMeta.named("security"), new TierSpec(100.0, Action.Pass)));
        expect("security tier defaultAction Pass").allow(tcp(api, client, 8080), icmp(api, web))
                .block(tcp(db, api, 8080)).allow(tcp(web, api, 8080)).check();
    }

    @Test
    @Order(10)
    void profileRules() {
        assumeTrue(datastore.profilesReadOnlyReason() == null, () -> label + ": " + datastore.profilesReadOnlyReason());
        Profile prod = (Profile) store.get(key("Profile", null, "kns.prod")).orElseThrow();
        put(new Profile(ObjectMeta.named("kns.prod"), new ProfileSpec(List.of(rule("""
                action: Allow
                source: {selector: projectcalico.org/namespace == 'prod'}
                """)), prod.spec().egress(), prod.spec().labelsToApply())));
        expect("kns.prod ingress only from prod pods").allow(allThree(web, api)).block(allThree(client, api))
                .allow(tcp(client, db, 8080), tcp(api, client, 8080)).check();
        put(new Profile(ObjectMeta.named("kns.prod"), new ProfileSpec(List.of(rule("""
                action: Deny
                protocol: TCP
                destination: {ports: [8081]}
                """), rule("action: Allow")), prod.spec().egress(), prod.spec().labelsToApply())));
        expect("kns.prod denies TCP 8081, allows the rest").allow(tcp(client, api, 8080), udp(client, api, 53))
                .block(tcp(client, api, 8081), tcp(web, api, 8081)).check();
    }

    @Test
    @Order(11)
    void kubernetesNetworkPolicies() {
        knp("""
                metadata: {name: default-deny-ingress, namespace: prod}
                spec:
                  podSelector: {}
                  policyTypes: [Ingress]
                """);
        expect("knp default-deny-ingress in prod").block(allThree(client, api)).block(tcp(web, api, 8080))
                .block(tcp(client, web, 80)).allow(tcp(api, client, 8080), icmp(web, db), tcp(client, db, 8080))
                .check();
        knp(API_FROM_DEV);
        expect("knp: dev namespaces to api TCP 8080").allow(tcp(client, api, 8080), tcp(db, api, 8080))
                .block(tcp(client, api, 8081), udp(client, api, 53), icmp(client, api), tcp(web, api, 8080)).check();
        knp("""
                metadata: {name: db, namespace: dev}
                spec:
                  podSelector: {matchLabels: {app: db}}
                  policyTypes: [Ingress, Egress]
                  ingress:
                    - from: [{podSelector: {matchLabels: {app: client}}}]
                      ports: [{protocol: UDP, port: 53}]
                  egress:
                    - to: [{ipBlock: {cidr: 10.70.0.0/16, except: [10.70.1.1/32]}}]
                """);
        expect("knp on db: ingress UDP 53 from client, egress ipBlock except client")
                .allow(udp(client, db, 53)).block(tcp(client, db, 8080), icmp(client, db), tcp(web, db, 8080))
                .allow(tcp(db, api, 8080)).block(allThree(db, client)).allow(tcp(web, client, 8080))
                .check();
        deleteKnp("prod/default-deny-ingress");
        expect("knp default-deny-ingress deleted").allow(tcp(client, web, 80), icmp(db, web))
                .block(tcp(web, api, 8080)).check();
    }

    @Test
    @Order(13)
    void adminNetworkPoliciesNamespacePoliciesAndTheBaseline() {
        // The tiers Calico's start-up makes (node-startup's ClusterDefaults).
        put(new Tier(ObjectMeta.named("kube-admin"), new TierSpec(1_000.0, Action.Pass)));
        put(new Tier(ObjectMeta.named("kube-baseline"), new TierSpec(10_000_000.0, Action.Pass)));
        admin("BaselineAdminNetworkPolicy", "default", """
                subject: {namespaces: {}}
                ingress:
                - {name: deny-all, action: Deny, from: [{namespaces: {}}]}
                """);
        expect("baseline denies every ingress no namespace policy allows")
                .block(tcp(client, api, 8080), tcp(api, client, 8080), tcp(web, db, 8080), icmp(db, web)).check();
        knp(API_FROM_DEV);
        expect("the namespace policy's allow comes before the baseline").allow(tcp(client, api, 8080), tcp(db, api, 8080))
                .block(tcp(web, api, 8080), tcp(client, web, 8080), tcp(api, client, 8080)).check();
        admin("AdminNetworkPolicy", "deny-into-prod", """
                priority: 20
                subject: {namespaces: {matchLabels: {env: prod}}}
                ingress:
                - {name: deny-all, action: Deny, from: [{namespaces: {}}]}
                """);
        expect("an admin Deny beats the namespace policy").block(tcp(client, api, 8080), tcp(db, api, 8080)).check();
        admin("AdminNetworkPolicy", "pass-dev-into-prod", """
                priority: 10
                subject: {namespaces: {matchLabels: {env: prod}}}
                ingress:
                - {name: pass-dev, action: Pass, from: [{namespaces: {matchLabels: {env: dev}}}]}
                """);
        expect("Pass skips the later admin Deny and falls through to the namespace policy")
                .allow(tcp(client, api, 8080), tcp(db, api, 8080))
                .block(tcp(client, api, 8081), tcp(client, web, 8080), tcp(web, api, 8080)).check();
        admin("AdminNetworkPolicy", "web-to-api", """
                priority: 5
                subject: {pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: api}}}}
                ingress:
                - name: web
                  action: Allow
                  from: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: web}}}}]
                  ports: [{portNumber: {protocol: TCP, port: 8080}}]
                """);
        expect("the lowest priority number first: admin Allow for its port only")
                .allow(tcp(web, api, 8080), tcp(client, api, 8080)).block(tcp(web, api, 8081), tcp(client, web, 8080))
                .check();
    }

    @Test
    @Order(12)
    void strangerRulesAreRepairedAtTheNextRefresh() {
        String iptables = backend == Backend.IPTABLES_NFT ? "iptables-nft" : "iptables-legacy";
        String[] insertDrop = backend == Backend.NFTABLES
                ? new String[] {"nft", "insert", "rule", "inet", "calico", "cali-tw-" + api.interfaceName(), "drop"}
                : new String[] {iptables, "-I", "cali-tw-" + api.interfaceName(), "1", "-j", "DROP"};
        // iptables: our jump from FORWARD; nftables: the forward base chain's jump into cali-FORWARD.
        String[] deleteHook = backend == Backend.NFTABLES
                ? new String[] {"nft", "flush", "chain", "inet", "calico", "filter-FORWARD"}
                : new String[] {iptables, "-D", "FORWARD", "-j", "cali-FORWARD"};
        // BPF: the stranger deletes api's ingress table entry from cali_eps (the program then drops
        // everything to api), and our tc filters from web's and api's interfaces.
        Runnable drop = backend == Backend.BPF ? () -> deleteBpfTable(api)
                : () -> cluster.hostOf(api).exec(insertDrop);
        markWrite();
        expect("baseline (no write)").allow(allThree(web, api)).check();
        // The DROP works until felix's refresh removes it (a probe sent right after the insert
        // sees it; should a refresh land in between, insert again).
        boolean seenBlocked = false;
        for (int attempt = 0; attempt < 3 && !seenBlocked; attempt++) {
            markWrite();
            drop.run();
            seenBlocked = !tcp(web, api, 8080).passes(Reachability.NEGATIVE);
        }
        assertThat(seenBlocked).as("the stranger's DROP blocks web->api").isTrue();
        expect("a stranger's DROP first in cali-tw-<api>: repaired (refresh every 1 s)")
                .allow(allThree(web, api)).allow(tcp(client, api, 8080)).check();
        markWrite();
        if (backend == Backend.BPF) {
            for (Workload w : List.of(web, api)) {
                for (calico.dataplane.bpf.TcDirection hook : calico.dataplane.bpf.TcDirection.values()) {
                    detachBpf(w, hook);
                }
            }
        } else {
            cluster.hostOf(api).exec(deleteHook);
        }
        put(yaml("""
                kind: GlobalNetworkPolicy
                metadata: {name: deny-all}
                spec:
                  selector: projectcalico.org/orchestrator == 'k8s'
                  types: [Ingress, Egress]
                """));
        expect("FORWARD jump deleted by a stranger, then deny-all: jump restored").block(allThree(web, api)).check();
        if (backend == Backend.BPF && java.nio.file.Files.exists(linkPin(web, calico.dataplane.bpf.TcDirection.INGRESS))) {
            // tcx: a stranger removes web's link pins. felix holds its links open, so the programs
            // stay on the hooks (a pin-only link would leave them when the kernel releases it),
            // and the refresh pins the same links again.
            markWrite();
            Map<calico.dataplane.bpf.TcDirection, Integer> linkIds = new java.util.EnumMap<>(calico.dataplane.bpf.TcDirection.class);
            for (calico.dataplane.bpf.TcDirection hook : calico.dataplane.bpf.TcDirection.values()) {
                java.nio.file.Path pin = linkPin(web, hook);
                // The deny-all above is seen as soon as either side's hooks are back: wait for felix's
                // link on web's hook (a stranger-detached one reports interface 0) before noting its ID.
                int held = calico.libcalico.testing.Await.value("felix's link on web's " + hook + " hook, pinned",
                        Duration.ofSeconds(10), () -> calico.dataplane.bpf.Tcx.pinned(pin)
                                .filter(l -> l.ifindex() != 0).map(calico.dataplane.bpf.Tcx.LinkState::id));
                linkIds.put(hook, held);
                cluster.hostOf(web).exec("rm", pin.toString());
            }
            for (calico.dataplane.bpf.TcDirection hook : calico.dataplane.bpf.TcDirection.values()) {
                java.nio.file.Path pin = linkPin(web, hook);
                calico.libcalico.testing.Await.until("web's " + hook + " link pinned again", Duration.ofSeconds(10),
                        () -> calico.dataplane.bpf.Tcx.pinned(pin).map(calico.dataplane.bpf.Tcx.LinkState::id),
                        java.util.Optional::isPresent);
                assertThat(calico.dataplane.bpf.Tcx.pinned(pin)).as("the link felix held, not a new one")
                        .map(calico.dataplane.bpf.Tcx.LinkState::id).hasValue(linkIds.get(hook));
            }
            expect("web's tcx link pins removed by a stranger: still denied").block(allThree(web, api)).check();
        }
    }

    // ---------------------------------------------------------------- helpers

    /** A stranger takes our program off {@code w}'s hook: the tcx link detached ({@code bpftool link detach}), or our tc filter deleted. */
    private void detachBpf(Workload w, calico.dataplane.bpf.TcDirection hook) {
        NetNs host = cluster.hostOf(w);
        java.nio.file.Path link = linkPin(w, hook);
        if (java.nio.file.Files.exists(link)) {
            host.run(() -> calico.dataplane.bpf.Tcx.detachLink(link));
        } else {
            host.exec("tc", "filter", "del", "dev", w.interfaceName(), hook.name().toLowerCase(java.util.Locale.ROOT),
                    "pref", "1", "handle", "0xca11", "bpf");
        }
    }

    /** {@return where the felix of {@code w}'s host pins the tcx link of {@code w}'s hook {@code hook}} */
    private java.nio.file.Path linkPin(Workload w, calico.dataplane.bpf.TcDirection hook) {
        NetNs host = cluster.hostOf(w);
        FelixProcess felix = felixes.get(cluster.hosts().stream().map(PodHosts.Host::netns).toList().indexOf(host));
        return calico.dataplane.bpf.PolicyProgram.linkPin(felix.bpfPins(), w.interfaceName(), hook);
    }

    /** A stranger deletes {@code w}'s ingress table entry from the BPF driver's pinned {@code cali_eps}. */
    private void deleteBpfTable(Workload w) {
        NetNs host = cluster.hostOf(w);
        int ifindex = Integer.parseInt(host.exec("cat", "/sys/class/net/" + w.interfaceName() + "/ifindex").strip());
        FelixProcess felix = felixes.get(cluster.hosts().stream().map(PodHosts.Host::netns).toList().indexOf(host));
        BpfMap.withPinned(felix.bpfPins().resolve(PolicyMaps.ENDPOINTS), 8, 8,
                m -> m.delete(PolicyMaps.endpointKey(ifindex, PolicyMaps.Dir.TO_ENDPOINT)));
    }

    /** {@return TCP 8080, UDP 53 and ICMP from {@code from} to {@code to}}. */
    static Probe[] allThree(Workload from, Workload to) {
        return new Probe[] {tcp(from, to, 8080), udp(from, to, 53), icmp(from, to)};
    }

    private Resource apiIngress(String rules) {
        return yaml("""
                kind: GlobalNetworkPolicy
                metadata: {name: api-ingress}
                spec:
                  selector: app == 'api'
                  types: [Ingress]
                  ingress:
                """ + rules);
    }

    private static Resource yaml(String text) {
        return CODEC.parse("apiVersion: projectcalico.org/v3\n" + text);
    }

    private static Rule rule(String text) {
        try {
            return CODEC.jsonMapper().treeToValue(YAML.readTree(text), Rule.class);
        } catch (IOException e) {
            throw new IllegalArgumentException(text, e);
        }
    }

    /**
     * Creates or replaces a {@code networking.k8s.io/v1} NetworkPolicy in the cluster ({@code text}:
     * its YAML without apiVersion and kind): converted to {@code knp.default.*} on etcd, a real
     * object on the kubernetes datastore.
     */
    private void knp(String text) {
        String id = cluster.networkPolicyId(text);
        rememberNetworkPolicy(id);
        markWrite();
        cluster.applyNetworkPolicy(text);
    }

    /** Deletes the NetworkPolicy {@code namespace/name}. */
    private void deleteKnp(String id) {
        rememberNetworkPolicy(id);
        markWrite();
        cluster.deleteNetworkPolicy(id);
    }

    private void rememberNetworkPolicy(String id) {
        Optional<String> before = cluster.networkPolicy(id);
        undo.putIfAbsent("knp:" + id, () -> {
            if (before.isPresent()) {
                cluster.applyNetworkPolicy(before.get());
            } else if (cluster.networkPolicy(id).isPresent()) {
                cluster.deleteNetworkPolicy(id);
            }
        });
    }

    /**
     * Creates or replaces an AdminNetworkPolicy or the BaselineAdminNetworkPolicy ({@code spec}: its spec
     * YAML): converted to {@code kanp.}/{@code kbanp.} GlobalNetworkPolicies on etcd, a real object on
     * the kubernetes datastore. Deleted again when the scenario ends.
     */
    private void admin(String kind, String name, String spec) {
        undo.putIfAbsent("admin:" + kind + "/" + name, () -> cluster.deleteAdminPolicy(kind, name));
        markWrite();
        cluster.applyAdminPolicy("apiVersion: policy.networking.k8s.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: "
                + name + "}\nspec:\n" + spec.indent(2));
    }

    private static ResourceKey key(String kind, String namespace, String name) {
        return ResourceKey.of(ResourceKind.byKind(kind).orElseThrow(), namespace, name);
    }

    private void relabel(Workload w, Map<String, String> labels) {
        markWrite();
        Map<String, String> before = cluster.relabelPod(w, labels);
        undo.putIfAbsent("pod:" + w, () -> cluster.relabelPod(w, before));
    }

    private void relabelNamespace(String name, Map<String, String> labels) {
        markWrite();
        Map<String, String> before = cluster.relabelNamespace(name, labels).orElseThrow();
        undo.putIfAbsent("namespace:" + name, () -> cluster.relabelNamespace(name, before));
    }

    private void relabelServiceAccount(String namespace, String name, Map<String, String> labels) {
        markWrite();
        Map<String, String> before = cluster.relabelServiceAccount(namespace, name, labels).orElseThrow();
        undo.putIfAbsent("serviceaccount:" + namespace + "/" + name,
                () -> cluster.relabelServiceAccount(namespace, name, before));
    }

    /** Writes one of Calico's own resources (a policy, a tier, a profile). */
    private void put(Resource r) {
        remember(r.key());
        markWrite();
        Writes.upsert(store, r);
    }

    private void delete(ResourceKey k) {
        remember(k);
        markWrite();
        store.delete(k, null);
    }

    private void remember(ResourceKey k) {
        if (undo.containsKey("calico:" + k)) {
            return;
        }
        Optional<Resource> before = store.get(k);
        undo.put("calico:" + k, () -> {
            if (before.isPresent()) {
                Writes.upsert(store, before.get());
            } else if (store.get(k).isPresent()) {
                store.delete(k, null);
            }
        });
    }

    /** Delays count from just before a write is sent. */
    private void markWrite() {
        writtenAt = System.nanoTime();
        writtenAtWall = Instant.now();
    }

    /** Waits (at most 1 s each) for every felix to finish a batch after the last write. */
    private void settle() {
        felixes.forEach(f -> f.awaitApplyAfter(writtenAtWall, Duration.ofSeconds(1)));
    }

    private Expect expect(String step) {
        return new Expect(step);
    }

    private String diagnostics() {
        StringBuilder d = new StringBuilder();
        for (int i = 0; i < felixes.size(); i++) {
            FelixProcess felix = felixes.get(i);
            PodHosts.Host h = cluster.hosts().get(i);
            d.append("node ").append(h.node()).append(":\nreadiness: ").append(felix.readiness()).append("\nstatus: ")
                    .append(felix.get("/felix/v1/status")).append("\npolicies: ").append(felix.get("/felix/v1/policies"))
                    .append("\n").append(backend.rulesetDump(h.netns())).append("\n");
            if (backend == Backend.BPF) {
                d.append("tcx link pins: ").append(tcxPins(h.netns(), felix)).append("\n");
            }
        }
        return d.toString();
    }

    /** {@return each tcx link pin of {@code felix}'s with the link's interface and program}, read in {@code ns} */
    private static String tcxPins(NetNs ns, FelixProcess felix) {
        java.nio.file.Path dir = felix.bpfPins().resolve(calico.dataplane.bpf.PolicyProgram.LINKS);
        try (var pins = java.nio.file.Files.list(dir)) {
            List<java.nio.file.Path> all = pins.sorted().toList();
            return ns.call(() -> all.stream().map(p -> p.getFileName() + "=" + calico.dataplane.bpf.Tcx.pinned(p)
                    .map(l -> "if " + l.ifindex() + " prog " + l.programId()).orElse("(none)"))
                    .collect(java.util.stream.Collectors.joining(", ")));
        } catch (IOException | RuntimeException e) {
            return "cannot list " + dir + ": " + e;
        }
    }

    /** The probes of one step and their expected outcomes. */
    final class Expect {
        private final String step;
        private final Map<Probe, Boolean> expected = new LinkedHashMap<>();

        Expect(String step) {
            this.step = step;
        }

        Expect allow(Probe... probes) {
            for (Probe p : probes) {
                expected.put(p, true);
            }
            return this;
        }

        Expect block(Probe... probes) {
            for (Probe p : probes) {
                expected.put(p, false);
            }
            return this;
        }

        void check() {
            reach.await(scenario, step, writtenAt, expected, PolicyMatrix.this::settle, PolicyMatrix.this::diagnostics);
        }
    }
}
