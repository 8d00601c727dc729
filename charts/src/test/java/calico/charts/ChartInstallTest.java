package calico.charts;

import static org.assertj.core.api.Assertions.assertThat;

import calico.controlplane.ControlPlane;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart on a real control plane (etcd, kube-apiserver, controller manager, scheduler; no
 * kubelet, so no node and every pod stays Pending): every variant accepted by the API server,
 * {@code helm install} creates every object and registers the APIService, {@code helm upgrade}
 * changes what the values changed and keeps the generated secrets, {@code helm uninstall} leaves
 * only the CRDs.
 */
class ChartInstallTest {

    /** Without the extension's CRDs: helm installs them from charts/calico/crds. */
    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds();

    private static final String NS = "calico-system";

    @Test
    void theDefaultsAndEveryVariantFileAreAcceptedByTheApiServer() {
        ControlPlane cp = KUBE.controlPlane();
        cp.kubectl("create", "namespace", "calico-dryrun");
        List<Path> variants = new ArrayList<>();
        variants.add(null);
        variants.addAll(Helm.variantFiles());
        for (Path values : variants) {
            // No ServiceMonitor: this cluster has no Prometheus operator CRDs to accept one.
            String manifests = Helm.template(values, "calico-dryrun", "monitoring.serviceMonitor=false").ok().stdout();
            String out = cp.kubectlWithInput(manifests, "apply", "--dry-run=server", "-f", "-");
            assertThat(out).as(String.valueOf(values)).contains("daemonset.apps/calico-node created (server dry run)")
                    .doesNotContain("error");
        }
    }

    @Test
    void installUpgradeUninstall() {
        ControlPlane cp = KUBE.controlPlane();
        String kubeconfig = KUBE.kubeconfig().toString();

        Helm.run("install", "calico", Helm.CHART.toString(), "--kubeconfig", kubeconfig,
                "--namespace", NS, "--create-namespace", "--set", "tls.enabled=true").ok();
        Rendered installed = Rendered.parse(Helm.run("get", "manifest", "calico", "--kubeconfig", kubeconfig,
                "--namespace", NS).ok().stdout());
        assertThat(installed.objects()).hasSizeGreaterThan(30);
        for (JsonNode o : installed.objects()) {
            assertThat(exists(cp, o)).as(describe(o) + " created").isTrue();
        }
        // helm installed the CRDs of crds/ before the templates.
        assertThat(cp.kubectl("get", "crd", "ippools.crd.projectcalico.org", "-o", "name"))
                .contains("ippools.crd.projectcalico.org");
        // The APIService is registered (its pods never run here, so it stays unavailable).
        assertThat(cp.kubectl("get", "apiservice", "v3.projectcalico.org", "-o", "jsonpath={.spec.service.name}"))
                .isEqualTo("calico-api");
        // The controllers made the Deployments' pods; without a node they wait, unscheduled.
        Await.until("calico-kube-controllers' pod Pending", Duration.ofSeconds(60), () -> cp.kubectl("get", "pods",
                "-n", NS, "-l", "k8s-app=calico-kube-controllers", "-o", "jsonpath={.items[*].status.phase}").contains("Pending"));

        // Kubernetes fills the CNI account's token Secret, which install-cni writes into the host's kubeconfig.
        Await.until("calico-cni-plugin-token filled", Duration.ofSeconds(60),
                () -> !secret(cp, "calico-cni-plugin-token", "token").isBlank());

        String token = secret(cp, "whisker-token", "token");
        String ca = secret(cp, "calico-apiserver-certs", "ca\\.crt");
        String typhaCert = secret(cp, "calico-typha-tls", "tls\\.crt");
        String nodeCert = secret(cp, "calico-node-tls", "tls\\.crt");
        Helm.run("upgrade", "calico", Helm.CHART.toString(), "--kubeconfig", kubeconfig, "--namespace", NS,
                "--set", "typha.expectedNodes=1000", "--set", "networkPolicies=false", "--set", "tls.enabled=true").ok();
        assertThat(cp.kubectl("get", "deployment", "calico-typha", "-n", NS, "-o", "jsonpath={.spec.replicas}")).isEqualTo("5");
        assertThat(cp.kubectl("get", "networkpolicies", "-n", NS, "-o", "name")).isBlank();
        assertThat(secret(cp, "whisker-token", "token")).as("whisker's token kept").isEqualTo(token);
        assertThat(secret(cp, "calico-apiserver-certs", "ca\\.crt")).as("the API server's CA kept").isEqualTo(ca);
        assertThat(cp.kubectl("get", "apiservice", "v3.projectcalico.org", "-o", "jsonpath={.spec.caBundle}")).isEqualTo(ca);
        assertThat(typhaCert).isNotBlank();
        assertThat(secret(cp, "calico-typha-tls", "tls\\.crt")).as("typha's certificate kept").isEqualTo(typhaCert);
        assertThat(secret(cp, "calico-node-tls", "tls\\.crt")).as("the node's certificate kept").isEqualTo(nodeCert);

        Helm.run("uninstall", "calico", "--kubeconfig", kubeconfig, "--namespace", NS).ok();
        for (JsonNode o : installed.objects()) {
            Await.until(describe(o) + " deleted", Duration.ofSeconds(60), () -> !exists(cp, o));
        }
        assertThat(cp.kubectl("get", "crd", "-o", "name")).as("CRDs stay, as Helm keeps crds/")
                .contains("ippools.crd.projectcalico.org", "felixconfigurations.crd.projectcalico.org");
    }

    private static boolean exists(ControlPlane cp, JsonNode o) {
        List<String> args = new ArrayList<>(List.of("get", kindOf(o), o.path("metadata").path("name").asText(),
                "--ignore-not-found", "-o", "name"));
        String ns = o.path("metadata").path("namespace").asText("");
        if (!ns.isEmpty()) {
            args.add("-n");
            args.add(ns);
        }
        return !cp.kubectl(args.toArray(String[]::new)).isBlank();
    }

    /** kind.group, so that kubectl never takes Calico's v3 NetworkPolicy for Kubernetes'. */
    private static String kindOf(JsonNode o) {
        String apiVersion = o.path("apiVersion").asText();
        String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        return o.path("kind").asText().toLowerCase() + (group.isEmpty() ? "" : "." + group);
    }

    private static String secret(ControlPlane cp, String name, String key) {
        return cp.kubectl("get", "secret", name, "-n", NS, "-o", "jsonpath={.data." + key + "}");
    }

    private static String describe(JsonNode o) {
        return o.path("kind").asText() + " " + o.path("metadata").path("namespace").asText("") + "/"
                + o.path("metadata").path("name").asText();
    }
}
