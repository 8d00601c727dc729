package calico.charts;

import static org.assertj.core.api.Assertions.assertThat;

import calico.controlplane.ControlPlane;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart on a real node ({@link KubeletNode}: containerd, runc and kubelet on this machine):
 * {@code helm install} with the node's images imported into containerd and felix talking to typha
 * over mutual TLS ({@code tls.enabled}); calico-node turns Ready on the kubelet; pods started by
 * the kubelet get their addresses from the IP pool through our CNI plugin and are reachable from
 * the node; then a Kubernetes NetworkPolicy admits one client pod and drops another's packets.
 *
 * <p>Opt-in ({@code CALICO_TEST_NODE=1}) and in profile {@code images} (it needs
 * {@code scripts/images.sh build}'s archives): minutes of four JVMs starting on 2 cores.
 */
@EnabledIfEnvironmentVariable(named = "CALICO_TEST_NODE", matches = "1",
        disabledReason = "opt-in (CALICO_TEST_NODE=1): a real kubelet node takes minutes")
class ChartNodeTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds();

    private static final String NS = "calico-system";
    private static final String PODS = "node-test";
    /** The images calico-node and typha run with BGP off (no confd/BIRD). */
    private static final List<String> NODE_IMAGES = List.of("node-startup", "cni-plugin", "felix", "typha");
    private static final String POOL_PREFIX = "192.168.";

    @Test
    void calicoNodeIsReadyOnAKubeletAndItsPodsGetAddressesAndPolicy(@TempDir Path dir) {
        ControlPlane cp = KUBE.controlPlane();
        String tag = ChartImagesTest.chartAppVersion();
        try (KubeletNode node = KubeletNode.start(cp, dir)) {
            for (String image : NODE_IMAGES) {
                node.importImage(ChartImagesTest.IMAGES.resolve(image + ".tar"), "calico-java/" + image + ":" + tag);
            }
            long installed = System.nanoTime();
            // Lean: no BGP (felix's VXLAN routes), one typha, no API server, goldmane or whisker;
            // kube-controllers does not tolerate the node's taint and stays Pending.
            Helm.run("install", "calico", Helm.CHART.toString(), "--kubeconfig", KUBE.kubeconfig().toString(),
                    "--namespace", NS, "--create-namespace", "--set", "bgp.enabled=false", "--set", "typha.replicas=1",
                    "--set", "apiserver.enabled=false", "--set", "goldmane.enabled=false",
                    "--set", "whisker.enabled=false", "--set", "networkPolicies=false",
                    // felix to typha over mutual TLS with the chart's certificates
                    "--set", "tls.enabled=true").ok();
            // kubectl wait watches: one process for the whole wait, no polling.
            kubectlWait(node, Duration.ofMinutes(2), "--for=create", "pod", "-n", NS, "-l", "k8s-app=calico-node");
            kubectlWait(node, Duration.ofMinutes(12), "--for=condition=Ready", "pod", "-n", NS, "-l", "k8s-app=calico-node");
            Duration toReady = Duration.ofNanos(System.nanoTime() - installed);
            System.out.printf("ChartNodeTest: calico-node Ready %.1f s after helm install%n", toReady.toMillis() / 1000.0);
            assertThat(cp.kubectl("get", "node", node.name(), "-o",
                    "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}")).isEqualTo("True");

            // Three pods of node-pod: a server and two clients, started by the kubelet through our CNI.
            cp.kubectl("create", "namespace", PODS);
            cp.kubectl("wait", "--for=create", "serviceaccount/default", "-n", PODS, "--timeout=60s");
            cp.kubectlWithInput(pod("server", "app: server", "serve", "8080")
                    + pod("allowed", "role: allowed", "pause", "node-test-allowed")
                    + pod("other", "role: other", "pause", "node-test-other"), "apply", "-f", "-");
            String server = awaitPodIp(node, "server");
            awaitPodIp(node, "allowed");
            awaitPodIp(node, "other");
            assertThat(server).startsWith(POOL_PREFIX);
            assertThat(cp.kubectl("get", "pod", "server", "-n", PODS, "-o",
                    "jsonpath={.metadata.annotations.cni\\.projectcalico\\.org/podIP}")).isEqualTo(server + "/32");
            String binary = node.podBinary().toString();
            String[] connect = {binary, "connect", server, "8080", "1000"};
            awaitOrExplain(node, "the server reachable from the node", Duration.ofSeconds(60),
                    () -> node.onNode(connect).exit() == 0);
            awaitOrExplain(node, "the server reachable from both clients", Duration.ofSeconds(60),
                    () -> node.inPodOf("node-test-allowed", connect).exit() == 0
                            && node.inPodOf("node-test-other", connect).exit() == 0);

            // Only pods labelled role=allowed may reach the server now.
            cp.kubectlWithInput("""
                    apiVersion: networking.k8s.io/v1
                    kind: NetworkPolicy
                    metadata: {name: server-from-allowed, namespace: %s}
                    spec:
                      podSelector: {matchLabels: {app: server}}
                      policyTypes: [Ingress]
                      ingress:
                        - from: [{podSelector: {matchLabels: {role: allowed}}}]
                          ports: [{protocol: TCP, port: 8080}]
                    """.formatted(PODS), "apply", "-f", "-");
            awaitOrExplain(node, "the other client's packets dropped", Duration.ofSeconds(60),
                    () -> node.inPodOf("node-test-other", connect).exit() != 0);
            assertThat(node.inPodOf("node-test-allowed", connect).exit()).as("the allowed client still passes").isZero();
            assertThat(node.inPodOf("node-test-other", connect).output()).contains("timed out");
        }
    }

    private static String pod(String name, String labels, String... args) {
        return """
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: %s, labels: {%s}}
                spec:
                  terminationGracePeriodSeconds: 0
                  # the node's own taint and not-ready, which no node-lifecycle controller lifts here
                  tolerations: [{operator: Exists, effect: NoSchedule}]
                  containers:
                    - name: node-pod
                      image: %s
                      imagePullPolicy: Never
                      command: [%s]
                ---
                """.formatted(name, PODS, labels, KubeletNode.POD_IMAGE,
                java.util.stream.Stream.concat(java.util.stream.Stream.of(KubeletNode.POD_BINARY_IN_IMAGE), java.util.Arrays.stream(args))
                        .map(a -> "\"" + a + "\"").collect(java.util.stream.Collectors.joining(", ")));
    }

    private static String awaitPodIp(KubeletNode node, String pod) {
        kubectlWait(node, Duration.ofMinutes(2), "--for=jsonpath={.status.phase}=Running", "pod/" + pod, "-n", PODS);
        return KUBE.controlPlane().kubectl("get", "pod", pod, "-n", PODS, "-o", "jsonpath={.status.podIP}");
    }

    /** {@code kubectl wait ARGS --timeout=...}; on a time-out the cluster's and kubelet's state in the failure. */
    private static void kubectlWait(KubeletNode node, Duration timeout, String... args) {
        ControlPlane cp = KUBE.controlPlane();
        List<String> command = new java.util.ArrayList<>(List.of("wait"));
        command.addAll(List.of(args));
        command.add("--timeout=" + timeout.toSeconds() + "s");
        ControlPlane.KubectlResult r = cp.kubectlAs(cp.adminKubeconfig(), command.toArray(String[]::new));
        if (r.exitCode() != 0) {
            throw explained(node, "kubectl " + String.join(" ", command) + ": " + r.output(), null);
        }
    }

    /** Await.until, and on a time-out the pods' state and kubelet's log in the failure. */
    private static void awaitOrExplain(KubeletNode node, String what, Duration deadline, BooleanSupplier condition) {
        try {
            Await.until(what, deadline, condition);
        } catch (AssertionError e) {
            throw explained(node, e.getMessage(), e);
        }
    }

    private static AssertionError explained(KubeletNode node, String failure, Throwable cause) {
        ControlPlane cp = KUBE.controlPlane();
        return new AssertionError(failure + "\npods:\n" + cp.kubectl("get", "pods", "-A", "-o", "wide")
                + "\nevents:\n" + cp.kubectl("get", "events", "-A", "--sort-by=.lastTimestamp")
                + "\nkubelet:\n" + node.log("kubelet"), cause);
    }
}
