package calico.libcalico.ipam;

import calico.api.model.IPAMBlock;
import calico.api.model.IPAMBlockSpec;
import calico.api.model.IPAMBlockSpec.AllocationAttribute;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A working copy of one {@link IPAMBlock}: allocate and release ordinals in memory, then write
 * it back with {@link #toResource()} (which keeps the resourceVersion it was read at, so the
 * write is a compare-and-swap). Not thread-safe; one per attempt.
 */
final class AllocationBlock {

    private final ObjectMeta meta;
    private final Cidr cidr;
    private String affinity;
    private final String affinityClaimTime;
    private final List<Integer> allocations;
    private final List<Integer> unallocated;
    private final List<AllocationAttribute> attributes;
    private long sequenceNumber;
    private final Map<String, Long> sequenceForAllocation;

    private AllocationBlock(ObjectMeta meta, Cidr cidr, String affinity, String affinityClaimTime,
                            List<Integer> allocations, List<Integer> unallocated, List<AllocationAttribute> attributes,
                            long sequenceNumber, Map<String, Long> sequenceForAllocation) {
        this.meta = meta;
        this.cidr = cidr;
        this.affinity = affinity;
        this.affinityClaimTime = affinityClaimTime;
        this.allocations = new ArrayList<>(allocations);
        this.unallocated = new ArrayList<>(unallocated);
        this.attributes = new ArrayList<>(attributes);
        this.sequenceNumber = sequenceNumber;
        this.sequenceForAllocation = new HashMap<>(sequenceForAllocation);
    }

    static AllocationBlock of(IPAMBlock b) {
        IPAMBlockSpec s = b.spec();
        return new AllocationBlock(b.metadata(), Cidr.parse(s.cidr()), s.affinity(), s.affinityClaimTime(),
                s.allocations(), s.unallocated(), s.attributes(), s.sequenceNumber() == null ? 0 : s.sequenceNumber(),
                s.sequenceNumberForAllocation());
    }

