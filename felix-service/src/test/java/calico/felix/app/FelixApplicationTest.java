package calico.felix.app;

import calico.felix.dataplane.Dataplane;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Action;
import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.EntityRule;
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
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.ModelDataplane;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import calico.libcalico.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole felix application against a real etcd, on random ports, observed only over HTTP
 * the way the kubelet, Prometheus and an operator would: readiness waits for
 * {@code datastoreReady} and the dataplane's InSync; the admin API shows the local endpoint with
 * its policy, the IP set members and later a label change; the metrics are scraped.
 */
class FelixApplicationTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static final String ME = "node-a";
    private static final Duration WAIT = Duration.ofSeconds(15);

    private final LocalHttp local = new LocalHttp(WAIT);
    private final ObjectMapper json = new ObjectMapper();
    private Datastore store;
    private FelixApplication app;
    private int adminPort;
    private int healthPort;
    private int debugPort;

    @BeforeEach
    void setUp() {
        EtcdAdmin.wipe(ETCD.endpoint());
        store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
    }

    @AfterEach
    void tearDown() {
        if (app != null) {
            app.close();
        }
        store.close();
    }

    /**
     * A driver stand-in whose apply blocks while a local endpoint named "slow" is in the batch,
     * and which fails to program one named "broken" (reporting it, as drivers must, not throwing).
     */
    static final class StallingDataplane implements Dataplane {
        final ModelDataplane model = new ModelDataplane();
        final CountDownLatch release = new CountDownLatch(1);
        final List<String> errors = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public void apply(List<DataplaneUpdate> batch) {
            if (batch.stream().anyMatch(u -> u instanceof DataplaneUpdate.WorkloadEndpointUpdate w
                    && w.interfaceName().equals("calislow"))) {
                try {
                    release.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            batch.stream().filter(u -> u instanceof DataplaneUpdate.WorkloadEndpointUpdate w
                    && w.interfaceName().equals("calibroken")).forEach(u -> errors.add("cannot program calibroken"));
            model.apply(batch);
        }

        @Override
        public List<String> errors() {
            return List.copyOf(errors);
        }

        @Override
        public boolean inSync() {
            return model.inSync();
        }

        @Override
        public calico.felix.dataplane.rules.DataplaneModel model() {
            return model.model();
        }
    }

    /** Felix with Calico's debug port on a free port of loopback. */
    private void startFelix() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            debugPort = s.getLocalPort();
        }
        startFelix(null, "--FELIX_APPLYTIMEOUT=60s", "--FELIX_DEBUGPORT=" + debugPort);
    }

    private void startFelix(calico.felix.dataplane.Dataplane driver, String applyTimeout, String... more) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(applyTimeout, "--FELIX_ADMINPORT=0",
                "--FELIX_PROMETHEUSMETRICSPORT=0",
                "--FELIX_PROMETHEUSMETRICSHOST=127.0.0.1", "--FELIX_ADMINHOST=127.0.0.1", "--FELIX_HEALTHPORT=0",
                "--FELIX_HEALTHHOST=127.0.0.1", "--HOSTNAME=", "--FELIX_FELIXHOSTNAME=" + ME,
                "--FELIX_DATASTORETYPE=etcdv3", "--FELIX_ETCDENDPOINTS=" + ETCD.endpoint(),
                "--FELIX_LOGSEVERITYSCREEN=Info", "--FELIX_DATAPLANEDRIVERNAME=model",
                "--FELIX_READYPOLLINITIAL=50ms", "--FELIX_READYPOLLMAX=200ms"));
        args.addAll(java.util.List.of(more));
        app = FelixTestApps.start(new FelixApplication.Parts(driver, null), args.toArray(String[]::new));
        adminPort = app.adminPort();
        healthPort = app.healthPort();
    }

    @Test
    void felixFollowsTheDatastoreAndReportsOverHttp() throws Exception {
        Resource info = store.create(new ClusterInformation(ObjectMeta.named("default"),
                new ClusterInformationSpec("guid", null, null, false, null)));
        store.create(new Tier(ObjectMeta.named("default"), new TierSpec(null, null)));
        store.create(new Tier(ObjectMeta.named("security"), new TierSpec(10.0, Action.Deny)));
        store.create(new GlobalNetworkPolicy(ObjectMeta.named("security.allow-db"), new GlobalNetworkPolicySpec(
                "security", 1.0, List.of(Rule.allow().withSource(EntityRule.empty().withSelector("app == 'db'"))),
                List.of(), "app == 'web'", List.of(PolicyType.Ingress), null, null, null, null, null, null)));
        Resource web = store.create(wep("ns1", "web", ME, "10.0.0.1", Map.of("app", "web")));
        Resource db = store.create(wep("ns1", "db", "node-b", "10.0.0.2", Map.of("app", "db")));
        store.create(wep("ns1", "db2", "node-c", "10.0.0.3", Map.of("app", "db")));
        // A field this felix does not act on: listed in the status and counted, not accepted silently.
        store.create(calico.api.codec.ResourceCodec.get().parse("""
                apiVersion: projectcalico.org/v3
                kind: FelixConfiguration
                metadata: {name: default}
                spec: {bpfLogLevel: Debug, prometheusMetricsEnabled: true, reportingInterval: 1s}
                """));

        startFelix();

        // datastoreReady is false: felix waits and says so; alive but not ready.
        local.awaitJson(healthPort, "/readiness", 503, body -> reporter(body, "FelixStartup").path("detail").asText()
                .contains("datastoreReady"));
        assertThat(local.get(healthPort, "/liveness").statusCode()).isEqualTo(200);
        // The syncer has delivered the whole datastore (ClusterInformation with datastoreReady
        // false among it): nothing more can come to open the gate. Still waiting.
        local.awaitJson(adminPort, "/felix/v1/status", 200, st -> st.path("syncerStatus").asText().equals("IN_SYNC"));
        assertThat(local.get(healthPort, "/readiness").statusCode()).isEqualTo(503);
        assertThat(local.getJson(adminPort, "/felix/v1/endpoints")).isEmpty();

        store.update(new ClusterInformation(info.metadata(), new ClusterInformationSpec("guid", null, null, true,
                null)));
        JsonNode ready = local.awaitJson(healthPort, "/readiness", 200, body -> true);
        assertThat(reporter(ready, "Dataplane").path("detail").asText()).isEqualTo("in sync");
        assertThat(reporter(ready, "CalculationGraph").path("ready").asBoolean()).isTrue();
        assertThat(reporter(ready, "DatastoreConnection").path("ready").asBoolean()).isTrue();
        String registered = reporter(ready, "Dataplane").path("timeout").asText();

        // reportingInterval: felix's status reports in etcd under Calico's keys, the live one on a reportingTTL
        // lease, the last one kept; a second report (1 s later) is no longer the first.
        try (io.etcd.jetcd.Client etcd = io.etcd.jetcd.Client.builder().endpoints(ETCD.endpoint()).build()) {
            String base = "/calico/felix/v2/no-region/host/" + ME + "/";
            java.util.function.Function<String, io.etcd.jetcd.KeyValue> read = key -> {
                try {
                    List<io.etcd.jetcd.KeyValue> kvs = etcd.getKVClient().get(io.etcd.jetcd.ByteSequence.from(base + key,
                            java.nio.charset.StandardCharsets.UTF_8)).get(5, java.util.concurrent.TimeUnit.SECONDS)
                            .getKvs();
                    return kvs.isEmpty() ? null : kvs.get(0);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            };
            io.etcd.jetcd.KeyValue last = Await.until("a second status report", WAIT, () -> read.apply(
                    "last_reported_status"), kv -> kv != null && kv.getValue().toString().contains("\"first_update\":false"));
            JsonNode report = json.readTree(last.getValue().toString());
            assertThat(java.time.Instant.parse(report.path("time").asText())).isBefore(java.time.Instant.now()
                    .plusSeconds(1));
            assertThat(report.path("uptime").asDouble()).isPositive();
            io.etcd.jetcd.KeyValue live = read.apply("status");
            assertThat(live).isNotNull();
            assertThat(etcd.getLeaseClient().timeToLive(live.getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT)
                    .get(5, java.util.concurrent.TimeUnit.SECONDS).getGrantedTTL()).as("reportingTTL").isEqualTo(90);
            assertThat(last.getLease()).as("the last report does not expire").isZero();
        }

        // healthTimeoutOverrides from FelixConfiguration (Calico's name of the dataplane loop
        // included) replace the reporters' timeouts; dropping them restores the registered ones.
        Resource fc = store.get(calico.api.model.ResourceKey.of(calico.api.model.ResourceKind.FELIX_CONFIGURATION,
                "default")).orElseThrow();
        fc = store.update(new calico.api.model.FelixConfiguration(fc.metadata(), felixSpec(Map.of("bpfLogLevel", "Debug",
                "prometheusMetricsEnabled", true, "healthTimeoutOverrides", List.of(Map.of("name", "InternalDataplaneMainLoop", "timeout", "5m"),
                        Map.of("name", "CalculationGraph", "timeout", "0s"))))));
        local.awaitJson(healthPort, "/readiness", 200, body -> reporter(body, "Dataplane").path("timeout").asText()
                .equals("PT5M") && reporter(body, "CalculationGraph").path("timeout").asText().equals("none"));
        fc = store.update(new calico.api.model.FelixConfiguration(fc.metadata(), felixSpec(Map.of("bpfLogLevel", "Debug",
                "prometheusMetricsEnabled", true))));
        local.awaitJson(healthPort, "/readiness", 200, body -> reporter(body, "Dataplane").path("timeout").asText()
                .equals(registered) && !registered.equals("PT5M"));

        // The local endpoint with its tier and policy; the remote one is not local.
        String webId = web.metadata().namespace() + "/" + web.metadata().name();
        JsonNode endpoints = local.getJson(adminPort, "/felix/v1/endpoints");
        assertThat(endpoints).hasSize(1);
        JsonNode ep = endpoints.get(0);
        assertThat(ep.path("id").asText()).isEqualTo(webId);
        assertThat(ep.path("ipv4Nets").get(0).asText()).isEqualTo("10.0.0.1/32");
        assertThat(ep.path("ingress").get(0).path("tier").asText()).isEqualTo("security");
        assertThat(ep.path("ingress").get(0).path("policies").get(0).asText()).isEqualTo("security/security.allow-db");
        assertThat(local.getJson(adminPort, "/felix/v1/endpoints/" + webId).path("id").asText()).isEqualTo(webId);

        // The policy as programmed refers to an IP set holding the db endpoints' addresses.
        JsonNode policies = local.getJson(adminPort, "/felix/v1/policies");
        assertThat(policies).hasSize(1);
        String setId = policies.get(0).path("compiled").path("inbound").get(0).path("source").path("ipSetIds").get(0)
                .asText();
        assertThat(members(setId)).containsExactly("10.0.0.2/32", "10.0.0.3/32");
        assertThat(local.getJson(adminPort, "/felix/v1/ipsets").toString()).contains(setId);
        assertThat(local.getJson(adminPort, "/felix/v1/config").path("logSeverityScreen").asText()).isEqualTo("Info");
        JsonNode status = local.getJson(adminPort, "/felix/v1/status");
        assertThat(status.path("inSync").asBoolean()).isTrue();
        assertThat(status.path("lastApply").path("batches").asLong()).isPositive();
        assertThat(status.path("lastApply").path("errors")).isEmpty();
        assertThat(status.path("unsupportedConfig").toString()).isEqualTo("{\"bpfLogLevel\":\"Debug\"}");
        JsonNode dataplane = local.getJson(adminPort, "/felix/v1/dataplane");
        assertThat(dataplane.path("driver").asText()).isEqualTo("model");
        assertThat(dataplane.path("backend").asText()).isEqualTo("none");

        // A label change on a remote endpoint takes it out of the set.
        WorkloadEndpoint dbNow = (WorkloadEndpoint) store.get(db.key()).orElseThrow();
        store.update(new WorkloadEndpoint(dbNow.metadata().withLabels(Map.of("app", "other")), dbNow.spec()));
        local.awaitJson(adminPort, "/felix/v1/ipsets/" + enc(setId), 200,
                body -> body.path("members").toString().equals("[\"10.0.0.3/32\"]"));

        // Unknown ids are 404 with a message.
        HttpResponse<String> missing = local.get(adminPort, "/felix/v1/ipsets/no-such-set");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(json.readTree(missing.body()).path("error").asText()).isEqualTo("no IP set no-such-set");
        assertThat(local.get(adminPort, "/felix/v1/endpoints/ns1/nope").statusCode()).isEqualTo(404);

        // Metrics on the health port.
        HttpResponse<String> metrics = local.get(healthPort, "/actuator/prometheus");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("felix_apply_seconds_bucket", "felix_apply_seconds_count",
                "felix_updates_applied_total{", "type=\"WorkloadEndpointUpdate\"", "felix_ipsets{",
                "felix_ipset_members{", "felix_active_policies{", "felix_local_endpoints{", "felix_resyncs_total{",
                "calico_health_ready{");
        assertThat(metricValue(metrics.body(), "felix_active_policies")).isEqualTo(1.0);
        assertThat(metricValue(metrics.body(), "felix_ipset_members")).isEqualTo(1.0);
        assertThat(metricValue(metrics.body(), "felix_resyncs_total")).isEqualTo(1.0);
        assertThat(metricValue(metrics.body(), "felix_config_unsupported_fields")).isEqualTo(1.0);
        // ... and on Calico's own metrics port, which the FelixConfiguration's prometheusMetricsEnabled opened
        // (no FELIX_PROMETHEUSMETRICSENABLED); turned off there, the port closes.
        FelixMetricsPort metricsPort = app.metricsPort();
        assertThat(app.metricsServer()).as("not enabled at start-up").isEmpty();
        int calicoPortNumber = metricsPort.boundPort();
        HttpResponse<String> calicoPort = local.get(calicoPortNumber, "/metrics");
        assertThat(calicoPort.statusCode()).isEqualTo(200);
        assertThat(metricValue(calicoPort.body(), "felix_active_policies")).isEqualTo(1.0);
        store.update(new calico.api.model.FelixConfiguration(fc.metadata(), felixSpec(Map.of("bpfLogLevel", "Debug",
                "prometheusMetricsEnabled", false))));
        Await.until("metrics port closed", Duration.ofSeconds(20), metricsPort::boundPort, p -> p == -1);
        assertThat(portOpen(calicoPortNumber)).as("nothing listens there any more").isFalse();
        // ... and Calico's debug port (FELIX_DEBUGPORT, on localhost): felix's threads.
        HttpResponse<String> threads = local.get(debugPort, "/debug/pprof/goroutine");
        assertThat(threads.statusCode()).isEqualTo(200);
        assertThat(threads.body()).contains("\"felix-health\"");
    }

    /** An AppCDS training run of the real main ({@code -Dcalico.exit=onReady}) ends once felix is ready, stopping it cleanly. */
    @Test
    void aTrainingRunEndsOnceFelixIsReady(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        store.create(new ClusterInformation(ObjectMeta.named("default"),
                new ClusterInformationSpec("guid", null, null, true, null)));
        java.nio.file.Path log = dir.resolve("felix.log");
        Process p = calico.libcalico.testing.MainProcess.start(FelixApplication.class, List.of("-Xmx128m",
                "-D" + calico.libcalico.health.TrainingRun.PROPERTY + "=" + calico.libcalico.health.TrainingRun.ON_READY), log,
                Map.of("FELIX_FELIXHOSTNAME", ME, "FELIX_DATASTORETYPE", "etcdv3", "FELIX_ETCDENDPOINTS", ETCD.endpoint().toString(),
                        "FELIX_DATAPLANEDRIVERNAME", "model", "FELIX_HEALTHPORT", "0", "FELIX_HEALTHHOST", "127.0.0.1",
                        "FELIX_ADMINPORT", "0", "FELIX_ADMINHOST", "127.0.0.1"));
        try {
            assertThat(p.waitFor(2, java.util.concurrent.TimeUnit.MINUTES)).as("ended: %s", java.nio.file.Files.readString(log))
                    .isTrue();
            assertThat(p.exitValue()).isZero();
            assertThat(new String(p.getErrorStream().readAllBytes())).contains("felix ready: ending the training run");
            assertThat(java.nio.file.Files.readString(log)).contains("felix stopped");
        } finally {
            p.destroyForcibly().waitFor();
        }
    }

    /**
     * The image's training run (scripts/images.sh): felix on a memory store of its own holding the manifest the
     * images use becomes ready and ends; a bad manifest stops felix at start-up naming the variable.
     */
    @Test
    void onItsOwnMemoryStoreFelixReadsTheManifestItIsGiven(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path manifest = java.nio.file.Path.of("../scripts/lib/felix-training.yaml").toAbsolutePath();
        assertThat(manifest).isRegularFile();
        Map<String, String> env = Map.of("FELIX_FELIXHOSTNAME", "appcds-training", "DATASTORE_TYPE", "memory",
                "CALICO_MEMORY_MANIFEST", manifest.toString(), "FELIX_DATAPLANEDRIVERNAME", "model",
                "FELIX_HEALTHPORT", "0", "FELIX_HEALTHHOST", "127.0.0.1", "FELIX_ADMINPORT", "0", "FELIX_ADMINHOST", "127.0.0.1");
        java.nio.file.Path log = dir.resolve("felix.log");
        Process p = calico.libcalico.testing.MainProcess.start(FelixApplication.class, List.of("-Xmx128m",
                "-D" + calico.libcalico.health.TrainingRun.PROPERTY + "=" + calico.libcalico.health.TrainingRun.ON_READY), log,
                env);
        try {
            assertThat(p.waitFor(2, java.util.concurrent.TimeUnit.MINUTES)).as("ended: %s", java.nio.file.Files.readString(log))
                    .isTrue();
            assertThat(p.exitValue()).as(java.nio.file.Files.readString(log)).isZero();
            assertThat(java.nio.file.Files.readString(log)).contains("Datastore ready").doesNotContain("missing tier");
        } finally {
            p.destroyForcibly().waitFor();
        }

        java.nio.file.Path bad = java.nio.file.Files.writeString(dir.resolve("bad.yaml"), "kind: Nonsense\n");
        Map<String, String> badEnv = new java.util.HashMap<>(env);
        badEnv.put("CALICO_MEMORY_MANIFEST", bad.toString());
        Process refused = calico.libcalico.testing.MainProcess.start(FelixApplication.class, List.of("-Xmx128m"),
                dir.resolve("refused.log"), badEnv);
        try {
            assertThat(refused.waitFor(2, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
            assertThat(refused.exitValue()).isEqualTo(1);
            assertThat(java.nio.file.Files.readString(dir.resolve("refused.log")) + new String(
                    refused.getErrorStream().readAllBytes())).contains("CALICO_MEMORY_MANIFEST: " + bad);
        } finally {
            refused.destroyForcibly().waitFor();
        }
    }

    @Test
    void aStalledDataplaneFailsReadinessUntilItRecovers() throws Exception {
        store.create(new ClusterInformation(ObjectMeta.named("default"),
                new ClusterInformationSpec("guid", null, null, true, null)));
        // A short apply timeout (heartbeat 100 ms, reporters expiring after 300 ms) only here, where
        // a stall is the point; elsewhere a loaded machine could miss a beat.
        StallingDataplane driver = new StallingDataplane();
        startFelix(driver, "--FELIX_APPLYTIMEOUT=400ms",
                "--FELIX_HEALTHTIMEOUTOVERRIDES=DatastoreConnection=1h,FelixStartup=90");
        assertThat(app.debugServer()).as("Calico's default: no debug port").isEmpty();
        JsonNode first = local.awaitJson(healthPort, "/readiness", 200, body -> true);
        assertThat(reporter(first, "DatastoreConnection").path("timeout").asText()).as("FELIX_HEALTHTIMEOUTOVERRIDES")
                .isEqualTo("PT1H");
        assertThat(reporter(first, "FelixStartup").path("timeout").asText()).as("bare seconds, as Calico").isEqualTo("PT1M30S");
        assertThat(local.getJson(adminPort, "/felix/v1/status").path("dataplane").asText()).isEqualTo("StallingDataplane");

        store.create(wep("ns1", "slow", ME, "10.0.0.9", Map.of()));
        // Both stages are stuck in the same call (the graph applies on the syncer's thread).
        local.awaitJson(healthPort, "/readiness", 503, body -> reporter(body, "Dataplane").path("detail").asText()
                .contains("an apply has been running for over PT0.4S")
                && reporter(body, "CalculationGraph").path("detail").asText().contains("a batch has been running"));
        assertThat(local.get(healthPort, "/liveness").statusCode()).isEqualTo(200);

        driver.release.countDown();
        local.awaitJson(healthPort, "/readiness", 200, body -> true);
        // The mirror beside the driver saw the batch too.
        assertThat(local.getJson(adminPort, "/felix/v1/endpoints").toString()).contains("10.0.0.9/32");

        // A driver error fails readiness (not liveness) and shows in the admin status.
        store.create(wep("ns1", "broken", ME, "10.0.0.10", Map.of()));
        local.awaitJson(healthPort, "/readiness", 503, body -> reporter(body, "Dataplane").path("detail").asText()
                .equals("1 error(s), last: cannot program calibroken"));
        assertThat(local.get(healthPort, "/liveness").statusCode()).isEqualTo(200);
        assertThat(local.getJson(adminPort, "/felix/v1/status").path("lastApply").path("errors").toString())
                .isEqualTo("[\"cannot program calibroken\"]");
    }

    private List<String> members(String setId) throws Exception {
        JsonNode set = local.getJson(adminPort, "/felix/v1/ipsets/" + enc(setId));
        return json.convertValue(set.path("members"), json.getTypeFactory().constructCollectionType(List.class,
                String.class));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static double metricValue(String body, String name) {
        return body.lines().filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst()
                .orElseThrow(() -> new AssertionError("no metric " + name));
    }

    private static boolean portOpen(int port) {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static calico.api.model.FelixConfigurationSpec felixSpec(Map<String, ?> spec) {
        return calico.api.codec.ResourceCodec.get().jsonMapper().convertValue(spec, calico.api.model.FelixConfigurationSpec.class);
    }

    private static JsonNode reporter(JsonNode probe, String name) {
        return probe.path("components").path("calicoReadiness").path("details").path("reporters").path(name);
    }




    private static WorkloadEndpoint wep(String ns, String pod, String node, String ip, Map<String, String> labels) {
        return new WorkloadEndpoint(ObjectMeta.namespaced(ns, null).withLabels(labels),
                new WorkloadEndpointSpec("k8s", null, node, null, pod, "eth0", null, List.of(ip + "/32"), null, null,
                        null, List.of(), "cali" + pod, null, null, null));
    }
}
