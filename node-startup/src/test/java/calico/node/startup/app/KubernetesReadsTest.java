package calico.node.startup.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.IPPool;
import calico.api.model.Node;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.dataplane.testing.NetNs;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What start-up reads from a real kube-apiserver besides Calico's resources:
 * {@code IP_AUTODETECTION_METHOD=kubernetes-internal-ip} (the Kubernetes Node's {@code InternalIP},
 * found on an interface of the node's namespace, becomes the Calico Node's address with that
 * interface's prefix), and kubeadm's {@code podSubnet} for default pools whose CIDR is unset.
 */
class KubernetesReadsTest {

    @org.junit.jupiter.api.io.TempDir
    static java.nio.file.Path dir;

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
                    "--CALICO_IPV6POOL_CIDR=none", "--CALICO_NODENAME_FILE=" + dir.resolve("nodename"));
            assertThat(code).isZero();
        }
        try (Datastore ds = KUBE.datastore()) {
            Node node = (Node) ds.get(ResourceKey.of(ResourceKind.NODE, "kn-app")).orElseThrow();
            assertThat(node.spec().bgp().ipv4Address()).isEqualTo("10.8.0.9/22");
        }
        assertThat(KUBE.client().nodes().withName("kn-app").get().getMetadata().getAnnotations())
                .containsEntry("projectcalico.org/IPv4Address", "10.8.0.9/22");
    }

    @Test
    void unsetPoolCidrsFollowKubeadmsPodSubnetElseAvoidTheNodesAddresses() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("kn-pool").endMetadata().build())
                .create();
        try (NetNs ns = NetNs.create("nsp"); Datastore ds = KUBE.datastore()) {
            ns.exec("ip", "link", "add", "ens3", "type", "veth", "peer", "name", "peer3");
            ns.exec("ip", "addr", "add", "192.168.7.1/24", "dev", "ens3");
            String[] args = {"--HOSTNAME=", "--NODENAME=kn-pool", "--DATASTORE_TYPE=kubernetes",
                "--KUBECONFIG=" + KUBE.kubeconfig(), "--CALICO_NODE_NETNS=" + ns.name(),
                "--IP_AUTODETECTION_METHOD=interface=ens3", "--FELIX_IPV6SUPPORT=true",
                "--CALICO_NODENAME_FILE=" + dir.resolve("nodename")};

            // No kubeadm-config: the node's own 192.168.7.1 (read in its namespace) rules 192.168.0.0/16 out.
            assertThat(NodeStartupApplication.run(args)).isZero();
            assertThat(poolCidrs(ds)).containsKey("default-ipv4-ippool")
                    .containsEntry("default-ipv4-ippool", "172.16.0.0/16");
            assertThat(poolCidrs(ds).get("default-ipv6-ippool")).as("a random unique local /48").startsWith("fd")
                    .endsWith("::/48");

            KUBE.client().configMaps().inNamespace("kube-system").resource(new ConfigMapBuilder()
                    .withNewMetadata().withName("kubeadm-config").endMetadata()
                    .addToData("ClusterConfiguration", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
                            + "networking:\n  podSubnet: 10.217.0.0/16,fd00:10:217::/56\n  serviceSubnet: 10.96.0.0/12\n")
                    .build()).create();
            ds.list(ResourceKind.IP_POOL).items().forEach(p -> ds.delete(ResourceKey.of(ResourceKind.IP_POOL, p.metadata().name()), null));
            assertThat(NodeStartupApplication.run(args)).isZero();
            assertThat(poolCidrs(ds)).containsEntry("default-ipv4-ippool", "10.217.0.0/16")
                    .containsEntry("default-ipv6-ippool", "fd00:10:217::/56");
        } finally {
            KUBE.client().configMaps().inNamespace("kube-system").withName("kubeadm-config").delete();
        }
    }

    private static java.util.Map<String, String> poolCidrs(Datastore ds) {
        return ds.list(ResourceKind.IP_POOL).items().stream().collect(java.util.stream.Collectors.toMap(
                p -> p.metadata().name(), p -> ((IPPool) p).spec().cidr()));
    }
}
