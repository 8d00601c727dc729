package calico.felix.e2e;

import calico.api.model.EncapsulationMode;
import calico.api.model.IPAMBlock;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.testing.NetNs;
import java.util.List;

/**
 * Where a {@link Cluster}'s pods live: the nodes (each a network namespace one felix programs) and
 * which node a Kubernetes namespace's pods are scheduled to. {@link #oneNode} puts every pod on one
 * node; {@link #twoNodesVxlan} puts {@code prod}'s pods on node A and {@code dev}'s on node B, with
 * VXLAN between them, so that every pair across the two namespaces crosses nodes.
 */
interface PodHosts extends AutoCloseable {

    /** One node: its name ({@code FELIX_FELIXHOSTNAME}, the pods' {@code spec.nodeName}) and its namespace. */
    record Host(String node, NetNs netns) {
    }

    /** {@return every node, in a stable order} (one felix each). */
    List<Host> hosts();

    /** {@return the node the pods of Kubernetes namespace {@code namespace} are scheduled to}. */
    Host hostFor(String namespace);

    @Override
    void close();

    /**
     * One node, {@link Cluster#NODE}: a namespace with forwarding on and an uplink with the default
     * route, as a real host has (proxy ARP answers only for addresses routed out of another interface).
     */
    static PodHosts oneNode() {
        NetNs host = NetNs.create("e2eh");
        try {
            host.exec("sysctl", "-qw", "net.ipv4.ip_forward=1");
            host.uplink();
        } catch (RuntimeException e) {
            host.close();
            throw e;
        }
        Host only = new Host(Cluster.NODE, host);
        return new PodHosts() {
            @Override
            public List<Host> hosts() {
                return List.of(only);
            }

            @Override
            public Host hostFor(String namespace) {
                return only;
            }

            @Override
            public void close() {
                host.close();
            }
        };
    }

    /**
     * Two nodes of a {@link MultiNodeCluster} on one underlay subnet: {@code e2e-node-a} holds the
     * IPAM block {@code 10.70.0.0/26} ({@code prod}'s pods), {@code e2e-node-b} {@code 10.70.1.0/26}
     * ({@code dev}'s), both in the pool {@code 10.70.0.0/16} with VXLAN {@code Always}; the tunnel
     * addresses come from the fixture's own pool. Felix is not started here: the caller starts one
     * per {@link #hosts} host.
     */
    static PodHosts twoNodesVxlan(TestDatastore datastore, Backend backend) {
        MultiNodeCluster c = new MultiNodeCluster(datastore, backend);
        String pool = "e2e-matrix-pool";
        List<String> blocks = List.of("10.70.0.0/26", "10.70.1.0/26");
        try {
            c.pool(EncapsulationMode.Always, EncapsulationMode.Never);
            Writes.upsert(c.store(), new IPPool(ObjectMeta.named(pool), new IPPoolSpec("10.70.0.0/16",
                    EncapsulationMode.Always, EncapsulationMode.Never, false, false, null, 26, null, null, null, null)));
            List<Host> hosts = new java.util.ArrayList<>();
            for (int i = 0; i < 2; i++) {
                MultiNodeCluster.ClusterNode n = c.addNode("e2e-node-" + (char) ('a' + i), i + 1, 0);
                Writes.upsert(c.store(), new IPAMBlock(ObjectMeta.named(IpamNames.blockName(Cidr.parse(blocks.get(i)))),
                        MultiNodeCluster.emptyBlock(blocks.get(i), n.name())));
                hosts.add(new Host(n.name(), n.netns()));
            }
            return new PodHosts() {
                @Override
                public List<Host> hosts() {
                    return List.copyOf(hosts);
                }

                @Override
                public Host hostFor(String namespace) {
                    return namespace.equals("prod") ? hosts.get(0) : hosts.get(1);
                }

                @Override
                public void close() {
                    try {
                        for (String b : blocks) {
                            c.store().delete(ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(Cidr.parse(b))),
                                    null);
                        }
                        c.store().delete(ResourceKey.of(ResourceKind.IP_POOL, pool), null);
                    } catch (RuntimeException e) {
                        // best effort: absent, or the datastore is gone already
                    }
                    c.close();
                }
            };
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }
}
