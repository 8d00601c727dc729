package calico.confd.model;

import calico.api.model.BGPConfiguration;
import calico.api.model.BGPFilter;
import calico.api.model.BGPPeer;
import calico.api.model.BlockAffinity;
import calico.api.model.IPPool;
import calico.api.model.Node;
import calico.api.model.WorkloadEndpoint;
import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything confd renders from, at one moment: the BGP resources by name (sorted, so that the
 * rendered config does not depend on the order updates arrived in). {@code workloads} are this
 * node's workload endpoints by {@code namespace/name}; {@code services} the Kubernetes Services
 * by {@code namespace/name} when confd watches them (the kubernetes datastore), else empty.
 */
public record BgpView(SortedMap<String, Node> nodes, SortedMap<String, BGPPeer> peers,
                      SortedMap<String, BGPFilter> filters, SortedMap<String, BGPConfiguration> configs,
                      SortedMap<String, IPPool> pools, SortedMap<String, BlockAffinity> affinities,
                      SortedMap<String, WorkloadEndpoint> workloads, SortedMap<String, ServiceInfo> services) {

    public BgpView {
        nodes = copy(nodes);
        peers = copy(peers);
        filters = copy(filters);
        configs = copy(configs);
        pools = copy(pools);
        affinities = copy(affinities);
        workloads = copy(workloads);
        services = copy(services);
    }

    private static <T> SortedMap<String, T> copy(Map<String, T> m) {
        return m == null ? new TreeMap<>() : Collections.unmodifiableSortedMap(new TreeMap<>(m));
    }

    public static BgpView empty() {
        return new BgpView(null, null, null, null, null, null, null, null);
    }
}
