package calico.api.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.codec.ResourceCodec;
import calico.api.model.WorkloadEndpoint;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Pods → WorkloadEndpoints (or none), as Calico's Kubernetes datastore presents them. */
class PodConversionTest {

    private final KubernetesObjects objects = new KubernetesObjects();
    private final KubernetesConverter converter = new KubernetesConverter();
    private final ResourceCodec codec = ResourceCodec.get();

    private static final String POD = """
            apiVersion: v1
            kind: Pod
            metadata:
              name: web-7d9f8-x2k4q
              generateName: web-7d9f8-
              namespace: shop
              uid: 0d9c3b1a-5e6f-4a7b-8c9d-0e1f2a3b4c5d
              resourceVersion: "5521"
              creationTimestamp: "2024-05-03T12:00:00Z"
              labels:
                app: web
                pod-template-hash: 7d9f8
              annotations:
                cni.projectcalico.org/containerID: 4f2e9a7c1b3d
                cni.projectcalico.org/podIP: 10.244.1.7/32
                cni.projectcalico.org/podIPs: 10.244.1.7/32,fd00:10:244:1::7/128
                kubectl.kubernetes.io/restartedAt: "2024-05-03T11:59:00Z"
              ownerReferences:
              - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7d9f8, uid: 11111111-2222-4333-8444-555555555555, controller: true}
              managedFields:
              - {manager: kube-controller-manager, operation: Update, fieldsType: FieldsV1}
            spec:
              nodeName: worker-1
              serviceAccountName: api-reader
              serviceAccount: api-reader
              restartPolicy: Always
              initContainers:
              - name: migrate
                image: shop/migrate:1.2
                ports:
                - {name: init-port, containerPort: 7000, protocol: SCTP}
              containers:
              - name: web
                image: shop/web:1.2
                resources: {limits: {cpu: 500m}}
                ports:
                - {name: http, containerPort: 8080, protocol: TCP}
                - {containerPort: 9000, protocol: TCP}
                - {name: dns, containerPort: 53, protocol: UDP, hostPort: 5353, hostIP: 10.0.0.5}
              - name: sidecar
                image: shop/sidecar:3
                ports:
                - {name: metrics, containerPort: 9090}
                - {containerPort: 9443, hostPort: 443}
                - {name: weird, containerPort: 1234, protocol: QUIC}
            status:
              phase: Running
              hostIP: 192.168.56.11
              podIP: 10.244.1.7
              podIPs:
              - ip: 10.244.1.7
              - ip: fd00:10:244:1::7
              conditions:
              - {type: Ready, status: "True"}
              containerStatuses:
              - {name: web, ready: true, restartCount: 0}
            """;

    private static final String WEP = """
            apiVersion: projectcalico.org/v3
            kind: WorkloadEndpoint
            metadata:
              name: worker--1-k8s-web--7d9f8--x2k4q-eth0
              namespace: shop
              generateName: web-7d9f8-
              uid: 0d9c3b1a-5e6f-4a7b-8c9d-0e1f2a3b4c5d
              resourceVersion: "5521"
              creationTimestamp: "2024-05-03T12:00:00Z"
              labels:
                app: web
                pod-template-hash: 7d9f8
                projectcalico.org/namespace: shop
                projectcalico.org/orchestrator: k8s
                projectcalico.org/serviceaccount: api-reader
            spec:
              orchestrator: k8s
              node: worker-1
              containerID: 4f2e9a7c1b3d
              pod: web-7d9f8-x2k4q
              endpoint: eth0
              serviceAccountName: api-reader
              ipNetworks: [10.244.1.7/32, "fd00:10:244:1::7/128"]
              profiles: [kns.shop, ksa.shop.api-reader]
              interfaceName: calid4aecd9925f
              ports:
              - {name: http, protocol: TCP, port: 8080}
              - {name: dns, protocol: UDP, port: 53, hostPort: 5353, hostIP: 10.0.0.5}
              - {name: metrics, protocol: TCP, port: 9090}
              - {protocol: TCP, port: 9443, hostPort: 443}
              - {name: init-port, protocol: SCTP, port: 7000}
            """;

    @Test
    void aRunningPodBecomesItsEth0Endpoint() {
        KubePod pod = objects.parse(POD, KubePod.class);

        WorkloadEndpoint wep = converter.workloadEndpoint(pod).orElseThrow();

        assertThat(wep).isEqualTo(codec.parse(WEP));
        assertThat(codec.parse(codec.toYaml(wep))).isEqualTo(wep);
    }

