package calico.cni.plugin;

import calico.api.net.Cidr;
import calico.cni.config.NetConf;
import calico.cni.spec.CniError;
import calico.cni.spec.CniRequest;
import calico.dataplane.netlink.IpPrefix;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.ipam.AssignResult;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** {@code calico-ipam}: addresses from Calico's block IPAM, owned by the handle {@code k8s-pod-network.<id>}. */
public final class CalicoIpam implements IpamBackend {
    private final IpamClient ipam;

    public CalicoIpam(IpamClient ipam) {
        this.ipam = ipam;
    }

    @Override
    public List<IpPrefix> assign(NetConf conf, CniRequest req, WorkloadId id, Map<String, String> namespaceLabels) {
        NetConf.Ipam c = conf.ipam();
        Map<String, String> attrs = new HashMap<>();
        attrs.put("node", id.node());
        attrs.put("timestamp", Instant.now().toString());
        if (id.kubernetes()) {
            attrs.put("namespace", id.namespace());
            attrs.put("pod", id.pod());
        }
        AssignResult r;
        try {
            r = ipam.autoAssign(new AutoAssignRequest(id.handleId(), id.node(), c.assignIpv4() ? 1 : 0,
                    c.assignIpv6() ? 1 : 0, c.ipv4Pools(), c.ipv6Pools(), attrs, IntendedUse.WORKLOAD, namespaceLabels));
        } catch (IpamException e) {
            throw new CniError(CniError.IPAM_FAILURE, "calico-ipam: " + e.getMessage());
        } catch (DatastoreException e) {
            throw Datastores.error("calico-ipam", e);
        }
        List<IpPrefix> out = new ArrayList<>();
        for (Cidr ip : r.ipv4()) {
            out.add(IpPrefix.parse(ip.toString()));
        }
        for (Cidr ip : r.ipv6()) {
            out.add(IpPrefix.parse(ip.toString()));
        }
        return out;
    }

    @Override
    public void release(NetConf conf, CniRequest req, WorkloadId id) {
        try {
            ipam.releaseByHandle(id.handleId());
        } catch (IpamException e) {
            throw new CniError(CniError.IPAM_FAILURE, "calico-ipam release " + id.handleId() + ": " + e.getMessage());
        } catch (DatastoreException e) {
            throw Datastores.error("calico-ipam release", e);
        }
    }
}
