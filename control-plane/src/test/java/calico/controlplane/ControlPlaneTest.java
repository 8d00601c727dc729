package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real control plane from the pinned binaries (scripts/control-plane.sh build). */
class ControlPlaneTest {

    @TempDir
    static Path dir;

    static ControlPlane cp;

    /** Read at once after start: whether pods in {@code default} would be admitted yet. */
    static String defaultAccountAtStart;

    @BeforeAll
    static void start() {
        cp = ControlPlane.start(Settings.in(dir));
        defaultAccountAtStart = cp.kubectl("get", "serviceaccount", "default", "-n", "default", "--ignore-not-found", "-o", "name");
    }

    @AfterAll
    static void stop() {
        if (cp != null) {
            cp.close();
        }
    }

    @Test
    void theAdminKubeconfigReachesAReadyApiServerWithEveryPartRunning() {
        assertThat(cp.running()).isTrue();
        assertThat(cp.ready()).isTrue();
        assertThat(cp.kubectl("get", "namespace", "kube-system", "-o", "name")).isEqualTo("namespace/kube-system\n");
        assertThat(cp.kubectl("version", "-o", "json")).contains("\"gitVersion\": \"v1.37.2\"");
        assertThat(cp.kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")).isEqualTo("kubernetes-admin");
    }

    @Test
    void startReturnsOnlyOnceTheDefaultServiceAccountExists() {
        // Without it the API server forbids every pod in default ("serviceaccount \"default\" not found").
        assertThat(defaultAccountAtStart).isEqualTo("serviceaccount/default\n");
    }

    @Test
    void theControllerManagerRuns() {
        // The namespace controller empties and removes a deleted namespace; the service-account
        // controller gives a new one its default account.
        cp.kubectl("create", "namespace", "cp-test-ns");
        cp.kubectl("wait", "--for=create", "serviceaccount/default", "-n", "cp-test-ns", "--timeout=60s");
        cp.kubectl("delete", "namespace", "cp-test-ns", "--wait=true", "--timeout=60s");
        assertThat(cp.kubectl("get", "namespace", "cp-test-ns", "--ignore-not-found", "-o", "name")).isEmpty();
    }

    @Test
    void theSchedulerBindsAPodToANode() {
        // A Node object without a kubelet: the scheduler needs only its allocatable pods. Admission
        // taints a new Node not-ready until a kubelet reports; this pod tolerates that.
        cp.kubectlWithInput("""
                apiVersion: v1
                kind: Node
                metadata: {name: cp-test-node}
                status:
                  allocatable: {pods: "10", cpu: "2", memory: 4Gi}
                  capacity: {pods: "10", cpu: "2", memory: 4Gi}
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: cp-test-pod, namespace: default}
                spec:
                  containers: [{name: c, image: example.invalid/none}]
                  tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoSchedule}]
                """, "apply", "-f", "-");
        cp.kubectl("wait", "--for=jsonpath={.spec.nodeName}=cp-test-node", "pod/cp-test-pod", "-n", "default", "--timeout=60s");
    }

    @Test
    void aUserWithoutRbacRightsIsForbidden() {
        Path bob = cp.kubeconfig("bob", List.of("developers"));
        assertThat(bob).exists();
        ControlPlane.KubectlResult r = cp.kubectlAs(bob, "get", "namespaces");
        assertThat(r.exitCode()).isNotZero();
        assertThat(r.output()).contains("User \"bob\" cannot list resource \"namespaces\"");
    }

    @Test
    void aKilledApiServerComesBackOnItsPortWithItsData() {
        cp.kubectl("create", "configmap", "survivor", "-n", "default", "--from-literal=a=b");
        cp.killApiServer();
        assertThat(cp.ready()).isFalse();
        assertThat(cp.running()).isFalse();
        cp.startApiServer();
        assertThat(cp.kubectl("get", "configmap", "survivor", "-n", "default", "-o", "jsonpath={.data.a}")).isEqualTo("b");
    }

    @Test
    void startingAgainOnTheSameDirectoryAdoptsTheRunningParts() throws Exception {
        String stateBefore = Files.readString(dir.resolve(State.FILE));
        try (ControlPlane again = ControlPlane.start(Settings.in(dir))) {
            assertThat(again.apiServerUrl()).isEqualTo(cp.apiServerUrl());
            assertThat(again.status()).isEqualTo(cp.status());
        } finally {
            // close() of the adopted instance stopped the shared parts: bring them back for the others.
            cp = ControlPlane.start(Settings.in(dir));
        }
        assertThat(stateBefore).contains("pid.kube-apiserver");
    }

    @Test
    void aManifestDirectoryIsAppliedAndItsCrdsEstablished(@TempDir Path manifests) throws Exception {
        Files.writeString(manifests.resolve("crd.yaml"), """
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata:
                  name: widgets.test.example.com
                spec:
                  group: test.example.com
                  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
                  scope: Cluster
                  versions:
                  - name: v1
                    served: true
                    storage: true
                    schema:
                      openAPIV3Schema:
                        type: object
                        properties:
                          spec: {type: object, properties: {size: {type: integer}}}
                """);
        cp.apply(manifests);
        assertThat(cp.kubectl("get", "crd", "widgets.test.example.com", "-o",
                "jsonpath={.status.conditions[?(@.type=='Established')].status}")).isEqualTo("True");
        assertThatThrownBy(() -> cp.kubectl("get", "nosuchkind")).hasMessageContaining("the server doesn't have a resource type");
    }
}