    static Stream<Arguments> skipped() {
        return Stream.of(
                Arguments.of("host-networked", POD.replace("  nodeName: worker-1\n", "  nodeName: worker-1\n  hostNetwork: true\n")),
                Arguments.of("not scheduled", POD.replace("  nodeName: worker-1\n", "")),
                Arguments.of("succeeded", POD.replace("phase: Running", "phase: Succeeded")),
                Arguments.of("failed", POD.replace("phase: Running", "phase: Failed")),
                Arguments.of("completed", POD.replace("phase: Running", "phase: Completed")),
                Arguments.of("terminating after the CNI plugin released its IP",
                        POD.replace("  generateName: web-7d9f8-\n", "  generateName: web-7d9f8-\n  deletionTimestamp: \"2024-05-03T13:00:00Z\"\n")
                                .replace("cni.projectcalico.org/podIP: 10.244.1.7/32", "cni.projectcalico.org/podIP: \"\"")));
    }

    @ParameterizedTest(name = "{0} pod: no endpoint")
    @MethodSource("skipped")
    void podsCalicoDoesNotNetworkHaveNoEndpoint(String why, String yaml) {
        assertThat(converter.workloadEndpoint(objects.parse(yaml, KubePod.class))).isEmpty();
    }

    @Test
    void aTerminatingPodThatStillHasItsIpKeepsItsEndpoint() {
        String yaml = POD.replace("  generateName: web-7d9f8-\n", "  generateName: web-7d9f8-\n  deletionTimestamp: \"2024-05-03T13:00:00Z\"\n");

        assertThat(converter.workloadEndpoint(objects.parse(yaml, KubePod.class))).isPresent();
    }

