package calico.node.startup.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code IP_AUTODETECTION_METHOD=kubernetes-internal-ip} on a real kube-apiserver: the Kubernetes
 * Node's {@code InternalIP} (its status, as a kubelet reports it), found on an interface of the
 * node's namespace, becomes the Calico Node's address with that interface's prefix.
 */
class KubernetesInternalIpTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    @Test
    void theKubernetesNodesInternalIpOnAHostInterface() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("kn-app").endMetadata().build())
                .create();
        KUBE.client().nodes().withName("kn-app").editStatus(n -> new NodeBuilder(n).editOrNewStatus()
                .addNewAddress().withType("Hostname").withAddress("kn-app").endAddress()
                .addNewAddress().withType("InternalIP").withAddress("10.8.0.9").endAddress().endStatus().build());
        try (NetNs ns = NetNs.create("nsk")) {
            ns.exec("ip", "link", "add", "ens3", "type", "veth", "peer", "name", "peer3");
            // first-found would take eth9's address (the higher index): the method must not.
            ns.exec("ip", "link", "add", "eth9", "type", "veth", "peer", "name", "peer9");
            ns.exec("ip", "addr", "add", "10.8.0.9/22", "dev", "ens3");
            ns.exec("ip", "addr", "add", "10.9.0.1/24", "dev", "eth9");
            int code = NodeStartupApplication.run("--HOSTNAME=", "--NODENAME=kn-app", "--DATASTORE_TYPE=kubernetes",
                    "--KUBECONFIG=" + KUBE.kubeconfig(), "--CALICO_NODE_NETNS=" + ns.name(),
                    "--IP_AUTODETECTION_METHOD=kubernetes-internal-ip", "--CALICO_IPV4POOL_CIDR=10.240.0.0/16",
                    "--CALICO_IPV6POOL_CIDR=none");
            assertThat(code).isZero();
        }
        try (Datastore ds = KUBE.datastore()) {
            Node node = (Node) ds.get(ResourceKey.of(ResourceKind.NODE, "kn-app")).orElseThrow();
            assertThat(node.spec().bgp().ipv4Address()).isEqualTo("10.8.0.9/22");
        }
        assertThat(KUBE.client().nodes().withName("kn-app").get().getMetadata().getAnnotations())
                .containsEntry("projectcalico.org/IPv4Address", "10.8.0.9/22");
    }
}
