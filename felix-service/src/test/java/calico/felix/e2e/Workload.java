package calico.felix.e2e;

import calico.dataplane.testing.NetNs;

/**
 * One pod of the test cluster: its Kubernetes namespace and name, its address, the host-side
 * interface name the CNI plugin would give it, and the network namespace standing in for it.
 */
record Workload(String namespace, String pod, String ip, String interfaceName, NetNs netns) {

    @Override
    public String toString() {
        return namespace + "/" + pod;
    }
}
