package calico.api.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WorkloadEndpointNamesTest {

    static Stream<Arguments> names() {
        return Stream.of(
                Arguments.of("node", "k8s", "pod", "eth0", "node-k8s-pod-eth0"),
                Arguments.of("node-1", "k8s", "web-7d9f8-x2k4q", "eth0", "node--1-k8s-web--7d9f8--x2k4q-eth0"),
                Arguments.of("ip-10-0-0-1.ec2.internal", "k8s", "a--b", "eth0", "ip--10--0--0--1.ec2.internal-k8s-a----b-eth0"),
                Arguments.of("host", "cni", "0a1b-2c3d", "eth0", "host-cni-0a1b--2c3d-eth0"),
                Arguments.of("host", "openstack", "vm-42", "tap-1", "host-openstack-vm--42-tap--1"));
    }

    @ParameterizedTest(name = "{4}")
    @MethodSource("names")
    void doublesDashesInEachSegmentAndSplitsBack(String node, String orch, String workload, String endpoint, String name) {
        assertThat(WorkloadEndpointNames.of(node, orch, workload, endpoint)).isEqualTo(name);
        assertThat(WorkloadEndpointNames.parse(name))
                .isEqualTo(new WorkloadEndpointNames.Identifiers(node, orch, workload, endpoint));
    }

    @Test
    void libnetworkRepeatsTheOrchestratorInsteadOfTheWorkload() {
        assertThat(WorkloadEndpointNames.of("host", "libnetwork", "ignored", "ep")).isEqualTo("host-libnetwork-libnetwork-ep");
    }

    @Test
    void calicosOwnExampleParses() {
        assertThat(WorkloadEndpointNames.parse("node-k8s-pod--name-eth0"))
                .isEqualTo(new WorkloadEndpointNames.Identifiers("node", "k8s", "pod-name", "eth0"));
        assertThat(WorkloadEndpointNames.forPod("node", "pod-name")).isEqualTo("node-k8s-pod--name-eth0");
    }

    @Test
    void rejectsSegmentsThatCannotBeSplitBackNamingTheField() {
        assertThatThrownBy(() -> WorkloadEndpointNames.forPod("node", "-pod"))
                .hasMessage("pod: \"-pod\" must not begin with '-'");
        assertThatThrownBy(() -> WorkloadEndpointNames.forPod("node-", "pod"))
                .hasMessage("node: \"node-\" must not end with '-'");
        assertThatThrownBy(() -> WorkloadEndpointNames.of("node", "cni", "", "eth0"))
                .hasMessage("containerID: is required in a workload endpoint name");
        assertThatThrownBy(() -> WorkloadEndpointNames.of(null, "k8s", "p", "eth0"))
                .hasMessage("node: is required in a workload endpoint name");
        assertThatThrownBy(() -> WorkloadEndpointNames.parse("node-k8s-pod"))
                .hasMessageContaining("is not a workload endpoint name");
    }

    @Test
    void interfaceNamesMatchCalicosRegressionValues() {
        assertThat(WorkloadEndpointNames.interfaceName("default", "podA")).isEqualTo("cali7f94ce7c295");
        assertThat(WorkloadEndpointNames.interfaceName("eni", "namespace", "podname")).isEqualTo("eni82111e10a96");
        assertThat(WorkloadEndpointNames.interfaceName("a-long-namespace-name", "a-long-pod-name-1234567890"))
                .hasSize(15);
    }

    @Property
    void everyValidNameSplitsBackIntoItsSegments(@ForAll("segment") String node, @ForAll("segment") String pod,
                                                 @ForAll("segment") String endpoint) {
        String name = WorkloadEndpointNames.of(node, "k8s", pod, endpoint);

        assertThat(WorkloadEndpointNames.parse(name))
                .isEqualTo(new WorkloadEndpointNames.Identifiers(node, "k8s", pod, endpoint));
    }

    /** Kubernetes-like names: letters, digits, dots and dashes, not starting or ending with a dash. */
    @Provide
    Arbitrary<String> segment() {
        return Arbitraries.strings().withChars("ab1.-").ofMinLength(1).ofMaxLength(12)
                .filter(s -> !s.startsWith("-") && !s.endsWith("-"));
    }
}
