package calico.apiserver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.controlplane.ControlPlane;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kubectl scenarios through a real kube-apiserver (v1.37.2, with its own kubectl), the server
 * storing in Calico's CRDs (the kubernetes datastore): the aggregation layer proxies
 * projectcalico.org/v3 to the server, which authenticates the front proxy by the cluster's
 * authentication ConfigMap and authorizes by SubjectAccessReview against real RBAC objects (the
 * scenarios' rules, applied to the cluster). kube-apiserver knows the scenarios' tokens from its
 * own {@code --token-auth-file}. Namespaces, Nodes and Pods are made through the core API first,
 * as Calico's kubernetes datastore needs them.
 */
class KubectlAggregatedTest extends KubectlScenarios {

    static final Path TOKENS = tokenFile();

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers()
            .withApiServerFlags("--token-auth-file=" + TOKENS);

    static AggregatedApiServer aggregated;

    @BeforeAll
    static void start() {
        KUBE.controlPlane().kubectlWithInput(ApiServerFixture.RULES, "apply", "-f", "-");
        aggregated = AggregatedApiServer.start(KUBE.controlPlane(), "--apiserver.datastore-type=kubernetes",
                "--apiserver.kubeconfig=" + KUBE.kubeconfig());
    }

    @AfterAll
    static void stop() throws IOException {
        if (aggregated != null) {
            aggregated.close();
        }
        Files.deleteIfExists(TOKENS);
    }

    private static Path tokenFile() {
        try {
            Path f = Files.createTempFile("kube-tokens", ".csv");
            Files.writeString(f, ApiServerFixture.TOKENS_CSV);
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static ControlPlane cp() {
        return KUBE.controlPlane();
    }

    @Override
    ApiServerFixture server() {
        return aggregated.server();
    }

    @Override
    Kubectl kubectl(String token) {
        return new Kubectl(cp().binaries().kubectl(), cp().apiServerUrl().toString(), token);
    }

    @Override
    Set<ResourceKind> derivedKinds() {
        return Set.of(ResourceKind.NODE, ResourceKind.PROFILE, ResourceKind.WORKLOAD_ENDPOINT);
    }

    @Override
    void prepare(List<String> namespaces, List<String> nodes) {
        StringBuilder yaml = new StringBuilder();
        for (String ns : namespaces) {
            // No controller manager here: the ServiceAccount admission plugin wants the default account made by hand.
            yaml.append("""
                    apiVersion: v1
                    kind: Namespace
                    metadata: {name: %1$s}
                    ---
                    apiVersion: v1
                    kind: ServiceAccount
                    metadata: {name: default, namespace: %1$s}
                    ---
                    """.formatted(ns));
        }
        for (String node : nodes) {
            yaml.append("apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n---\n".formatted(node));
        }
        if (!yaml.isEmpty()) {
            cp().kubectlWithInput(yaml.toString(), "apply", "-f", "-");
        }
    }

    /**
     * Applies {@code manifest} (its value {@code from} then kept where {@code stored} reads),
     * diffs it with {@code to} instead (exit 1, the new value shown) and applies that server-side
     * (then kept too); {@return the first apply's result}.
     */
    private static Kubectl.Result applyDiffAndApplyServerSide(Kubectl k, String manifest, String from, String to,
                                                              Supplier<String> stored) {
        Kubectl.Result applied = ok(k.run(manifest, "apply", "-f", "-"));
        assertThat(stored.get()).contains(from);
        String changed = manifest.replace(from, to);
        Kubectl.Result diff = k.run(changed, "diff", "-f", "-");
        assertThat(diff.exit()).as(diff.all()).isEqualTo(1);
        assertThat(diff.out()).containsPattern("(?m)^\\+ .*" + Pattern.quote(to) + "$");
        assertThat(ok(k.run(changed, "apply", "--server-side", "-f", "-")).out()).contains("serverside-applied");
        assertThat(stored.get()).contains(to);
        return applied;
    }

    /**
     * A watch from the resourceVersion of a list delivers every later change, also when
     * kube-apiserver's watch cache of one of the kind's sources started after that list (the CI
     * flake: {@code kubectl get -w} on GlobalNetworkPolicies answered {@code Expired: too old
     * resource version: 388 (389)}, the AdminNetworkPolicy cache made by that very list). A spec
     * change of the AdminNetworkPolicy CRD makes kube-apiserver start a new cache, after an
     * AdminNetworkPolicy made since the list; the watch through this server still delivers it.
     */
    @Test
    void aWatchFromAListsResourceVersionSurvivesAWatchCacheStartedAfterIt() throws Exception {
        Kubectl k = admin();
        // The server's list (kubectl get prints a list of its own, without the resourceVersion).
        String listed = new com.fasterxml.jackson.databind.ObjectMapper().readTree(ok(k.run(null, "get", "--raw",
                "/apis/projectcalico.org/v3/globalnetworkpolicies")).out()).path("metadata").path("resourceVersion").asText();
        assertThat(listed).isNotEmpty();
        cp().kubectlWithInput("""
                apiVersion: policy.networking.k8s.io/v1alpha1
                kind: AdminNetworkPolicy
                metadata: {name: after-the-list}
                spec:
                  priority: 9
                  subject: {namespaces: {}}
                  ingress: [{name: deny-all, action: Deny, from: [{namespaces: {}}]}]
                """, "apply", "-f", "-");
        try {
            String crd = "adminnetworkpolicies.policy.networking.k8s.io";
            cp().kubectl("patch", "crd", crd, "--type=json", "-p", "[{\"op\":\"add\",\"path\":"
                    + "\"/spec/versions/0/schema/openAPIV3Schema/description\",\"value\":\"changed by "
                    + "KubectlAggregatedTest\"}]");
            long changed = Long.parseLong(cp().kubectl("get", "crd", crd, "-o",
                    "jsonpath={.metadata.resourceVersion}").strip());
            Pattern tooOld = Pattern.compile("too old resource version: \\d+ \\((\\d+)\\)");
            Await.until("a new AdminNetworkPolicy watch cache, started after " + changed,
                    Duration.ofSeconds(60), () -> {
                        var m = tooOld.matcher(cp().kubectl("get", "--raw", "/apis/policy.networking.k8s.io/v1alpha1/"
                                + "adminnetworkpolicies?watch=1&timeoutSeconds=1&resourceVersion=" + listed));
                        return m.find() && Long.parseLong(m.group(1)) >= changed;
                    });

            String watched = ok(k.run(null, "get", "--raw", "/apis/projectcalico.org/v3/globalnetworkpolicies"
                    + "?watch=1&timeoutSeconds=5&resourceVersion=" + listed)).out();
            assertThat(watched).doesNotContain("Expired")
                    .containsPattern("\"type\":\"ADDED\".*\"name\":\"kanp\\.adminnetworkpolicy\\.after-the-list\"");
        } finally {
            cp().kubectl("delete", "adminnetworkpolicy", "after-the-list", "--ignore-not-found");
        }
    }

    /**
     * The derived kinds through kubectl: a Calico Node is the Kubernetes Node (Calico's fields
     * in its annotations), a Profile a ServiceAccount, a WorkloadEndpoint a Pod (its addresses in
     * the Pod's annotations); they come and go with those objects, and the server says why it
     * cannot create or delete Nodes and Profiles.
     */
    @Test
    void derivedKindsFollowTheirKubernetesObjects() throws Exception {
        prepare(List.of("derived"), List.of("derived-node"));
        cp().kubectlWithInput("""
                apiVersion: v1
                kind: ServiceAccount
                metadata: {name: robot, namespace: derived}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: wl, namespace: derived}
                spec:
                  nodeName: derived-node
                  containers: [{name: app, image: registry.k8s.io/pause:3.10}]
                """, "apply", "-f", "-");
        Kubectl k = admin();
        assertThat(ok(k.run(null, "get", "nodes.projectcalico.org", "derived-node", "-o", "yaml")).out())
                .contains("kind: Node").contains("name: derived-node");
        String calicoNode = """
                apiVersion: projectcalico.org/v3
                kind: Node
                metadata: {name: derived-node}
                spec: {bgp: {ipv4Address: 192.0.2.90/24}}
                """;
        // Calico's fields live in the Kubernetes Node's annotations.
        assertThat(applyDiffAndApplyServerSide(k, calicoNode, "192.0.2.90/24", "192.0.2.91/24",
                () -> cp().kubectl("get", "node", "derived-node", "-o", "jsonpath={.metadata.annotations}")).out())
                .contains("node.projectcalico.org/derived-node configured");
        assertThat(ok(k.run(null, "get", "nodes.projectcalico.org", "derived-node", "-o",
                "jsonpath={.spec.bgp.ipv4Address}")).out()).isEqualTo("192.0.2.91/24");
        Kubectl.Result refused = k.run(null, "delete", "nodes.projectcalico.org", "derived-node");
        assertThat(refused.exit()).isNotZero();
        assertThat(refused.err()).contains("Node cannot be created or deleted in the kubernetes datastore");

        String profile = "ksa.derived.robot";
        assertThat(ok(k.run(null, "get", "profiles.projectcalico.org", profile, "-o", "yaml")).out())
                .contains("kind: Profile").contains("name: " + profile);
        Kubectl.Result readOnly = k.run("""
                apiVersion: projectcalico.org/v3
                kind: Profile
                metadata: {name: ksa.derived.robot}
                spec: {labelsToApply: {x: "1"}}
                """, "apply", "-f", "-");
        assertThat(readOnly.err()).contains("Profile is read-only in the kubernetes datastore");

        String wep = "derived--node-k8s-wl-eth0";
        assertThat(ok(k.run(null, "get", "workloadendpoints", "-n", "derived", wep, "-o", "yaml")).out())
                .contains("kind: WorkloadEndpoint").contains("pod: wl");
        String endpoint = """
                apiVersion: projectcalico.org/v3
                kind: WorkloadEndpoint
                metadata: {name: derived--node-k8s-wl-eth0, namespace: derived}
                spec: {orchestrator: k8s, node: derived-node, pod: wl, endpoint: eth0, interfaceName: caliwl0,
                       containerID: c0ffee, ipNetworks: [10.90.0.7/32]}
                """;
        // The address lives in the Pod's annotations.
        applyDiffAndApplyServerSide(k, endpoint, "10.90.0.7/32", "10.90.0.8/32",
                () -> cp().kubectl("get", "pod", "wl", "-n", "derived", "-o", "jsonpath={.metadata.annotations}"));

        Path nodeWatch = Files.createTempFile(k.home(), "nodes", ".txt");
        Path profileWatch = Files.createTempFile(k.home(), "profiles", ".txt");
        Process nodes = k.start(nodeWatch, "get", "nodes.projectcalico.org", "-w", "--output-watch-events");
        Process profiles = k.start(profileWatch, "get", "profiles.projectcalico.org", "-w", "--output-watch-events");
        Path wepWatch = Files.createTempFile(k.home(), "weps", ".txt");
        Process weps = k.start(wepWatch, "get", "workloadendpoints", "-n", "derived", "-w", "--output-watch-events");
        try {
            awaitContent(nodeWatch, " derived-node ", Duration.ofSeconds(60));
            awaitContent(profileWatch, " " + profile + " ", Duration.ofSeconds(60));
            awaitContent(wepWatch, " " + wep + " ", Duration.ofSeconds(60));
            cp().kubectl("delete", "node", "derived-node");
            cp().kubectl("delete", "serviceaccount", "robot", "-n", "derived");
            // No kubelet to confirm a graceful deletion: the Pod goes at once only when forced.
            cp().kubectl("delete", "pod", "wl", "-n", "derived", "--grace-period=0", "--force");
            awaitContent(nodeWatch, "DELETED", Duration.ofSeconds(60));
            awaitContent(profileWatch, "DELETED", Duration.ofSeconds(60));
            awaitContent(wepWatch, "DELETED", Duration.ofSeconds(60));
            assertThat(Files.readString(nodeWatch)).containsPattern("DELETED +derived-node ");
            assertThat(Files.readString(profileWatch)).containsPattern("DELETED +" + profile.replace(".", "\\.") + " ");
            assertThat(Files.readString(wepWatch)).containsPattern("DELETED +" + wep + " ");
        } finally {
            nodes.destroy();
            profiles.destroy();
            weps.destroy();
        }
    }
}
