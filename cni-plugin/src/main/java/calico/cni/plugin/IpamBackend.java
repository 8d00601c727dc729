package calico.cni.plugin;

import calico.cni.config.NetConf;
import calico.cni.spec.CniRequest;
import calico.dataplane.netlink.IpPrefix;
import java.util.List;

/** Where a workload's addresses come from: Calico IPAM, or a delegated IPAM plugin. */
public interface IpamBackend {

    /** Assigns the workload's addresses (as /32 or /128). All or nothing. */
    List<IpPrefix> assign(NetConf conf, CniRequest req, WorkloadId id);

    /** Releases everything the workload's handle holds; a no-op when it holds nothing. */
    void release(NetConf conf, CniRequest req, WorkloadId id);
}
