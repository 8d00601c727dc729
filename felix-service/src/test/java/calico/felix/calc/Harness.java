package calico.felix.calc;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A graph for one node, its emitted stream, and the model dataplane that stream builds. */
final class Harness {

    final DataplaneState state = new DataplaneState();
    final List<List<DataplaneUpdate>> batches = new ArrayList<>();
    final CalculationGraph graph;
    private long revision;

    Harness(String hostname) {
        this(hostname, true);
    }

    /** @param servicesPresented whether the datastore presents Services (false: etcd) */
    Harness(String hostname, boolean servicesPresented) {
        graph = CalculationGraph.create(hostname, java.util.Map.of(), batch -> {
            batches.add(batch);
            state.apply(batch);
        }, new calico.api.k8s.KubernetesConverter(), servicesPresented);
    }

    Harness put(Resource... resources) {
        graph.onUpdates(Arrays.stream(resources).map(r -> Update.of(UpdateType.NEW, r, ++revision)).toList());
        return this;
    }

    Harness delete(ResourceKey... keys) {
        graph.onUpdates(Arrays.stream(keys).map(k -> Update.deleted(k, ++revision)).toList());
        return this;
    }

    Harness inSync() {
        graph.onStatus(SyncerStatus.IN_SYNC);
        return this;
    }

    /** {@return the last emitted batch} */
    List<DataplaneUpdate> last() {
        return batches.isEmpty() ? List.of() : batches.get(batches.size() - 1);
    }

    /** The last batch without the infrastructure stages' output (config, hosts, pools, routes). */
    List<DataplaneUpdate> lastPolicyUpdates() {
        return last().stream().filter(u -> !(u instanceof DataplaneUpdate.ConfigUpdate
                || u instanceof DataplaneUpdate.HostMetadataUpdate || u instanceof DataplaneUpdate.HostMetadataRemove
                || u instanceof DataplaneUpdate.IpPoolUpdate || u instanceof DataplaneUpdate.IpPoolRemove
                || u instanceof DataplaneUpdate.RouteUpdate || u instanceof DataplaneUpdate.RouteRemove)).toList();
    }

    DataplaneUpdate.WorkloadEndpointUpdate wep(String id) {
        return state.workloads.get(id);
    }

    /** {@return the policy names of each tier of a workload's list, e.g. ["t1:[a, b]", "t2:[]"]} */
    List<String> tiers(String wepId, boolean ingress) {
        DataplaneUpdate.WorkloadEndpointUpdate w = wep(wepId);
        return (ingress ? w.ingress() : w.egress()).stream()
                .map(t -> t.tier() + ":" + t.defaultAction() + ":" + t.policies().stream()
                        .map(p -> (p.staged() ? "staged:" : "") + p.name()).toList())
                .toList();
    }
}
