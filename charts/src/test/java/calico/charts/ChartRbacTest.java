package calico.charts;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.net.Cidr;
import calico.controlplane.ControlPlane;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.ipam.AssignResult;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's RBAC judged by the real kube-apiserver: each component's account may do what its
 * service does and not what it does not ({@code kubectl auth can-i} as the account); the CNI
 * plugin's token from the chart's Secret is enough for libcalico's IPAM to assign and release an
 * address; and node-startup, typha, kube-controllers and the API server, their real executable
 * jars run with their containers' rendered environment (and arguments) and a token of their
 * account, complete or turn ready (no kubelet here, so this is how they run "in" the chart).
 */
class ChartRbacTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds();

    private static final String NS = "calico-system";

    @BeforeAll
    static void install() {
        Helm.run("install", "calico", Helm.CHART.toString(), "--kubeconfig", KUBE.kubeconfig().toString(),
                "--namespace", NS, "--create-namespace").ok();
    }

    @ParameterizedTest(name = "{0} {1} {2} {3}: {4}")
    @CsvSource({
            "calico-node,             list,   felixconfigurations.crd.projectcalico.org, ,                 yes",
            "calico-node,             create, ippools.crd.projectcalico.org,             ,                 yes",
            "calico-node,             patch,  pods,                                      status,           yes",
            "calico-node,             update, nodes,                                     ,                 yes",
            "calico-node,             delete, pods,                                      ,                 no",
            "calico-node,             create, secrets,                                   ,                 no",
            "calico-node,             create, serviceaccounts,                           token,            no",
            "calico-node,             update, caliconodestatuses.crd.projectcalico.org,  status,           yes",
            "calico-node,             create, caliconodestatuses.crd.projectcalico.org,  ,                 no",
            "calico-cni-plugin,       create, ipamblocks.crd.projectcalico.org,          ,                 yes",
            "calico-cni-plugin,       get,    pods,                                      ,                 yes",
            "calico-cni-plugin,       list,   pods,                                      ,                 no",
            "calico-cni-plugin,       delete, ippools.crd.projectcalico.org,             ,                 no",
            "calico-cni-plugin,       list,   secrets,                                   ,                 no",
            "calico-typha,            watch,  networkpolicies.networking.k8s.io,         ,                 yes",
            "calico-typha,            watch,  tiers.crd.projectcalico.org,               ,                 yes",
            "calico-typha,            watch,  adminnetworkpolicies.policy.networking.k8s.io, ,             yes",
            "calico-node,             list,   baselineadminnetworkpolicies.policy.networking.k8s.io, ,     yes",
            "calico-node,             create, adminnetworkpolicies.policy.networking.k8s.io, ,             no",
            "calico-typha,            create, ippools.crd.projectcalico.org,             ,                 no",
            "calico-kube-controllers, delete, ipamhandles.crd.projectcalico.org,         ,                 yes",
            "calico-kube-controllers, update, services,                                  status,           yes",
            "calico-kube-controllers, update, services,                                  ,                 no",
            "calico-kube-controllers, delete, pods,                                      ,                 no",
            "calico-apiserver,        create, tokenreviews.authentication.k8s.io,        ,                 yes",
            "calico-apiserver,        create, subjectaccessreviews.authorization.k8s.io, ,                 yes",
            "calico-apiserver,        delete, globalnetworkpolicies.crd.projectcalico.org, ,               yes",
            "calico-apiserver,        delete, nodes,                                     ,                 no",
            "calico-apiserver,        create, pods,                                      ,                 no",
            "goldmane,                list,   pods,                                      ,                 no",
            "whisker,                 get,    secrets,                                   ,                 no"})
    void eachAccountMayDoWhatItsServiceDoesAndNoMore(String account, String verb, String resource, String subresource,
                                                     String expected) {
        var args = new java.util.ArrayList<>(java.util.List.of("auth", "can-i", verb, resource,
                "--as=system:serviceaccount:" + NS + ":" + account));
        if (subresource != null) {
            args.add("--subresource=" + subresource);
        }
        ControlPlane.KubectlResult r = KUBE.controlPlane().kubectlAs(KUBE.kubeconfig(), args.toArray(String[]::new));
        assertThat(answer(r)).as(String.join(" ", args) + ": " + r.output()).isEqualTo(expected);
    }

    /** Applies one manifest as the cluster's admin. */
    private static void apply(String yaml) {
        KUBE.controlPlane().kubectlWithInput(yaml, "apply", "-f", "-");
    }

    /** kubectl's yes/no: the last line (a warning about cluster-scoped resources may come first). */
    private static String answer(ControlPlane.KubectlResult r) {
        return r.output().strip().lines().reduce((a, b) -> b).orElse("");
    }

    @Test
    void kubeControllersMayUpdateItsOwnLeaseOnly() {
        Path admin = KUBE.kubeconfig();
        String as = "--as=system:serviceaccount:" + NS + ":calico-kube-controllers";
        assertThat(answer(KUBE.controlPlane().kubectlAs(admin, "auth", "can-i", "update", "leases.coordination.k8s.io/calico-kube-controllers",
                "-n", NS, as))).isEqualTo("yes");
        assertThat(answer(KUBE.controlPlane().kubectlAs(admin, "auth", "can-i", "update", "leases.coordination.k8s.io/other",
                "-n", NS, as))).isEqualTo("no");
        assertThat(answer(KUBE.controlPlane().kubectlAs(admin, "auth", "can-i", "get", "configmaps/extension-apiserver-authentication",
                "-n", "kube-system", "--as=system:serviceaccount:" + NS + ":calico-apiserver"))).isEqualTo("yes");
    }

    @Test
    void theCniTokenIsEnoughForIpam() throws Exception {
        ControlPlane cp = KUBE.controlPlane();
        apply("""
                apiVersion: crd.projectcalico.org/v1
                kind: IPPool
                metadata: {name: rbac-pool}
                spec: {cidr: 10.77.0.0/24, blockSize: 28, ipipMode: Never, vxlanMode: Never, natOutgoing: false, nodeSelector: all()}
                """);
        String token = Await.value("calico-cni-plugin-token filled", Duration.ofSeconds(60), () -> {
            String b64 = cp.kubectl("get", "secret", "calico-cni-plugin-token", "-n", NS, "-o", "jsonpath={.data.token}");
            return b64.isBlank() ? java.util.Optional.empty()
                    : java.util.Optional.of(new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8));
        });
        Config admin = KUBE.config();
        Config cni = new ConfigBuilder().withMasterUrl(admin.getMasterUrl()).withCaCertData(admin.getCaCertData())
                .withCaCertFile(admin.getCaCertFile()).withOauthToken(token).withRequestRetryBackoffLimit(1).build();
        try (KubernetesDatastore ds = new KubernetesDatastore(KubernetesConfig.of(cni))) {
            IpamClient ipam = new IpamClient(ds, IpamOptions.defaults());
            // From this test's pool: node start-up's test may have made the default pool as well.
            AssignResult got = ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.rbac-1", "node-rbac", 1, 0,
                    List.of(Cidr.parse("10.77.0.0/24")), List.of(), Map.of(), null));
            assertThat(got.ipv4()).hasSize(1);
            assertThat(got.ipv4().get(0).toString()).startsWith("10.77.0.");
            ipam.releaseByHandle("k8s-pod-network.rbac-1");
            assertThat(ipam.addressesByHandle("k8s-pod-network.rbac-1")).isEmpty();
        }
    }

    /**
     * calico-node's start-up, the real executable, with the environment of the chart's
     * node-startup init container and a token of the calico-node account: it must complete
     * (exit 0) and write the Node's address and the default pool the values asked for. Then the
     * chart's allocate-tunnel-addrs container, as calico-node too: once a WireGuard key appears on
     * the Node (as felix publishes it) it allocates the WireGuard address and writes it on the Node.
     */
    @Test
    void nodeStartupRunsAsCalicoNodeWithTheChartsEnvironment() throws Exception {
        ControlPlane cp = KUBE.controlPlane();
        apply("""
                apiVersion: v1
                kind: Node
                metadata: {name: startup-node}
                """);
        Path kubeconfig = ServiceRun.kubeconfigOf(cp, KUBE.config(), NS, "calico-node");
        Path nodenameFile = Files.createTempFile("nodename", "");
        try {
            Rendered r = Rendered.parse(Helm.template("encapsulation.type=vxlan", "ipPools.ipv4.cidr=10.88.0.0/16").ok().stdout());
            Map<String, String> env = new HashMap<>(Rendered.env(Rendered.container(r.get("DaemonSet", "calico-node"), "node-startup")));
            env.put("NODENAME", "startup-node"); // the chart's fieldRef spec.nodeName
            env.put("KUBECONFIG", kubeconfig.toString());
            // The node's name for the CNI plugin goes to a file of the test's, not this machine's /var/lib/calico.
            env.put("CALICO_NODENAME_FILE", nodenameFile.toString());
            Helm.Result run = ServiceRun.runToEnd(ServiceRun.execJar("node-startup"), env);
            assertThat(run.exit()).as(run.stdout()).isZero();
            assertThat(nodenameFile).hasContent("startup-node");

            Map<String, String> daemonEnv = new HashMap<>(Rendered.env(Rendered.container(r.get("DaemonSet", "calico-node"),
                    "allocate-tunnel-addrs")));
            daemonEnv.put("NODENAME", "startup-node");
            daemonEnv.put("KUBECONFIG", kubeconfig.toString());
            List<String> args = new ArrayList<>();
            Rendered.container(r.get("DaemonSet", "calico-node"), "allocate-tunnel-addrs").path("args")
                    .forEach(a -> args.add(a.asText()));
            Process daemon = ServiceRun.start(ServiceRun.execJar("node-startup"), daemonEnv, args.toArray(String[]::new));
            StringBuffer said = new StringBuffer();
            Thread drain = new Thread(() -> daemon.inputReader().lines().forEach(l -> said.append(l).append('\n')));
            drain.setDaemon(true);
            drain.start();
            try {
                cp.kubectl("annotate", "node", "startup-node",
                        "projectcalico.org/WireguardPublicKey=dGhpcyBpcyBub3QgYSByZWFsIGtleSBidXQgMzIgYnk=");
                Await.until("the WireGuard address on the Node", Duration.ofSeconds(90), () -> cp.kubectl("get", "node",
                        "startup-node", "-o", "jsonpath={.metadata.annotations}").contains("IPv4WireguardInterfaceAddr"));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; allocate-tunnel-addrs said:\n" + said, e);
            } finally {
                daemon.destroy();
                daemon.waitFor();
            }
        } finally {
            Files.deleteIfExists(kubeconfig);
            Files.deleteIfExists(nodenameFile);
        }
        assertThat(cp.kubectl("get", "ippools.crd.projectcalico.org", "default-ipv4-ippool", "-o",
                "jsonpath={.spec.cidr} {.spec.vxlanMode} {.spec.ipipMode}")).isEqualTo("10.88.0.0/16 Always Never");
        assertThat(cp.kubectl("get", "node", "startup-node", "-o", "jsonpath={.metadata.annotations}"))
                .contains("projectcalico.org/IPv4Address", "projectcalico.org/IPv4VXLANTunnelAddr");
    }

    /**
     * typha, the real executable, with the chart's environment and a token of calico-typha: it
     * lists and watches everything felix and confd need (a missing rule leaves it unready) and
     * turns ready. Ports are free ones instead of 5473/9098/9096 (the only variables added).
     */
    @Test
    void typhaGetsReadyAsCalicoTyphaWithTheChartsEnvironment() throws Exception {
        Path kubeconfig = ServiceRun.kubeconfigOf(KUBE.controlPlane(), KUBE.config(), NS, "calico-typha");
        try {
            Rendered r = Rendered.parse(Helm.template().ok().stdout());
            Map<String, String> env = new HashMap<>(Rendered.env(Rendered.container(r.get("Deployment", "calico-typha"), "calico-typha")));
            int health = ServiceRun.freePort();
            env.put("KUBECONFIG", kubeconfig.toString());
            env.put("TYPHA_SERVERPORT", String.valueOf(ServiceRun.freePort()));
            env.put("TYPHA_HEALTHPORT", String.valueOf(health));
            env.put("TYPHA_ADMINPORT", String.valueOf(ServiceRun.freePort()));
            ServiceRun.awaitReadyThenStop(ServiceRun.start(ServiceRun.execJar("typha-service"), env), health, Duration.ofSeconds(120));
        } finally {
            Files.deleteIfExists(kubeconfig);
        }
    }

    /**
     * kube-controllers, the real executable, with the chart's environment and a token of
     * calico-kube-controllers: it takes its Lease, writes KubeControllersConfiguration and runs
     * its controllers until ready. Health and admin ports are free ones; /metrics is off
     * (prometheusMetricsPort 0) so that no fixed port is bound.
     */
    @Test
    void kubeControllersGetReadyAsItsAccountWithTheChartsEnvironment() throws Exception {
        ControlPlane cp = KUBE.controlPlane();
        apply("""
                apiVersion: crd.projectcalico.org/v1
                kind: KubeControllersConfiguration
                metadata: {name: default}
                spec: {prometheusMetricsPort: 0, controllers: {node: {reconcilerPeriod: 5m}}}
                """);
        Path kubeconfig = ServiceRun.kubeconfigOf(cp, KUBE.config(), NS, "calico-kube-controllers");
        try {
            Rendered r = Rendered.parse(Helm.template().ok().stdout());
            Map<String, String> env = new HashMap<>(Rendered.env(Rendered.container(
                    r.get("Deployment", "calico-kube-controllers"), "calico-kube-controllers")));
            int health = ServiceRun.freePort();
            env.put("POD_NAMESPACE", NS);                      // the chart's fieldRefs
            env.put("POD_NAME", "calico-kube-controllers-test");
            env.put("KUBECONFIG", kubeconfig.toString());
            env.put("KUBE_CONTROLLERS_HEALTHPORT", String.valueOf(health));
            env.put("KUBE_CONTROLLERS_ADMINPORT", String.valueOf(ServiceRun.freePort()));
            ServiceRun.awaitReadyThenStop(ServiceRun.start(ServiceRun.execJar("controllers-service"), env), health,
                    Duration.ofSeconds(120));
        } finally {
            Files.deleteIfExists(kubeconfig);
        }
        assertThat(cp.kubectl("get", "lease", "calico-kube-controllers", "-n", NS, "-o", "jsonpath={.spec.holderIdentity}"))
                .isEqualTo("calico-kube-controllers-test");
    }

    /**
     * The v3 API server, the real executable, with the chart's arguments, environment and
     * generated certificate and a token of calico-apiserver (also its delegated authentication
     * and authorization kubeconfig, which in a pod is the in-cluster one): it reads
     * kube-system/extension-apiserver-authentication and the datastore and turns ready. The
     * port and the health port are free ones.
     */
    @Test
    void apiServerGetsReadyAsItsAccountWithTheChartsCertificate() throws Exception {
        ControlPlane cp = KUBE.controlPlane();
        Path kubeconfig = ServiceRun.kubeconfigOf(cp, KUBE.config(), NS, "calico-apiserver");
        Path dir = Files.createTempDirectory("apiserver-certs");
        try {
            Rendered r = Rendered.parse(Helm.template().ok().stdout());
            JsonNode deployment = r.get("Deployment", "calico-apiserver");
            JsonNode container = Rendered.container(deployment, "calico-apiserver");
            for (String key : List.of("tls.crt", "tls.key")) {
                String b64 = cp.kubectl("get", "secret", "calico-apiserver-certs", "-n", NS, "-o",
                        "jsonpath={.data." + key.replace(".", "\\.") + "}");
                Files.write(dir.resolve(key), Base64.getDecoder().decode(b64));
            }
            List<String> args = new ArrayList<>();
            for (JsonNode a : container.path("args")) {
                String arg = a.asText().replace("/calico-apiserver-certs", dir.toString());
                args.add(arg.startsWith("--secure-port=") ? "--secure-port=" + ServiceRun.freePort() : arg);
            }
            args.add("--authentication-kubeconfig=" + kubeconfig);
            args.add("--authorization-kubeconfig=" + kubeconfig);
            Map<String, String> env = new HashMap<>(Rendered.env(container));
            int health = ServiceRun.freePort();
            env.put("KUBECONFIG", kubeconfig.toString());
            env.put("HEALTH_PORT", String.valueOf(health));
            ServiceRun.awaitReadyThenStop(ServiceRun.start(ServiceRun.execJar("apiserver-service"), env,
                    args.toArray(String[]::new)), health, Duration.ofSeconds(120));
        } finally {
            Files.deleteIfExists(kubeconfig);
            for (String key : List.of("tls.crt", "tls.key")) {
                Files.deleteIfExists(dir.resolve(key));
            }
            Files.deleteIfExists(dir);
        }
    }
}
