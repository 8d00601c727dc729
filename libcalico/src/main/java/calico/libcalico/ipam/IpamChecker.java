package calico.libcalico.ipam;

import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.IPAMHandle;
import calico.api.model.IpamNames;
import calico.api.model.Resource;
import calico.api.net.Cidr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Cross-checks blocks, handles and affinities read from the datastore (a pure function of them). */
final class IpamChecker {

    private IpamChecker() {
    }

    /**
     * Checks the IPAM state for inconsistencies (what {@code calicoctl ipam check} prints):
     * handle counts against the blocks, allocations whose handle is gone, confirmed affinities
     * without their block, and affine blocks without their affinity.
     */
    static IpamCheckReport check(List<AllocationBlock> blocks, List<Resource> handleList, List<Resource> affinityList) {
        Map<String, IPAMHandle> handlesById = new TreeMap<>();
        handleList.forEach(r -> handlesById.put(((IPAMHandle) r).spec().handleID(), (IPAMHandle) r));
        Map<String, BlockAffinity> affinities = new HashMap<>();
        affinityList.forEach(r -> affinities.put(r.metadata().name(), (BlockAffinity) r));
        List<String> problems = new ArrayList<>();
        int allocations = 0;
        Map<String, Map<String, Integer>> actual = new HashMap<>();
        for (AllocationBlock b : blocks) {
            allocations += b.inUse();
            Map<String, Integer> counts = b.countsByHandle();
            counts.forEach((h, n) -> actual.computeIfAbsent(h, x -> new HashMap<>()).put(b.cidr().toString(), n));
            for (String h : new TreeMap<>(counts).keySet()) {
                if (!handlesById.containsKey(h)) {
                    problems.add("block " + b.cidr() + ": " + counts.get(h) + " address(es) of handle " + h
                            + ", which does not exist");
                }
            }
            if (b.node() != null) {
                BlockAffinity a = affinities.get(IpamNames.affinityName(b.node(), b.cidr()));
                if (a == null) {
                    problems.add("block " + b.cidr() + ": affine to " + b.node() + " but that node has no affinity for it");
                }
            }
        }
        handlesById.forEach((id, h) -> {
            Map<String, Integer> real = actual.getOrDefault(id, Map.of());
            new TreeMap<>(h.spec().block()).forEach((block, n) -> {
                int has = real.getOrDefault(block, 0);
                if (has != n) {
                    problems.add("handle " + id + ": records " + n + " address(es) in block " + block + ", the block holds " + has);
                }
            });
            real.forEach((block, n) -> {
                if (!h.spec().block().containsKey(block)) {
                    problems.add("handle " + id + ": does not record block " + block + ", which holds " + n + " of its address(es)");
                }
            });
        });
        Map<Cidr, AllocationBlock> byCidr = new HashMap<>();
        blocks.forEach(b -> byCidr.put(b.cidr(), b));
        new TreeMap<>(affinities).forEach((name, a) -> {
            if (!BlockAffinitySpec.CONFIRMED.equals(a.spec().state())) {
                return;
            }
            AllocationBlock b = byCidr.get(Cidr.parse(a.spec().cidr()));
            if (b == null || !b.affineTo(a.spec().node())) {
                problems.add("affinity " + name + ": confirmed, but block " + a.spec().cidr()
                        + (b == null ? " does not exist" : " is affine to " + b.node()));
            }
        });
        return new IpamCheckReport(blocks.size(), handlesById.size(), allocations, problems);
    }

}
