package calico.charts;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** charts/calico rendered by the pinned helm: lint, every values combination, the schema's refusals. */
class ChartTemplateTest {

    @Test
    void lintStrictPasses() {
        Helm.Result r = Helm.run("lint", "--strict", Helm.CHART.toString());
        assertThat(r.exit()).as(r.stdout() + r.stderr()).isZero();
        assertThat(r.stdout()).contains("1 chart(s) linted, 0 chart(s) failed");
    }

    static List<Path> variantFiles() {
        return Helm.variantFiles();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variantFiles")
    void eachVariantFileLintsAndRendersChecked(Path values) {
        Helm.Result lint = Helm.run("lint", "--strict", Helm.CHART.toString(), "--values", values.toString());
        assertThat(lint.exit()).as(lint.stdout() + lint.stderr()).isZero();
        Rendered r = Rendered.parse(Helm.template(values, "calico-system").ok().stdout());
        assertThat(DeclaredEnvironment.felixValueProblems(Rendered.env(Rendered.container(r.get("DaemonSet", "calico-node"), "felix"))))
                .isEmpty();
        everyEnvNameIsOneTheServiceReads(r);
        probesUseEachServicesHealthPort(r);
        privilegeOnlyWhereNeeded(r);
    }

    static Stream<Arguments> combinations() {
        List<Arguments> all = new ArrayList<>();
        for (String datastore : List.of("kubernetes", "etcd")) {
            for (String dataplane : List.of("nftables", "iptables", "bpf")) {
                for (String encapsulation : List.of("vxlan", "ipip", "none")) {
                    all.add(Arguments.of(datastore, dataplane, encapsulation));
                }
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} × {1} × {2}")
    @MethodSource("combinations")
    void everyCombinationRendersWhatItSays(String datastore, String dataplane, String encapsulation) {
        Rendered r = render(datastore, dataplane, encapsulation);
        JsonNode ds = r.get("DaemonSet", "calico-node");

        // The datastore reaches every Calico process.
        String type = datastore.equals("etcd") ? "etcdv3" : "kubernetes";
        for (String c : List.of("node-startup", "felix", "confd", "cni-daemon")) {
            assertThat(Rendered.env(Rendered.container(ds, c))).as(c).containsEntry("DATASTORE_TYPE", type);
        }
        assertThat(Rendered.env(Rendered.container(r.get("Deployment", "calico-kube-controllers"), "calico-kube-controllers")))
                .containsEntry("DATASTORE_TYPE", type);

        // The dataplane is felix's.
        Map<String, String> felix = Rendered.env(Rendered.container(ds, "felix"));
        assertThat(DeclaredEnvironment.felixValueProblems(felix)).as("felix's values").isEmpty();
        switch (dataplane) {
            case "nftables" -> assertThat(felix).containsEntry("FELIX_NFTABLESMODE", "Enabled").doesNotContainKey("FELIX_BPFENABLED");
            case "iptables" -> assertThat(felix).containsEntry("FELIX_NFTABLESMODE", "Disabled").doesNotContainKey("FELIX_BPFENABLED");
            default -> assertThat(felix).containsEntry("FELIX_BPFENABLED", "true").doesNotContainKey("FELIX_NFTABLESMODE");
        }
        assertThat(volumeNames(ds)).as("the BPF filesystem exactly with bpf").contains(dataplane.equals("bpf") ? "bpffs" : "lib-modules");
        assertThat(volumeNames(ds).contains("bpffs")).isEqualTo(dataplane.equals("bpf"));

        // The default pool's encapsulation is node start-up's.
        Map<String, String> startup = Rendered.env(Rendered.container(ds, "node-startup"));
        assertThat(startup).containsEntry("CALICO_IPV4POOL_VXLAN", encapsulation.equals("vxlan") ? "Always" : "Never")
                .containsEntry("CALICO_IPV4POOL_IPIP", encapsulation.equals("ipip") ? "Always" : "Never")
                .containsEntry("CALICO_IPV4POOL_CIDR", "192.168.0.0/16")
                .containsEntry("CALICO_NETWORKING_BACKEND", "bird");

        // typha is in front of the kubernetes datastore only, and felix finds it by its Service.
        boolean typha = datastore.equals("kubernetes");
        assertThat(r.has("Deployment", "calico-typha")).isEqualTo(typha);
        assertThat(r.has("PodDisruptionBudget", "calico-typha")).isEqualTo(typha);
        assertThat(felix.containsKey("FELIX_TYPHAK8SSERVICENAME")).isEqualTo(typha);
        if (datastore.equals("etcd")) {
            assertThat(felix).containsEntry("ETCD_ENDPOINTS", "https://10.0.0.1:2379");
        }

        // RBAC: Calico's CRDs only where they are the datastore; nobody writes what it only reads.
        Map<String, List<String>> node = Rendered.rules(r.get("ClusterRole", "calico-node"));
        assertThat(node.containsKey("crd.projectcalico.org/felixconfigurations")).isEqualTo(typha);
        assertThat(node.get("/pods")).containsOnly("get", "list", "watch");
        assertThat(node.get("/nodes/status")).containsOnly("patch", "update");
        assertThat(node.get("/nodes")).as("node start-up writes its Node on kubernetes only")
                .containsExactlyInAnyOrderElementsOf(typha ? List.of("get", "list", "watch", "update") : List.of("get", "list", "watch"));
        assertThat(node.get("/secrets")).doesNotContain("create", "update", "patch", "delete");
        for (JsonNode role : concat(r.ofKind("ClusterRole"), r.ofKind("Role"))) {
            for (var e : Rendered.rules(role).entrySet()) {
                assertThat(e.getValue()).as(role.path("metadata").path("name").asText() + " " + e.getKey()).doesNotContain("*");
                if (!e.getKey().startsWith("crd.projectcalico.org/")) {
                    assertThat(e.getKey()).as("wildcards only on Calico's own CRDs (the API server's)").doesNotEndWith("/*");
                }
            }
        }
        Map<String, List<String>> cni = Rendered.rules(r.get("ClusterRole", "calico-cni-plugin"));
        assertThat(cni.get("/pods")).containsOnly("get");
        assertThat(cni.get("/pods/status")).containsOnly("patch");

        everyEnvNameIsOneTheServiceReads(r);
        probesUseEachServicesHealthPort(r);
        privilegeOnlyWhereNeeded(r);
    }

    private static Rendered render(String datastore, String dataplane, String encapsulation) {
        List<String> sets = new ArrayList<>(List.of("datastore=" + datastore, "dataplane=" + dataplane,
                "encapsulation.type=" + encapsulation));
        if (datastore.equals("etcd")) {
            sets.add("etcd.endpoints={https://10.0.0.1:2379}");
        }
        return Rendered.parse(Helm.template(sets.toArray(String[]::new)).ok().stdout());
    }

    /** Every env name of every container is one its service declares (a typo fails here). */
    private static void everyEnvNameIsOneTheServiceReads(Rendered r) {
        for (var e : r.containers().entrySet()) {
            String container = e.getKey().substring(e.getKey().indexOf('/') + 1);
            if (!e.getValue().has("env")) {
                continue;
            }
            String module = DeclaredEnvironment.MODULE_OF_CONTAINER.get(container);
            assertThat(module).as("container " + e.getKey() + " has env but no known service").isNotNull();
            Set<String> declared = DeclaredEnvironment.of(module);
            assertThat(Rendered.env(e.getValue()).keySet()).as(e.getKey() + " env read by " + module)
                    .allSatisfy(name -> assertThat(declared).as(name + " in " + e.getKey()).contains(name));
        }
    }

    /** Startup, liveness and readiness probe /liveness and /readiness at the port each service really serves them on. */
    private static void probesUseEachServicesHealthPort(Rendered r) {
        int probed = 0;
        for (var e : r.containers().entrySet()) {
            JsonNode c = e.getValue();
            if (!c.path("livenessProbe").has("httpGet")) {
                continue;
            }
            String container = e.getKey().substring(e.getKey().indexOf('/') + 1);
            DeclaredEnvironment.HealthPort health = DeclaredEnvironment.healthPort(DeclaredEnvironment.MODULE_OF_CONTAINER.get(container));
            String set = Rendered.env(c).get(health.variable());
            int expected = set != null ? Integer.parseInt(set) : health.defaultPort();
            assertThat(c.path("livenessProbe").path("httpGet").path("port").asInt()).as(e.getKey() + " liveness").isEqualTo(expected);
            assertThat(c.path("livenessProbe").path("httpGet").path("path").asText()).isEqualTo("/liveness");
            assertThat(c.path("readinessProbe").path("httpGet").path("port").asInt()).as(e.getKey() + " readiness").isEqualTo(expected);
            assertThat(c.path("readinessProbe").path("httpGet").path("path").asText()).isEqualTo("/readiness");
            // A JVM on a busy node gets minutes to start before liveness may restart it.
            JsonNode startup = c.path("startupProbe");
            assertThat(startup.path("httpGet").path("port").asInt()).as(e.getKey() + " startup").isEqualTo(expected);
            assertThat(startup.path("httpGet").path("path").asText()).isEqualTo("/liveness");
            assertThat(startup.path("periodSeconds").asInt() * startup.path("failureThreshold").asInt())
                    .as(e.getKey() + " startup allowance (s)").isGreaterThanOrEqualTo(180);
            assertThat(startup.path("timeoutSeconds").asInt()).as(e.getKey() + " startup timeout").isGreaterThanOrEqualTo(5);
            probed++;
        }
        assertThat(probed).as("felix and kube-controllers at least").isGreaterThanOrEqualTo(2);
    }

    /** Only felix and the CNI daemon are privileged; every pod-network container runs as non-root without capabilities. */
    private static void privilegeOnlyWhereNeeded(Rendered r) {
        for (var e : r.containers().entrySet()) {
            String container = e.getKey().substring(e.getKey().indexOf('/') + 1);
            boolean privileged = e.getValue().path("securityContext").path("privileged").asBoolean(false);
            assertThat(privileged).as(e.getKey() + " privileged").isEqualTo(Set.of("felix", "cni-daemon").contains(container));
        }
        for (String workload : List.of("calico-kube-controllers", "calico-apiserver", "goldmane", "whisker")) {
            if (!r.has("Deployment", workload)) {
                continue;
            }
            JsonNode c = Rendered.container(r.get("Deployment", workload), workload);
            assertThat(c.path("securityContext").path("runAsNonRoot").asBoolean()).as(workload).isTrue();
            assertThat(c.path("securityContext").path("capabilities").path("drop").toString()).as(workload).contains("ALL");
            assertThat(r.get("Deployment", workload).path("spec").path("template").path("spec").path("hostNetwork").asBoolean(false)).isFalse();
        }
    }

    @ParameterizedTest(name = "{0} nodes → {1} typha replicas")
    @CsvSource({"1, 3", "200, 3", "600, 3", "601, 4", "1000, 5", "2000, 10"})
    void typhaReplicasFollowTheFormula(int nodes, int replicas) {
        Rendered r = Rendered.parse(Helm.template("typha.expectedNodes=" + nodes).ok().stdout());
        assertThat(r.get("Deployment", "calico-typha").path("spec").path("replicas").asInt()).isEqualTo(replicas);
        assertThat(Rendered.env(Rendered.container(r.get("Deployment", "calico-typha"), "calico-typha")))
                .containsEntry("TYPHA_REPLICAS", String.valueOf(replicas));
    }

    @Test
    void typhaReplicasAsSetWinOverTheFormula() {
        Rendered r = Rendered.parse(Helm.template("typha.replicas=2", "typha.expectedNodes=2000").ok().stdout());
        assertThat(r.get("Deployment", "calico-typha").path("spec").path("replicas").asInt()).isEqualTo(2);
    }

    @ParameterizedTest(name = "{0} refused naming {1}")
    @CsvSource(delimiter = '|', value = {
            "dataplane=ebpf                        | dataplane",
            "datastore=memory                      | datastore",
            "encapsulation.type=gre                | encapsulation/type",
            "encapsulation.mode=Sometimes          | encapsulation/mode",
            "ipPools.ipv4.cidr=10.0.0.0/33         | ipPools/ipv4/cidr",
            "ipPools.ipv4.blockSize=8              | ipPools/ipv4/blockSize",
            "mtu=20                                | mtu",
            "typha.replicas=-1                     | typha/replicas",
            "logSeverity=Chatty                    | logSeverity",
            "images.pullPolicy=Sometimes           | images/pullPolicy",
            "controllers.enabled=node\\,nodes       | controllers/enabled",
            "typo=1                                | typo",
            "datastore=etcd                        | /etcd/endpoints",
            "encapsulation.type=ipip,bgp.enabled=false | bgp/enabled"})
    void badValuesAreRefusedNamingTheValue(String set, String path) {
        Helm.Result r = Helm.template(set);
        assertThat(r.exit()).as(set + " accepted:\n" + r.stdout()).isNotZero();
        assertThat(r.stderr()).as("helm's message").contains("values don't meet the specifications of the schema")
                .contains(path);
    }

    /**
     * BIRD waits for confd's first bird.cfg instead of crash-looping into kubelet's back-off: its
     * own command, run here with the paths moved into a scratch directory and {@code echo} for
     * bird, is still waiting while there is no file (and while it is empty), and execs bird with
     * the file once confd wrote it; a startup probe holds the liveness probe off meanwhile.
     */
    @Test
    void birdWaitsForConfdsConfigurationInsteadOfCrashLooping(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        JsonNode bird = Rendered.container(Rendered.parse(Helm.template().ok().stdout()).get("DaemonSet", "calico-node"), "bird");
        List<String> command = new ArrayList<>();
        bird.path("command").forEach(c -> command.add(c.asText()));
        assertThat(command).hasSize(3).startsWith("/bin/sh", "-c");
        assertThat(bird.path("startupProbe").path("exec").path("command").path(0).asText()).isEqualTo("/usr/sbin/birdc");
        assertThat(bird.path("startupProbe").path("periodSeconds").asInt() * bird.path("startupProbe").path("failureThreshold").asInt())
                .as("seconds BIRD may wait for confd").isGreaterThanOrEqualTo(300);

        String script = command.get(2).replace("/etc/calico/confd/config", dir.toString()).replace("/usr/sbin/bird", "echo bird");
        assertThat(script).as("every path moved").doesNotContain("/etc/calico");
        Process p = new ProcessBuilder("/bin/sh", "-c", script).redirectErrorStream(true).start();
        try {
            // An absence has no event to wait for: a window longer than the script's 1 s poll.
            assertThat(p.waitFor(1500, java.util.concurrent.TimeUnit.MILLISECONDS)).as("still waiting: no bird.cfg").isFalse();
            Path config = dir.resolve("bird.cfg");
            java.nio.file.Files.writeString(config, "");
            assertThat(p.waitFor(1500, java.util.concurrent.TimeUnit.MILLISECONDS)).as("still waiting: bird.cfg empty").isFalse();
            java.nio.file.Files.writeString(config, "router id 10.0.0.1;\n");
            assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).as("bird started once confd wrote").isTrue();
            assertThat(new String(p.getInputStream().readAllBytes()).strip())
                    .isEqualTo("bird -f -c " + config + " -s /var/run/calico/bird.ctl");
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void withoutBgpThereIsNoBirdAndNoConfd() {
        Rendered r = Rendered.parse(Helm.template("bgp.enabled=false").ok().stdout());
        JsonNode ds = r.get("DaemonSet", "calico-node");
        assertThat(r.containers().keySet()).doesNotContain("calico-node/bird", "calico-node/confd").contains("calico-node/felix");
        assertThat(Rendered.env(Rendered.container(ds, "node-startup"))).containsEntry("CALICO_NETWORKING_BACKEND", "vxlan");
    }

    @Test
    void apiServerCertificateNamesItsServiceAndTheApiServiceTrustsItsCa() throws Exception {
        Rendered r = Rendered.parse(Helm.template().ok().stdout());
        JsonNode secret = r.get("Secret", "calico-apiserver-certs");
        var cf = java.security.cert.CertificateFactory.getInstance("X.509");
        var ca = (java.security.cert.X509Certificate) cf.generateCertificate(new java.io.ByteArrayInputStream(
                java.util.Base64.getDecoder().decode(secret.path("data").path("ca.crt").asText())));
        var cert = (java.security.cert.X509Certificate) cf.generateCertificate(new java.io.ByteArrayInputStream(
                java.util.Base64.getDecoder().decode(secret.path("data").path("tls.crt").asText())));
        cert.verify(ca.getPublicKey());
        assertThat(cert.getSubjectAlternativeNames().stream().map(l -> l.get(1).toString()).toList())
                .contains("calico-api.calico-system.svc");
        JsonNode apiService = r.get("APIService", "v3.projectcalico.org");
        assertThat(apiService.path("spec").path("caBundle").asText()).isEqualTo(secret.path("data").path("ca.crt").asText());
        assertThat(apiService.path("spec").path("service").path("name").asText()).isEqualTo("calico-api");
    }

    /**
     * tls.enabled: one CA signs typha's, the node's, goldmane's and whisker's certificates; each
     * side names the other's identity as the other's certificate carries it (felix's FELIX_TYPHACN
     * is typha's CN, typha's TYPHA_CLIENTCN the node's; goldmane's certificate names the host
     * felix and whisker dial); every certificate path a container is given is a key of the Secret
     * mounted there. Off (the default): no Secret, no TLS variable.
     */
    @Test
    void tlsGivesEachSideTheOthersIdentityFromOneCa() throws Exception {
        Rendered r = Rendered.parse(Helm.template("tls.enabled=true").ok().stdout());
        Map<String, java.security.cert.X509Certificate> certs = new java.util.HashMap<>();
        String ca = null;
        for (String name : List.of("calico-typha-tls", "calico-node-tls", "goldmane-tls", "whisker-backend-tls")) {
            JsonNode data = r.get("Secret", name).path("data");
            ca = ca == null ? data.path("ca.crt").asText() : ca;
            assertThat(data.path("ca.crt").asText()).as(name + ": the one CA").isEqualTo(ca);
            java.security.cert.X509Certificate cert = x509(data.path("tls.crt").asText());
            cert.verify(x509(ca).getPublicKey());
            certs.put(name, cert);
        }
        Map<String, String> felix = Rendered.env(r.containers().get("calico-node/felix"));
        Map<String, String> confd = Rendered.env(r.containers().get("calico-node/confd"));
        Map<String, String> typha = Rendered.env(r.containers().get("calico-typha/calico-typha"));
        assertThat(cn(certs.get("calico-typha-tls"))).isEqualTo(felix.get("FELIX_TYPHACN")).isEqualTo(confd.get("FELIX_TYPHACN"));
        assertThat(cn(certs.get("calico-node-tls"))).isEqualTo(typha.get("TYPHA_CLIENTCN"));
        assertThat(felix.get("FELIX_TYPHACERTFILE")).isEqualTo(confd.get("FELIX_TYPHACERTFILE")).isEqualTo("/calico-node-tls/tls.crt");
        String goldmaneHost = felix.get("FELIX_FLOWLOGSGOLDMANESERVER").replaceFirst(":\\d+$", "");
        assertThat(Rendered.env(r.containers().get("whisker/whisker")).get("GOLDMANE_HOST")).startsWith(goldmaneHost + ":");
        assertThat(certs.get("goldmane-tls").getSubjectAlternativeNames().stream().map(l -> l.get(1).toString()).toList())
                .contains(goldmaneHost);
        // Every *FILE / *_PATH a container is given: a key of the Secret mounted at that directory.
        int paths = 0;
        for (Map.Entry<String, JsonNode> e : r.containers().entrySet()) {
            String workload = e.getKey().substring(0, e.getKey().indexOf('/'));
            JsonNode podSpec = Stream.of("DaemonSet", "Deployment").filter(k -> r.has(k, workload)).map(k -> r.get(k, workload))
                    .findFirst().orElseThrow().path("spec").path("template").path("spec");
            for (Map.Entry<String, String> env : Rendered.env(e.getValue()).entrySet()) {
                if (!env.getValue().matches("/(calico-typha|calico-node|goldmane|whisker-backend)-tls/.*")) {
                    continue;
                }
                String secret = env.getValue().split("/")[1];
                String key = env.getValue().split("/")[2];
                assertThat(e.getValue().path("volumeMounts").toString()).as(e.getKey() + " mounts " + secret)
                        .contains("\"mountPath\":\"/" + secret + "\"");
                assertThat(podSpec.path("volumes").toString()).as(e.getKey()).contains("\"secretName\":\"" + secret + "\"");
                assertThat(r.get("Secret", secret).path("data").has(key)).as(env.getKey() + "=" + env.getValue()).isTrue();
                paths++;
            }
        }
        assertThat(paths).as("typha 3, felix 3, confd 3, goldmane 3, whisker 3").isEqualTo(15);

        Rendered off = Rendered.parse(Helm.template().ok().stdout());
        assertThat(off.ofKind("Secret")).extracting(s -> s.path("metadata").path("name").asText())
                .doesNotContain("calico-typha-tls", "calico-node-tls", "goldmane-tls", "whisker-backend-tls");
        assertThat(Rendered.env(off.containers().get("calico-node/felix"))).doesNotContainKeys("FELIX_TYPHACAFILE", "FELIX_TYPHACN");
        assertThat(Rendered.env(off.containers().get("calico-typha/calico-typha"))).doesNotContainKeys("TYPHA_CAFILE", "TYPHA_CLIENTCN");
    }

    private static java.security.cert.X509Certificate x509(String base64) throws Exception {
        return (java.security.cert.X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                .generateCertificate(new java.io.ByteArrayInputStream(java.util.Base64.getDecoder().decode(base64)));
    }

    private static String cn(java.security.cert.X509Certificate cert) {
        return cert.getSubjectX500Principal().getName().replaceFirst("^CN=", "");
    }

    @Test
    void cniInstallWritesTheConflistTheDaemonReadsAndAKubeconfigWithTheCniAccount() {
        Rendered r = Rendered.parse(Helm.template().ok().stdout());
        JsonNode cm = r.get("ConfigMap", "calico-cni-config");
        String conflist = cm.path("data").path("10-calico.conflist").asText();
        assertThat(conflist).contains("\"type\": \"calico\"", "\"datastore_type\": \"kubernetes\"",
                "\"kubeconfig\": \"/etc/cni/net.d/calico-kubeconfig\"", "\"type\": \"calico-ipam\"");
        assertThat(cm.path("data").path("install.sh").asText()).contains("calico-kubeconfig", "/calico-cni-token/token")
                .contains("> /host/var/lib/calico/.nodename.tmp", "/host/var/lib/calico/nodename");
        // The plugin's nodename_file is the node's name, from the pod's spec, on the host path the daemon reads.
        JsonNode install = Rendered.container(r.get("DaemonSet", "calico-node"), "install-cni");
        assertThat(install.path("env").toString()).contains("\"name\":\"NODENAME\"", "\"fieldPath\":\"spec.nodeName\"");
        assertThat(install.path("volumeMounts").toString()).contains("\"mountPath\":\"/host/var/lib/calico\"");
        assertThat(conflist).contains("\"nodename_file\": \"/var/lib/calico/nodename\"");
        assertThat(r.get("Secret", "calico-cni-plugin-token").path("metadata").path("annotations")
                .path("kubernetes.io/service-account.name").asText()).isEqualTo("calico-cni-plugin");
    }

    @Test
    void serviceMonitorsAndNetworkPoliciesFollowTheirSwitches() {
        Rendered on = Rendered.parse(Helm.template("monitoring.serviceMonitor=true").ok().stdout());
        assertThat(on.ofKind("ServiceMonitor")).extracting(m -> m.path("metadata").path("name").asText())
                .contains("calico-kube-controllers", "calico-apiserver", "goldmane", "whisker");
        assertThat(on.ofKind("NetworkPolicy")).hasSize(4);
        JsonNode whisker = on.get("NetworkPolicy", "whisker");
        assertThat(whisker.path("spec").path("ingress").get(0).path("ports").toString()).contains("3002", "9092");
        Rendered off = Rendered.parse(Helm.template("networkPolicies=false").ok().stdout());
        assertThat(off.ofKind("ServiceMonitor")).isEmpty();
        assertThat(off.ofKind("NetworkPolicy")).isEmpty();
    }

    private static List<String> volumeNames(JsonNode workload) {
        List<String> names = new ArrayList<>();
        workload.path("spec").path("template").path("spec").path("volumes").forEach(v -> names.add(v.path("name").asText()));
        return names;
    }

    private static List<JsonNode> concat(List<JsonNode> a, List<JsonNode> b) {
        List<JsonNode> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
