package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.codec.ResourceCodec;
import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.EntityRule;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.testing.NetNs;
import calico.felix.testing.KernelChanges;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole felix application on the kernel dataplane ({@code FELIX_DATAPLANEDRIVERNAME=kernel})
 * programming a test namespace, against a real etcd, observed over HTTP: the admin API and the
 * Prometheus metrics show the active backend and what is programmed; a FelixConfiguration edit in
 * etcd switches the backend at run time (counted as a restart); a refresh interval from the
 * FelixConfiguration drives refreshes; a workload's veth appearing clears the pending interface.
 */
class FelixKernelApplicationTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static final String ME = "node-k";
    private static final String IFACE = "calik1b2c3d4";
    private static final Duration WAIT = Duration.ofSeconds(15);

    private final LocalHttp local = new LocalHttp(WAIT);
    private final ObjectMapper json = new ObjectMapper();
    private Datastore store;
    private NetNs host;
    private FelixApplication app;
    private int adminPort;
    private int healthPort;
    @org.junit.jupiter.api.io.TempDir
    Path mtuDir;

    @AfterEach
    void tearDown() {
        if (app != null) {
            app.close();
        }
        if (store != null) {
            store.close();
        }
        if (host != null) {
            host.close();
        }
    }

    @Test
    void adminAndMetricsShowTheBackendItsSwitchAndWhatIsProgrammedAndARestartChangesNothing() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/iptables-nft-restore"))
                && Files.isExecutable(Path.of("/usr/sbin/iptables-legacy-restore")), "both iptables backends");
        Resource config = cluster("fka", Map.of("iptablesBackend", "NFT", "iptablesRefreshInterval", "1s"));

        startFelix();
        local.awaitJson(healthPort, "/readiness", 200, body -> true);
        assertThat(Files.readString(mtuDir.resolve("mtu"))).as("pod MTU for the CNI plugin: no interface of the bare "
                + "namespace matches mtuIfacePattern, so Calico's fallback").isEqualTo("1460");
        // endpointStatusPathPrefix: the programmed endpoint's status file, named as Calico's CNI plugin looks for it.
        Await.until("endpoint status file", WAIT, () -> Files.exists(mtuDir.resolve("endpoint-status")
                .resolve("k8s ns1%2Fweb eth0")), exists -> exists);

        // The admin API: kernel dataplane on iptables-nft, what it programmed, the pending veth.
        JsonNode dp = local.awaitJson(adminPort, "/felix/v1/dataplane", 200,
                body -> body.path("status").path("lastApply").path("backend").asText().equals("iptables-nft"));
        assertThat(dp.path("driver").asText()).isEqualTo("kernel");
        assertThat(dp.path("mtus").path("host").asInt()).isEqualTo(1460);
        assertThat(dp.path("mtus").path("vxlan").asInt()).isEqualTo(1410);
        assertThat(dp.path("mtus").path("pod").asInt()).isEqualTo(1460);
        JsonNode st = dp.path("status");
        assertThat(st.path("netns").asText()).isEqualTo(host.name());
        assertThat(st.path("programmed").path("chains").asInt()).isPositive();
        assertThat(st.path("programmed").path("sets").asInt()).isPositive();
        assertThat(st.path("resyncs").asLong()).isPositive();
        assertThat(st.path("lastApply").path("at").isMissingNode()).isFalse();
        assertThat(st.path("lastApply").path("took").asText()).isNotEmpty();
        assertThat(st.path("lastApply").path("error").isNull()).isTrue();
        assertThat(st.path("pendingInterfaces").toString()).isEqualTo("[\"" + IFACE + "\"]");
        assertThat(dp.path("errors")).isEmpty();
        assertThat(host.exec("iptables-nft-save", "-t", "filter")).contains("-A FORWARD -j cali-FORWARD");

        // The metrics, on the health port.
        String metrics = metrics();
        assertThat(metric(metrics, "felix_dataplane_backend", "backend=\"iptables-nft\"")).isEqualTo(1.0);
        assertThat(metric(metrics, "felix_dataplane_backend", "backend=\"iptables-legacy\"")).isEqualTo(0.0);
        assertThat(metric(metrics, "felix_int_dataplane_apply_time_seconds_count", "")).isPositive();
        assertThat(metrics).contains("felix_int_dataplane_apply_time_seconds{", "quantile=\"0.99\"");
        assertThat(metric(metrics, "felix_dataplane_chains", "")).isEqualTo(st.path("programmed").path("chains").asDouble());
        assertThat(metric(metrics, "felix_dataplane_rules", "")).isPositive();
        assertThat(metric(metrics, "felix_ipsets_calico", "")).isEqualTo(st.path("programmed").path("sets").asDouble());
        assertThat(metric(metrics, "felix_dataplane_resyncs_total", "")).isPositive();
        assertThat(metric(metrics, "felix_dataplane_backend_restarts_total", "")).isZero();
        assertThat(metric(metrics, "felix_int_dataplane_failures_total", "")).isZero();

        // Calico's names on Calico's port (FELIX_PROMETHEUSMETRICSPORT): every served row of the table
        // DESIGN.md prints, with Calico's type and labels; counters without Micrometer's _total.
        String calico = local.get(app.metricsServer().orElseThrow().boundPort(), "/metrics").body();
        assertThat(FelixCalicoMetrics.TABLE.problemsIn(calico)).isEmpty();
        assertThat(calico).contains("# TYPE felix_int_dataplane_failures counter")
                .doesNotContain("felix_int_dataplane_failures_total");
        assertThat(metric(calico, "felix_resync_state", "")).isEqualTo(3.0);
        assertThat(metric(calico, "felix_cluster_num_policies", "")).isEqualTo(1.0);
        assertThat(metric(calico, "felix_cluster_num_workload_endpoints", "")).isEqualTo(1.0);
        assertThat(metric(calico, "felix_cluster_num_tiers", "")).isEqualTo(1.0);
        assertThat(metric(calico, "felix_active_local_endpoints", "")).isEqualTo(1.0);
        assertThat(metric(calico, "felix_calc_graph_updates_processed", "type=\"WorkloadEndpoint\"")).isPositive();
        // The drivers' tool runs, counted where they run (iptables-nft here).
        assertThat(metric(calico, "felix_iptables_restore_calls", "")).isPositive();
        assertThat(metric(calico, "felix_iptables_restore_errors", "")).isZero();
        assertThat(metric(calico, "felix_iptables_lines_executed", "ip_version=\"4\",table=\"filter\""))
                .isPositive();
        assertThat(metric(calico, "felix_exec_time_micros_count", "")).isPositive();
        assertThat(metric(calico, "felix_route_table_list_seconds_count", "")).isPositive();
        assertThat(metric(calico, "felix_nft_calls", "")).as("no nftables driver ran").isZero();
        assertThat(Files.readString(Path.of("DESIGN.md"))).as("DESIGN.md prints the table checked here")
                .contains(FelixCalicoMetrics.TABLE.markdown());
        // iptablesRefreshInterval 1s from the FelixConfiguration: refreshes run.
        awaitMetric("felix_dataplane_refreshes_total", v -> v >= 1);

        // The workload's veth appears: no longer pending (the link monitor, inside the app).
        host.exec("ip", "link", "add", IFACE, "type", "veth", "peer", "name", "k1peer");
        local.awaitJson(adminPort, "/felix/v1/dataplane", 200,
                body -> body.path("status").path("pendingInterfaces").isEmpty());
        assertThat(host.exec("ip", "route", "show", "proto", "80")).contains("10.68.0.1 dev " + IFACE);

        // A FelixConfiguration edit in etcd switches the backend at run time.
        FelixConfiguration current = (FelixConfiguration) store.get(config.key()).orElseThrow();
        store.update(new FelixConfiguration(current.metadata(), felixConfig(
                Map.of("iptablesBackend", "Legacy", "iptablesRefreshInterval", "1s")).spec()));
        JsonNode switched = local.awaitJson(adminPort, "/felix/v1/dataplane", 200,
                body -> body.path("status").path("lastApply").path("backend").asText().equals("iptables-legacy"));
        assertThat(switched.path("status").path("backend").asText()).isEqualTo("iptables-legacy");
        assertThat(switched.path("status").path("backendRestarts").asLong()).isEqualTo(1);
        assertThat(switched.path("errors")).isEmpty();
        assertThat(host.exec("iptables-legacy-save", "-t", "filter")).contains("-A FORWARD -j cali-FORWARD");
        assertThat(host.exec("iptables-nft-save", "-t", "filter")).doesNotContain("cali-");
        metrics = metrics();
        assertThat(metric(metrics, "felix_dataplane_backend", "backend=\"iptables-legacy\"")).isEqualTo(1.0);
        assertThat(metric(metrics, "felix_dataplane_backend", "backend=\"iptables-nft\"")).isEqualTo(0.0);
        assertThat(metric(metrics, "felix_dataplane_backend_restarts_total", "")).isEqualTo(1.0);
        assertThat(local.get(healthPort, "/readiness").statusCode()).isEqualTo(200);

        // felix restarts on iptables-legacy with nothing changed: it adopts what it finds (rules by their
        // hash comments, sets by their members), and neither rules, counters, sets nor routes change.
        host.exec("ping", "-c", "2", "-i", "0.01", "127.0.0.1"); // counters in our INPUT and OUTPUT chains
        String before = iptablesLegacyKernel();
        assertThat(before).contains("-A FORWARD -j cali-FORWARD", "cali40").containsPattern("\\[[1-9][0-9]*:[0-9]+\\] -A cali-");
        app.close();
        app = null;
        try (KernelChanges kernel = KernelChanges.start(host)) {
            startFelix();
            local.awaitJson(healthPort, "/readiness", 200, body -> true);
            local.awaitJson(adminPort, "/felix/v1/dataplane", 200,
                    body -> body.path("status").path("lastApply").path("backend").asText().equals("iptables-legacy")
                            && body.path("status").path("pendingInterfaces").isEmpty());
            assertThat(iptablesLegacyKernel()).as("rules, counters and sets as the last felix left them").isEqualTo(before);
            assertThat(kernel.lines()).as("no route rewritten").noneMatch(l -> l.startsWith("ip: "));
        }
    }

    /** The namespace's legacy tables with counters, its sets and its routes, without {@code -save}'s dated comment lines. */
    private String iptablesLegacyKernel() {
        return String.join("\n", host.exec("iptables-legacy-save", "-c"), host.exec("ip6tables-legacy-save", "-c"),
                host.exec("ipset", "save"), host.exec("ip", "route", "show", "table", "all")).lines()
                .filter(l -> !l.startsWith("#")).collect(java.util.stream.Collectors.joining("\n"));
    }

    /**
     * A felix restarted with nothing changed makes no kernel change: the whole ruleset of the namespace,
     * listed with rule handles, is the same before and after (the new felix adopts the table).
     */
    @Test
    void aRestartedFelixLeavesTheKernelAsItWas() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        cluster("fkr", Map.of("nftablesMode", "Enabled"));
        host.exec("ip", "link", "add", IFACE, "type", "veth", "peer", "name", "k1peer");

        startFelix();
        awaitProgrammedOnNftables();
        String before = host.exec("nft", "-a", "list", "ruleset");
        assertThat(before).contains("table inet calico", "chain cali-tw-" + IFACE);
        app.close();
        app = null;

        startFelix();
        awaitProgrammedOnNftables();
        assertThat(host.exec("nft", "-a", "list", "ruleset")).as("the kernel as the last felix left it").isEqualTo(before);
    }

    /**
     * Issue 29, "restart without churn … after a backend switch back and forth": felix switches at
     * run time from nftables to iptables (iptables-nft) and back, then restarts with nothing
     * changed. The restart changes nothing in the kernel: the whole nftables ruleset with its
     * handles (iptables-nft's tables included), the legacy tables, the IP sets and the routes are
     * as the switched felix left them.
     */
    @Test
    void afterABackendSwitchBackAndForthARestartLeavesTheKernelAsItWas() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/iptables-nft-restore")), "iptables-nft");
        Resource config = cluster("flw-fks", Map.of("nftablesMode", "Enabled"));
        host.exec("ip", "link", "add", IFACE, "type", "veth", "peer", "name", "k1peer");
        startFelix();
        awaitProgrammedOn("nftables");
        configure(config, Map.of("nftablesMode", "Disabled", "iptablesBackend", "NFT"));
        awaitProgrammedOn("iptables-nft");
        assertThat(host.exec("iptables-nft-save", "-t", "filter")).contains("-A FORWARD -j cali-FORWARD");
        configure(config, Map.of("nftablesMode", "Enabled"));
        awaitProgrammedOn("nftables");
        String before = wholeKernel();
        assertThat(before).contains("table inet calico", "chain cali-tw-" + IFACE);
        assertThat(host.exec("iptables-nft-save")).as("iptables-nft's rules gone").doesNotContain("cali-");
        app.close();
        app = null;

        startFelix();
        awaitProgrammedOn("nftables");
        assertThat(wholeKernel()).as("the kernel as the switched felix left it").isEqualTo(before);
    }

    /** The namespace's whole nftables ruleset with handles, legacy iptables, IP sets and routes. */
    private String wholeKernel() {
        return String.join("\n", host.exec("nft", "-a", "list", "ruleset"), host.exec("iptables-legacy-save", "-c"),
                host.exec("ip6tables-legacy-save", "-c"), host.exec("ipset", "save"),
                host.exec("ip", "route", "show", "table", "all")).lines()
                .filter(l -> !l.startsWith("#")).collect(java.util.stream.Collectors.joining("\n"));
    }

    private void configure(Resource config, Map<String, ?> spec) {
        FelixConfiguration current = (FelixConfiguration) store.get(config.key()).orElseThrow();
        store.update(new FelixConfiguration(current.metadata(), felixConfig(spec).spec()));
    }

    private void awaitProgrammedOn(String backend) throws Exception {
        local.awaitJson(healthPort, "/readiness", 200, body -> true);
        local.awaitJson(adminPort, "/felix/v1/dataplane", 200,
                body -> body.path("status").path("lastApply").path("backend").asText().equals(backend)
                        && body.path("status").path("pendingInterfaces").isEmpty());
    }

    private void awaitProgrammedOnNftables() throws Exception {
        local.awaitJson(healthPort, "/readiness", 200, body -> true);
        local.awaitJson(adminPort, "/felix/v1/dataplane", 200,
                body -> body.path("status").path("lastApply").path("backend").asText().equals("nftables")
                        && body.path("status").path("pendingInterfaces").isEmpty());
    }

    /**
     * A fresh etcd with a ready cluster, FelixConfiguration {@code default} of {@code felixSpec}, the default
     * tier, one policy and this node's workload; a namespace for felix to program. {@return the FelixConfiguration}
     */
    private Resource cluster(String nsPrefix, Map<String, ?> felixSpec) {
        EtcdAdmin.wipe(ETCD.endpoint());
        store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
        host = NetNs.create(nsPrefix);
        store.create(new ClusterInformation(ObjectMeta.named("default"),
                new ClusterInformationSpec("guid", null, null, true, null)));
        Resource config = store.create(felixConfig(felixSpec));
        store.create(new Tier(ObjectMeta.named("default"), new TierSpec(null, null)));
        store.create(new GlobalNetworkPolicy(ObjectMeta.named("allow-from-db"), new GlobalNetworkPolicySpec(
                "default", 1.0, List.of(Rule.allow().withSource(EntityRule.empty().withSelector("app == 'db'"))),
                List.of(), "app == 'web'", List.of(PolicyType.Ingress), null, null, null, null, null, null)));
        store.create(new WorkloadEndpoint(ObjectMeta.namespaced("ns1", null).withLabels(Map.of("app", "web")),
                new WorkloadEndpointSpec("k8s", null, ME, null, "web", "eth0", null, List.of("10.68.0.1/32"), null,
                        null, null, List.of(), IFACE, null, null, null)));
        return config;
    }

    private void startFelix() {
        app = FelixTestApps.start(FelixApplication.Parts.none(), "--FELIX_ADMINPORT=0",
                "--FELIX_ADMINHOST=127.0.0.1", "--FELIX_HEALTHPORT=0", "--FELIX_HEALTHHOST=127.0.0.1",
                "--HOSTNAME=", "--FELIX_FELIXHOSTNAME=" + ME, "--FELIX_DATASTORETYPE=etcdv3",
                "--FELIX_ETCDENDPOINTS=" + ETCD.endpoint(), "--FELIX_DATAPLANEDRIVERNAME=kernel",
                "--FELIX_DATAPLANENETNS=" + host.name(), "--FELIX_READYPOLLINITIAL=50ms",
                "--FELIX_READYPOLLMAX=200ms", "--FELIX_APPLYTIMEOUT=60s",
                "--FELIX_MTUFILEPATH=" + mtuDir.resolve("mtu"), "--FELIX_ENDPOINTSTATUSPATHPREFIX=" + mtuDir,
                "--FELIX_PROMETHEUSMETRICSENABLED=true",
                "--FELIX_PROMETHEUSMETRICSPORT=0", "--FELIX_PROMETHEUSMETRICSHOST=127.0.0.1");
        adminPort = app.adminPort();
        healthPort = app.healthPort();
    }

    private static FelixConfiguration felixConfig(Map<String, ?> spec) {
        FelixConfigurationSpec s = ResourceCodec.get().jsonMapper().convertValue(spec, FelixConfigurationSpec.class);
        return new FelixConfiguration(ObjectMeta.named("default"), s);
    }

    private String metrics() throws Exception {
        HttpResponse<String> r = local.get(healthPort, "/actuator/prometheus");
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    /** The value of the first sample of {@code name} whose labels contain {@code label}. */
    private static double metric(String body, String name, String label) {
        return body.lines().filter(l -> (l.startsWith(name + "{") || l.startsWith(name + " ")) && l.contains(label))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst()
                .orElseThrow(() -> new AssertionError("no metric " + name + " with " + label));
    }

    private void awaitMetric(String name, java.util.function.DoublePredicate condition) {
        Await.until("metric " + name, WAIT, () -> metric(metrics(), name, ""), condition::test);
    }
}