    static Stream<Arguments> ipSources() {
        return Stream.of(
                Arguments.of("status.podIPs wins over everything", "podIP: 10.0.0.9", "[{ip: 10.0.0.1}, {ip: 'fd5f:8067::1'}]",
                        "{cni.projectcalico.org/podIP: 10.0.0.8}", List.of("10.0.0.1/32", "fd5f:8067::1/128")),
                Arguments.of("then status.podIP", "podIP: 10.0.0.9", "[]",
                        "{cni.projectcalico.org/podIP: 10.0.0.8}", List.of("10.0.0.9/32")),
                Arguments.of("then Calico's plural annotation, /32 and /128 accepted", "phase: Pending", "[]",
                        "{cni.projectcalico.org/podIP: 192.168.0.1/32, cni.projectcalico.org/podIPs: '192.168.0.1/32,fd5f:8067::1/128'}",
                        List.of("192.168.0.1/32", "fd5f:8067::1/128")),
                Arguments.of("then Calico's singular annotation", "phase: Pending", "[]",
                        "{cni.projectcalico.org/podIP: 192.168.0.1}", List.of("192.168.0.1/32")),
                Arguments.of("then AWS VPC CNI's annotation", "phase: Pending", "[]",
                        "{vpc.amazonaws.com/pod-ips: 192.168.0.2}", List.of("192.168.0.2/32")),
                Arguments.of("no IP yet: an endpoint without networks", "phase: Pending", "[]", "{}", List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("ipSources")
    void ipNetworksComeFromTheFirstSourceThatHasThem(String rule, String statusLine, String podIPs,
                                                     String annotations, List<String> expected) {
        String yaml = """
                apiVersion: v1
                kind: Pod
                metadata: {name: p, namespace: default, annotations: %s}
                spec: {nodeName: n}
                status:
                  %s
                  podIPs: %s
                """.formatted(annotations, statusLine, podIPs);

        WorkloadEndpoint wep = converter.workloadEndpoint(objects.parse(yaml, KubePod.class)).orElseThrow();

        assertThat(wep.spec().ipNetworks()).containsExactlyElementsOf(expected);
    }

    @Test
    void aMalformedPodIpIsAnErrorNamingTheField() {
        String yaml = POD.replace("  podIPs:\n  - ip: 10.244.1.7\n  - ip: fd00:10:244:1::7\n", "")
                .replace("podIP: 10.244.1.7", "podIP: 10.244.1.700");

        assertThatThrownBy(() -> converter.workloadEndpoint(objects.parse(yaml, KubePod.class)))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("status.podIP: \"10.244.1.700\" is not an IP address");
    }

    @Test
    void aServiceAccountNameOf63CharactersOrMoreGetsNoLabelButKeepsItsProfile() {
        String sa = "a".repeat(63);
        String yaml = POD.replace("serviceAccountName: api-reader", "serviceAccountName: " + sa);

        WorkloadEndpoint wep = converter.workloadEndpoint(objects.parse(yaml, KubePod.class)).orElseThrow();

        assertThat(wep.metadata().labels()).doesNotContainKey(PodConverter.LABEL_SERVICE_ACCOUNT);
        assertThat(wep.spec().profiles()).containsExactly("kns.shop", "ksa.shop." + sa);
    }

    @Test
    void aPodWithoutServiceAccountHasOnlyTheNamespaceProfile() {
        var pod = new KubePod(KubeObjectMeta.of("default", "podA", null),
                new KubePod.Spec("nodeA", null, false, null, null), new KubePod.Status("192.168.0.1", null, "Running"));

        WorkloadEndpoint wep = converter.workloadEndpoint(pod).orElseThrow();

        assertThat(wep.spec().profiles()).containsExactly("kns.default");
        assertThat(wep.metadata().labels()).containsOnlyKeys(PodConverter.LABEL_NAMESPACE, PodConverter.LABEL_ORCHESTRATOR);
        assertThat(wep.metadata().name()).isEqualTo("nodeA-k8s-podA-eth0");
        // Calico's own regression value: this name must never change between releases.
        assertThat(wep.spec().interfaceName()).isEqualTo("cali7f94ce7c295");
    }

    @Test
    void theInterfacePrefixIsConfigurable() {
        var pod = new KubePod(KubeObjectMeta.of("namespace", "podname", null),
                new KubePod.Spec("node", null, false, null, null), null);

        Optional<WorkloadEndpoint> wep = new KubernetesConverter("eni").workloadEndpoint(pod);

        assertThat(wep.orElseThrow().spec().interfaceName()).isEqualTo("eni82111e10a96");
    }

    @Test
    void floatingIpsMapToThePodIpOfTheirFamily() {
        var pod = objects.parse("""
                apiVersion: v1
                kind: Pod
                metadata:
                  name: podA
                  namespace: default
                  annotations:
                    cni.projectcalico.org/podIP: 192.168.0.1
                    cni.projectcalico.org/podIPs: 192.168.0.1,fd5f:8067::1
                    cni.projectcalico.org/floatingIPs: '["1.1.1.1","fd80:100:100::10"]'
                    cni.projectcalico.org/allowedSourcePrefixes: '["8.8.8.0/24","10.1.2.3/16"]'
                spec: {nodeName: nodeA}
                """, KubePod.class);

        WorkloadEndpoint wep = converter.workloadEndpoint(pod).orElseThrow();

        assertThat(codec.toYaml(wep)).contains("ipNATs:", "internalIP: 192.168.0.1", "externalIP: 1.1.1.1",
                "internalIP: fd5f:8067::1", "externalIP: fd80:100:100::10", "allowSpoofedSourcePrefixes:");
        assertThat(wep.spec().ipNATs()).containsExactly(
                new calico.api.model.WorkloadEndpointSpec.IpNat("192.168.0.1", "1.1.1.1"),
                new calico.api.model.WorkloadEndpointSpec.IpNat("fd5f:8067::1", "fd80:100:100::10"));
        assertThat(wep.spec().allowSpoofedSourcePrefixes()).containsExactly("8.8.8.0/24", "10.1.0.0/16");
        assertThat(codec.parse(codec.toYaml(wep))).isEqualTo(wep);
    }

    @Test
    void floatingIpsNeedAPodIpAndWellFormedAnnotations() {
        String base = """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: podA
                  namespace: default
                  annotations: {%s}
                spec: {nodeName: nodeA}
                """;
        var noIp = objects.parse(base.formatted("cni.projectcalico.org/floatingIPs: '[\"1.1.1.1\"]'"), KubePod.class);
        assertThat(converter.workloadEndpoint(noIp).orElseThrow().spec().ipNATs()).isEmpty();

        var badJson = objects.parse(base.formatted(
                "cni.projectcalico.org/podIP: 10.0.0.1, cni.projectcalico.org/floatingIPs: '1.1.1.1'"), KubePod.class);
        assertThatThrownBy(() -> converter.workloadEndpoint(badJson))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("metadata.annotations[cni.projectcalico.org/floatingIPs]: is not a JSON list");

        var badPrefix = objects.parse(base.formatted(
                "cni.projectcalico.org/allowedSourcePrefixes: '[\"10.0.0.0/40\"]'"), KubePod.class);
        assertThatThrownBy(() -> converter.workloadEndpoint(badPrefix))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("metadata.annotations[cni.projectcalico.org/allowedSourcePrefixes]");
    }
}
