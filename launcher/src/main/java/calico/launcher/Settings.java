package calico.launcher;

import java.nio.file.Path;

/**
 * What {@code ./calico} tells the launcher: where its state lives, where the built jars are,
 * the topology, and the cluster-wide services the nodes connect to. The datastore's own
 * variables ({@code DATASTORE_TYPE}, {@code ETCD_ENDPOINTS}, {@code KUBECONFIG},
 * {@code CALICO_APISERVER_*}) come through the environment and pass to every node's process.
 *
 * @param runDir       {@code .calico-run}: pid files, logs, {@code netns/} records, {@code nodes/<node>/}
 * @param root         the repository (the jars under {@code <module>/target/})
 * @param kubeconfig   the cluster's admin kubeconfig: the CNI plugin reads pods' labels through it
 * @param typha        typha's {@code host:port}, for felix and confd
 * @param goldmane     goldmane's {@code host:port}, for felix's flow logs
 * @param jvmFlags     each JVM's options ({@code --jvm-flags}, default {@code scripts/lib/jvm-flags.conf})
 */
record Settings(Path runDir, Path root, String prefix, int nodes, Topology.Underlay underlay, Encapsulation encapsulation,
                boolean wireguard, String dataplane, Path kubeconfig, String typha, String goldmane, Ports ports,
                String poolCidr, JvmFlags jvmFlags) {

    Settings {
        if (!dataplane.equals("nftables") && !dataplane.equals("iptables")) {
            throw new IllegalArgumentException("--dataplane: '" + dataplane + "' is not nftables or iptables");
        }
        new Topology(prefix, nodes, underlay, runDir.resolve("netns"));
        for (int i = 1; i <= nodes; i++) {
            ports.forNode(i);
        }
    }

    Topology topology() {
        return new Topology(prefix, nodes, underlay, runDir.resolve("netns"));
    }

    /**
     * {@return these settings for {@code nodeCount} nodes with the encapsulation that runs every
     * service (confd and BIRD too)}: what {@code down} stops, whatever the {@code up} was told.
     */
    Settings withEveryService(int nodeCount) {
        return new Settings(runDir, root, prefix, nodeCount, underlay, Encapsulation.NONE, wireguard, dataplane, kubeconfig,
                typha, goldmane, ports, poolCidr, jvmFlags);
    }

    Path nodeDir(Node node) {
        return runDir.resolve("nodes").resolve(node.name());
    }

    Path jar(String module, String file) {
        return root.resolve(module).resolve("target").resolve(file);
    }
}