    /** {@return a new, empty block}, affine to {@code node} when it is not null. */
    static AllocationBlock empty(Cidr cidr, String node, String claimTime) {
        int size = Addresses.size(cidr).intValueExact();
        List<Integer> allocations = new ArrayList<>(size);
        List<Integer> free = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            allocations.add(null);
            free.add(i);
        }
        return new AllocationBlock(ObjectMeta.named(IpamNames.blockName(cidr)), cidr,
                node == null ? null : IPAMBlockSpec.HOST_AFFINITY_PREFIX + node, node == null ? null : claimTime,
                allocations, free, List.of(), 0, Map.of());
    }

    Cidr cidr() {
        return cidr;
    }

    /** {@return the affine node}, or null. */
    String node() {
        return affinity != null && affinity.startsWith(IPAMBlockSpec.HOST_AFFINITY_PREFIX)
                ? affinity.substring(IPAMBlockSpec.HOST_AFFINITY_PREFIX.length()) : null;
    }

    boolean affineTo(String node) {
        return Objects.equals(IPAMBlockSpec.HOST_AFFINITY_PREFIX + node, affinity);
    }

    void clearAffinity() {
        affinity = null;
    }

    int size() {
        return allocations.size();
    }

    int inUse() {
        int n = 0;
        for (Integer a : allocations) {
            if (a != null) {
                n++;
            }
        }
        return n;
    }

    boolean isEmpty() {
        return inUse() == 0;
    }

    IpAddress address(int ordinal) {
        return Addresses.add(cidr, BigInteger.valueOf(ordinal));
    }

    /** {@return the ordinal of {@code ip}}, or -1 when the block does not contain it. */
    int ordinal(IpAddress ip) {
        return cidr.contains(ip) ? Addresses.offset(cidr, ip).intValueExact() : -1;
    }

    /** {@return how many free addresses {@link #allocate} could hand out} */
    int freeCount(Predicate<IpAddress> reserved) {
        int n = 0;
        for (int o : unallocated) {
            if (!reserved.test(address(o))) {
                n++;
            }
        }
        return n;
    }

    /**
     * Takes up to {@code num} free addresses, in the block's free order, skipping reserved ones,
     * for one owner. {@return the addresses taken} (empty when none is free)
     */
    List<IpAddress> allocate(int num, String handleId, Map<String, String> attrs, Predicate<IpAddress> reserved) {
        List<Integer> picked = new ArrayList<>();
        for (int o : unallocated) {
            if (picked.size() == num) {
                break;
            }
            if (!reserved.test(address(o))) {
                picked.add(o);
            }
        }
        if (picked.isEmpty()) {
            return List.of();
        }
        int attr = attributeIndex(handleId, attrs);
        List<IpAddress> out = new ArrayList<>(picked.size());
        unallocated.removeAll(picked);
        for (int o : picked) {
            allocations.set(o, attr);
            sequenceForAllocation.put(Integer.toString(o), sequenceNumber);
            out.add(address(o));
        }
        return out;
    }

    /** Takes one specific free ordinal; false when it is allocated. */
    boolean assign(int ordinal, String handleId, Map<String, String> attrs) {
        if (allocations.get(ordinal) != null) {
            return false;
        }
        allocations.set(ordinal, attributeIndex(handleId, attrs));
        unallocated.remove(Integer.valueOf(ordinal));
        sequenceForAllocation.put(Integer.toString(ordinal), sequenceNumber);
        return true;
    }

    /** {@return the handle owning the ordinal}, or null when it is free (or has no handle). */
    String handleAt(int ordinal) {
        Integer a = allocations.get(ordinal);
        return a == null ? null : attributes.get(a).handleId();
    }

    boolean allocated(int ordinal) {
        return allocations.get(ordinal) != null;
    }

    /** {@return the ordinals allocated to {@code handleId}} */
    List<Integer> ordinalsOf(String handleId) {
        List<Integer> out = new ArrayList<>();
        for (int o = 0; o < allocations.size(); o++) {
            Integer a = allocations.get(o);
            if (a != null && Objects.equals(attributes.get(a).handleId(), handleId)) {
                out.add(o);
            }
        }
        return out;
    }

    /** {@return allocated addresses per handle ID} (null handle IDs skipped) */
    /** {@return every allocated address of this block}, in address order. */
    List<IpamAllocation> allocations() {
        List<IpamAllocation> out = new ArrayList<>();
        for (int o = 0; o < allocations.size(); o++) {
            Integer a = allocations.get(o);
            if (a != null) {
                var attr = attributes.get(a);
                out.add(new IpamAllocation(address(o), cidr(), node(), attr.handleId(), attr.secondary()));
            }
        }
        return out;
    }

    Map<String, Integer> countsByHandle() {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Integer a : allocations) {
            if (a != null && attributes.get(a).handleId() != null) {
                out.merge(attributes.get(a).handleId(), 1, Integer::sum);
            }
        }
        return out;
    }

    /**
     * Frees the ordinals (the allocated ones; others are ignored) and drops attributes nothing
     * points at any more. {@return how many were freed per handle ID}
     */
    Map<String, Integer> release(Collection<Integer> ordinals) {
        Map<String, Integer> freed = new LinkedHashMap<>();
        for (int o : ordinals) {
            Integer a = allocations.get(o);
            if (a == null) {
                continue;
            }
            String h = attributes.get(a).handleId();
            freed.merge(h == null ? "" : h, 1, Integer::sum);
            allocations.set(o, null);
            unallocated.add(o);
            sequenceForAllocation.remove(Integer.toString(o));
        }
        compactAttributes();
        return freed;
    }

    /** {@return the block as a resource to write}: sequence number advanced, resourceVersion kept for the CAS. */
    IPAMBlock toResource() {
        sequenceNumber++;
        return new IPAMBlock(meta, new IPAMBlockSpec(cidr.toString(), affinity, affinityClaimTime, allocations,
                unallocated, attributes, sequenceNumber, sequenceForAllocation, null, null));
    }

    /** Reuses an identical attribute (same owner, same attributes) so repeated requests do not grow the list. */
    private int attributeIndex(String handleId, Map<String, String> attrs) {
        AllocationAttribute wanted = new AllocationAttribute(handleId, attrs);
        int i = attributes.indexOf(wanted);
        if (i >= 0) {
            return i;
        }
        attributes.add(wanted);
        return attributes.size() - 1;
    }

    private void compactAttributes() {
        int[] remap = new int[attributes.size()];
        boolean[] used = new boolean[attributes.size()];
        for (Integer a : allocations) {
            if (a != null) {
                used[a] = true;
            }
        }
        List<AllocationAttribute> kept = new ArrayList<>();
        for (int i = 0; i < attributes.size(); i++) {
            if (used[i]) {
                remap[i] = kept.size();
                kept.add(attributes.get(i));
            }
        }
        if (kept.size() == attributes.size()) {
            return;
        }
        for (int o = 0; o < allocations.size(); o++) {
            Integer a = allocations.get(o);
            if (a != null) {
                allocations.set(o, remap[a]);
            }
        }
        attributes.clear();
        attributes.addAll(kept);
    }
}
