package calico.ctl;

import calico.api.model.ClusterInformation;
import calico.api.model.IPAMHandle;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.ipam.IpamAllocation;
import calico.libcalico.ipam.IpamClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Leaked addresses, as Calico's {@code ipam check --output} reports them and {@code ipam release --from-report}
 * frees them. An allocation's owner comes from its attributes: a pod ({@code namespace}, {@code pod}) owns it
 * while its workload endpoint exists, a node ({@code node} with a tunnel {@code type}) while the node exists;
 * an allocation that names neither (an address given by hand, a Service's) is in use by an unknown owner and
 * never leaked. A handle is leaked when every address it holds is. The report records the cluster and the
 * revision of its ClusterInformation, so that a release acts only on a report of this cluster made while the
 * datastore was locked and nothing has changed it since.
 */
final class IpamLeaks {

    private static final Set<String> TUNNEL_TYPES = Set.of("ipipTunnelAddress", "vxlanTunnelAddress",
            "vxlanV6TunnelAddress", "wireguardTunnelAddress", "wireguardV6TunnelAddress");
    private static final ResourceKey CLUSTER_INFO = ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, null, "default");

    /** One allocation with the owners found for it (none: leaked; null: an owner we cannot judge). */
    record Owned(IpamAllocation allocation, List<String> owners) {
        boolean leaked() {
            return owners != null && owners.isEmpty();
        }
    }

    private final Datastore store;
    private final IpamClient ipam;
    private final ObjectMapper json;

    IpamLeaks(Datastore store, IpamClient ipam, ObjectMapper json) {
        this.store = store;
        this.ipam = ipam;
        this.json = json;
    }

    /** {@return every allocation with its owners}. */
    List<Owned> owned() {
        Set<String> workloads = new HashSet<>();
        for (Resource r : store.list(ResourceKind.WORKLOAD_ENDPOINT).items()) {
            WorkloadEndpoint w = (WorkloadEndpoint) r;
            if (w.spec().pod() != null) {
                workloads.add(w.metadata().namespace() + "/" + w.spec().pod());
            }
        }
        Set<String> nodes = new HashSet<>();
        store.list(ResourceKind.NODE).items().forEach(n -> nodes.add(n.metadata().name()));
        List<Owned> out = new ArrayList<>();
        for (IpamAllocation a : ipam.allocations()) {
            Map<String, String> at = a.attributes();
            List<String> owners;
            if (at.containsKey("pod") && at.containsKey("namespace")) {
                String w = at.get("namespace") + "/" + at.get("pod");
                owners = workloads.contains(w) ? List.of("Workload(" + w + ")") : List.of();
            } else if (at.containsKey("type") && TUNNEL_TYPES.contains(at.get("type")) && at.containsKey("node")) {
                owners = nodes.contains(at.get("node")) ? List.of("Node(" + at.get("node") + ")") : List.of();
            } else {
                owners = null;
            }
            out.add(new Owned(a, owners));
        }
        return out;
    }

    /** {@return the handles whose every address is leaked}, by ID, with the handle resources. */
    Map<String, IPAMHandle> leakedHandles(List<Owned> owned) {
        Map<String, Boolean> allLeaked = new TreeMap<>();
        for (Owned o : owned) {
            if (o.allocation().handleId() != null) {
                allLeaked.merge(o.allocation().handleId(), o.leaked(), Boolean::logicalAnd);
            }
        }
        Map<String, IPAMHandle> handles = handlesById();
        Map<String, IPAMHandle> out = new LinkedHashMap<>();
        allLeaked.forEach((id, leaked) -> {
            if (leaked && handles.containsKey(id)) {
                out.put(id, handles.get(id));
            }
        });
        return out;
    }

    /** {@return the report Calico's {@code ipam check -o FILE} writes} (its field names). */
    ObjectNode report(List<Owned> owned) {
        ObjectNode r = json.createObjectNode();
        r.put("version", CalicoCtl.VERSION);
        Optional<ClusterInformation> info = store.get(CLUSTER_INFO).map(ClusterInformation.class::cast);
        r.put("clusterGUID", info.map(i -> i.spec().clusterGUID()).orElse(""));
        r.put("datastoreLocked", DatastoreMigration.locked(store));
        r.put("clusterInformationRevision", info.map(i -> i.metadata().resourceVersion()).orElse(""));
        r.put("clusterType", info.map(i -> i.spec().clusterType()).orElse(""));
        ObjectNode allocations = r.putObject("allocations");
        for (Owned o : owned) {
            IpamAllocation a = o.allocation();
            ObjectNode e = json.createObjectNode();
            e.put("ip", a.ip().toString());
            putIf(e, "handle", a.handleId());
            putIf(e, "pod", a.attributes().get("pod"));
            putIf(e, "namespace", a.attributes().get("namespace"));
            putIf(e, "node", a.attributes().getOrDefault("node", a.blockNode()));
            putIf(e, "type", a.attributes().get("type"));
            e.put("inUse", true);
            if (o.owners() == null) {
                e.putNull("owners");
            } else {
                ArrayNode owners = e.putArray("owners");
                o.owners().forEach(owners::add);
            }
            ((ArrayNode) allocations.withArray(a.ip().toString())).add(e);
        }
        Map<String, IPAMHandle> leaked = leakedHandles(owned);
        if (!leaked.isEmpty()) {
            ArrayNode handles = r.putArray("leakedHandles");
            leaked.forEach((id, h) -> {
                ObjectNode e = handles.addObject();
                e.put("ID", id);
                putIf(e, "UID", h.metadata().uid());
                e.put("Revision", h.metadata().resourceVersion());
            });
        }
        return r;
    }

    /**
     * Frees the handles every report calls leaked (at the same revision), when the reports are of this cluster,
     * one is current and the datastore is locked ({@code force} lets a version mismatch or an unlocked datastore
     * pass, with a warning). {@return the exit status}
     */
    int release(Map<String, JsonNode> reports, boolean force, PrintStream out, PrintStream err) {
        Optional<ClusterInformation> info = store.get(CLUSTER_INFO).map(ClusterInformation.class::cast);
        String guid = info.map(i -> i.spec().clusterGUID()).orElse("");
        String revision = info.map(i -> i.metadata().resourceVersion()).orElse("");
        boolean current = false;
        for (var e : reports.entrySet()) {
            JsonNode r = e.getValue();
            if (!guid.equals(r.path("clusterGUID").asText())) {
                err.println("calicoctl: Cluster does not match the provided report (" + e.getKey()
                        + "): mismatched cluster GUID. Refusing to release.");
                return 1;
            }
            if (!CalicoCtl.VERSION.equals(r.path("version").asText())) {
                if (!force) {
                    err.println("calicoctl: The provided report (" + e.getKey() + ") was produced using a different"
                            + " version (" + r.path("version").asText() + ") of calicoctl. Refusing to release.");
                    return 1;
                }
                out.println("WARNING: Report was produced using a different version of calicoctl. Ignoring due to"
                        + " --force option");
            }
            current |= revision.equals(r.path("clusterInformationRevision").asText());
        }
        if (!current) {
            err.println("calicoctl: The provided reports are all stale - at least one should be up-to-date. Please"
                    + " generate a new report while the data store is locked and try again.");
            return 1;
        }
        if (!DatastoreMigration.locked(store)) {
            if (!force) {
                err.println("calicoctl: Data store is not locked. Either lock the data store, or re-run with --force.");
                return 1;
            }
            out.println("WARNING: Data store is not locked. Ignoring due to --force option");
        }
        Map<String, String> handles = null; // ID -> revision, in every report alike
        for (JsonNode r : reports.values()) {
            Map<String, String> these = new LinkedHashMap<>();
            r.path("leakedHandles").forEach(h -> these.put(h.path("ID").asText(), h.path("Revision").asText()));
            if (handles == null) {
                handles = these;
            } else {
                handles.entrySet().removeIf(h -> !h.getValue().equals(these.get(h.getKey())));
            }
        }
        if (handles == null || handles.isEmpty()) {
            out.println("Report didn't contain any handles to clean up.");
            return 0;
        }
        out.println("Deleting " + handles.size() + " handles...");
        out.println("Key: '.' = Deleted OK; 'x' = skip, handle missing/changed.");
        Map<String, IPAMHandle> now = handlesById();
        int released = 0;
        int skipped = 0;
        StringBuilder marks = new StringBuilder();
        for (var h : handles.entrySet()) {
            IPAMHandle stored = now.get(h.getKey());
            if (stored == null || !h.getValue().equals(stored.metadata().resourceVersion())) {
                skipped++;
                marks.append('x');
                continue;
            }
            ipam.releaseByHandle(h.getKey());
            released++;
            marks.append('.');
        }
        out.println(marks);
        out.println("Released " + released + " handles; " + skipped + " skipped; 0 errors.");
        out.println("You may now unlock the data store.");
        return 0;
    }

    private Map<String, IPAMHandle> handlesById() {
        Map<String, IPAMHandle> out = new TreeMap<>();
        for (Resource r : store.list(ResourceKind.IPAM_HANDLE).items()) {
            IPAMHandle h = (IPAMHandle) r;
            out.put(h.spec().handleID(), h);
        }
        return out;
    }

    private static void putIf(ObjectNode e, String field, String value) {
        if (value != null && !value.isEmpty()) {
            e.put(field, value);
        }
    }
}
