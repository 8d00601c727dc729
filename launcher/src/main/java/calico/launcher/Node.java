package calico.launcher;

/**
 * One node of the topology: its Calico/Kubernetes name ({@code node-<index>}), its network
 * namespace, and its address on the underlay ({@code eth0} inside the namespace).
 */
record Node(int index, String name, String namespace, String address, int prefixLength) {

    /** The node's interface on the underlay, inside its namespace (what start-up autodetects). */
    static final String UPLINK = "eth0";

    /** {@return the address with its prefix}, as {@code ip addr} and the Node resource write it. */
    String cidr() {
        return address + "/" + prefixLength;
    }
}
