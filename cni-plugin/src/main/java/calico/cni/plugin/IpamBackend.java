package calico.cni.plugin;

import calico.cni.config.NetConf;
import calico.cni.spec.CniRequest;
import calico.dataplane.netlink.IpPrefix;
import java.util.List;

/** Where a workload's addresses come from: Calico IPAM, or a delegated IPAM plugin. */
public interface IpamBackend {

    /**
     * Assigns the workload's addresses (as /32 or /128). All or nothing.
     *
     * @param namespaceLabels the labels of the pod's namespace (for pools' {@code namespaceSelector}),
     *                        or null when not known (not a Kubernetes pod, or no API server to ask)
     */
    List<IpPrefix> assign(NetConf conf, CniRequest req, WorkloadId id, java.util.Map<String, String> namespaceLabels);

    /** Releases everything the workload's handle holds; a no-op when it holds nothing. */
    void release(NetConf conf, CniRequest req, WorkloadId id);
}
