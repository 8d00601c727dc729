package calico.libcalico.ipam;

import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMHandle;
import calico.api.model.IPPool;
import calico.api.model.IPReservation;
import calico.api.model.IpamNames;
import calico.api.model.Node;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.math.BigInteger;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Calico IPAM over a {@link Datastore}: addresses come from blocks of an IP pool that are affine
 * to a node; a node claims a new block when its blocks are full and borrows from other nodes'
 * blocks only when the pool has no free block and {@code strictAffinity} is off. Handles record
 * which owner holds which addresses.
 *
 * <p>Every change is a compare-and-swap on the resourceVersion it was computed from, retried on
 * conflict (at most {@link IpamOptions#maxRetries()} times per step), so any number of clients
 * on any number of nodes and processes never hand out one address twice. Write order (see
 * {@code libcalico/design/ipam.md}): handle before block on assignment, block before handle on
 * release; affinity (pending) → block → affinity (confirmed) on a claim. A crash between two
 * writes therefore leaves at worst a handle count that is too high or a pending affinity, which
 * the GC primitives here find and repair; never an address held by nobody's handle.
 *
 * <p>Thread-safe (it holds no state besides the datastore). Datastore failures other than
 * conflicts pass through as {@link DatastoreException}s.
 */
public final class IpamClient {

    /** A handle becomes a resource name in lower case: DNS-subdomain characters only. */
    private static final Pattern HANDLE = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?");

    private final Datastore ds;
    private final IpamOptions options;
    private final Handles handles;
    private final Blocks blocks;

    public IpamClient(Datastore datastore, IpamOptions options) {
        this.ds = Objects.requireNonNull(datastore, "datastore");
        this.options = Objects.requireNonNull(options, "options");
        this.handles = new Handles(datastore, options.maxRetries());
        this.blocks = new Blocks(datastore, options.maxRetries(), options.clock());
    }

    // ------------------------------------------------------------------ assignment

    /**
     * Assigns {@code num4} IPv4 and {@code num6} IPv6 addresses to the request's handle. All or
     * nothing: when not every address can be found, those already taken are released and
     * {@link IpamException.PoolExhausted} is thrown.
     */
    public AssignResult autoAssign(AutoAssignRequest r) {
        checkHandle(r.handleId(), "handleId");
        checkHostname(r.hostname());
        if (r.num4() < 0) {
            throw new IpamException.InvalidRequest("num4", "must not be negative, got " + r.num4());
        }
        if (r.num6() < 0) {
            throw new IpamException.InvalidRequest("num6", "must not be negative, got " + r.num6());
        }
        if (r.num4() == 0 && r.num6() == 0) {
            throw new IpamException.InvalidRequest("num4", "num4 and num6 are both 0: nothing to assign");
        }
        checkVersions(r.ipv4Pools(), 4, "ipv4Pools");
        checkVersions(r.ipv6Pools(), 6, "ipv6Pools");
        Context ctx = context(r.hostname());
        List<IpAddress> got4 = new ArrayList<>();
        List<IpAddress> got6 = new ArrayList<>();
        try {
            if (r.num4() > 0) {
                assignVersion(4, r.num4(), r.ipv4Pools(), "ipv4Pools", r, ctx, got4);
            }
            if (r.num6() > 0) {
                assignVersion(6, r.num6(), r.ipv6Pools(), "ipv6Pools", r, ctx, got6);
            }
        } catch (RuntimeException e) {
            List<IpAddress> taken = new ArrayList<>(got4);
            taken.addAll(got6);
            if (!taken.isEmpty()) {
                try {
                    releaseIps(taken);
                } catch (RuntimeException rollback) {
                    e.addSuppressed(rollback);
                }
            }
            throw e;
        }
        return new AssignResult(got4.stream().map(Cidr::of).toList(), got6.stream().map(Cidr::of).toList());
    }

    /**
     * Assigns one specific address to the request's handle. The address must lie in an enabled
     * pool; its block is claimed for the request's node if it does not exist yet.
     *
     * @throws IpamException.AlreadyAllocated when it is allocated already
     * @throws IpamException.NoSuchPool       when no enabled pool contains it
     */
    public void assignIp(AssignIpRequest r) {
        checkHandle(r.handleId(), "handleId");
        checkHostname(r.hostname());
        if (r.ip() == null) {
            throw new IpamException.InvalidRequest("ip", "is required");
        }
        Pool pool = pools().stream().filter(p -> !p.disabled() && p.cidr().contains(r.ip())).findFirst()
                .orElseThrow(() -> new IpamException.NoSuchPool("ip", r.ip() + " is not in any enabled IP pool"));
        Cidr blockCidr = pool.blockFor(r.ip());
        for (int attempt = 0; attempt < options.maxRetries(); attempt++) {
            Optional<IPAMBlock> stored = blocks.get(blockCidr);
            if (stored.isEmpty()) {
                blocks.claim(blockCidr, r.hostname()); // won or lost, the block exists now
                continue;
            }
            AllocationBlock b = AllocationBlock.of(stored.get());
            int ordinal = b.ordinal(r.ip());
            if (!b.assign(ordinal, r.handleId(), r.attributes())) {
                throw new IpamException.AlreadyAllocated("ip", r.ip() + " is already allocated (handle "
                        + b.handleAt(ordinal) + ")");
            }
            handles.increment(r.handleId(), blockCidr.toString(), 1);
            try {
                ds.update(b.toResource());
                return;
            } catch (DatastoreException.Conflict | DatastoreException.NotFound raced) {
                handles.decrement(r.handleId(), blockCidr.toString(), 1);
            }
        }
        throw contention("ip", "block " + blockCidr);
    }

    private void assignVersion(int version, int num, List<Cidr> requested, String field, AutoAssignRequest r,
                               Context ctx, List<IpAddress> out) {
        List<Pool> pools = eligiblePools(version, requested, field, r, ctx);
        Predicate<IpAddress> reserved = ctx::reserved;
        // 1. Blocks already affine to this node, pool by pool.
        for (Cidr block : blocks.affineBlocks(r.hostname(), pools)) {
            if (out.size() == num) {
                return;
            }
            out.addAll(allocateFrom(block, r.hostname(), num - out.size(), r, reserved));
        }
        // 2. Claim new blocks while allowed and while the pools have unclaimed ones.
        while (out.size() < num && ctx.autoAllocateBlocks()) {
            if (ctx.maxBlocksPerHost() > 0 && blocks.hostAffinities(r.hostname()).size() >= ctx.maxBlocksPerHost()) {
                break;
            }
            Optional<Cidr> free = blocks.unclaimed(pools, r.hostname(), ctx::whollyReserved);
            if (free.isEmpty()) {
                break;
            }
            if (blocks.claim(free.get(), r.hostname())) {
                out.addAll(allocateFrom(free.get(), r.hostname(), num - out.size(), r, reserved));
            }
        }
        // 3. Borrow from any block of the pools, only without strict affinity.
        if (out.size() < num && !ctx.strictAffinity()) {
            for (AllocationBlock b : blocks.in(pools)) {
                if (out.size() == num) {
                    break;
                }
                if (!b.affineTo(r.hostname()) && b.freeCount(reserved) > 0) {
                    out.addAll(allocateFrom(b.cidr(), null, num - out.size(), r, reserved));
                }
            }
        }
        if (out.size() < num) {
            throw new IpamException.PoolExhausted(field + ": found " + out.size() + " of " + num + " IPv" + version
                    + " address(es) for node " + r.hostname() + " in pool(s) "
                    + pools.stream().map(p -> p.cidr().toString()).toList()
                    + (ctx.strictAffinity() ? " (strictAffinity: no borrowing from other nodes' blocks)" : "")
                    + (ctx.maxBlocksPerHost() > 0 ? " (maxBlocksPerHost " + ctx.maxBlocksPerHost() + ")" : ""));
        }
    }

    /**
     * Takes up to {@code need} addresses from one block: handle first, then the block, both CAS.
     *
     * @param affineTo when not null, only while the block is still affine to this node
     */
    private List<IpAddress> allocateFrom(Cidr cidr, String affineTo, int need, AutoAssignRequest r,
                                         Predicate<IpAddress> reserved) {
        String block = cidr.toString();
        int counted = 0; // what the handle records for this call but the block does not hold (kept across conflicts)
        for (int attempt = 0; attempt < options.maxRetries(); attempt++) {
            Optional<IPAMBlock> stored = blocks.get(cidr);
            AllocationBlock b = stored.map(AllocationBlock::of).orElse(null);
            List<IpAddress> ips = b == null || (affineTo != null && !b.affineTo(affineTo)) ? List.of()
                    : b.allocate(need, r.handleId(), r.attributes(), reserved);
            // The handle is written before the block, so it never records fewer addresses than the block holds.
            if (ips.size() > counted) {
                handles.increment(r.handleId(), block, ips.size() - counted);
            } else if (ips.size() < counted) {
                handles.decrement(r.handleId(), block, counted - ips.size());
            }
            counted = ips.size();
            if (ips.isEmpty()) {
                return List.of();
            }
            try {
                ds.update(b.toResource());
                return ips;
            } catch (DatastoreException.Conflict | DatastoreException.NotFound raced) {
                // another writer won: read the block again; the handle's count stays for the retry
            }
        }
        handles.decrement(r.handleId(), block, counted);
        throw contention("handleId", "block " + cidr);
    }

    // ------------------------------------------------------------------ release

    /**
     * Releases addresses, whoever holds them. {@return the addresses that were not allocated}
     * (unknown addresses included); releasing twice is harmless.
     */
    public List<IpAddress> releaseIps(Collection<IpAddress> ips) {
        List<Pool> pools = pools();
        Map<Cidr, List<IpAddress>> byBlock = new LinkedHashMap<>();
        List<IpAddress> notAllocated = new ArrayList<>();
        List<AllocationBlock> all = null;
        for (IpAddress ip : new LinkedHashSet<>(ips)) {
            Optional<Cidr> blockCidr = pools.stream().filter(p -> p.cidr().contains(ip)).findFirst()
                    .map(p -> p.blockFor(ip)).filter(c -> blocks.get(c).isPresent());
            if (blockCidr.isEmpty()) {
                // No pool (deleted) or another block size: look through the blocks themselves.
                if (all == null) {
                    all = blocks.all();
                }
                blockCidr = all.stream().map(AllocationBlock::cidr).filter(c -> c.contains(ip)).findFirst();
            }
            if (blockCidr.isEmpty()) {
                notAllocated.add(ip);
            } else {
                byBlock.computeIfAbsent(blockCidr.get(), c -> new ArrayList<>()).add(ip);
            }
        }
        byBlock.forEach((cidr, inBlock) -> notAllocated.addAll(releaseFromBlock(cidr, inBlock)));
        Set<IpAddress> missing = new HashSet<>(notAllocated);
        return new LinkedHashSet<>(ips).stream().filter(missing::contains).toList(); // in the caller's order
    }

    private List<IpAddress> releaseFromBlock(Cidr cidr, List<IpAddress> ips) {
        for (int attempt = 0; attempt < options.maxRetries(); attempt++) {
            Optional<IPAMBlock> stored = blocks.get(cidr);
            if (stored.isEmpty()) {
                return ips;
            }
            AllocationBlock b = AllocationBlock.of(stored.get());
            List<Integer> ordinals = new ArrayList<>();
            List<IpAddress> notAllocated = new ArrayList<>();
            for (IpAddress ip : ips) {
                int o = b.ordinal(ip);
                if (b.allocated(o)) {
                    ordinals.add(o);
                } else {
                    notAllocated.add(ip);
                }
            }
            if (ordinals.isEmpty()) {
                return notAllocated;
            }
            Map<String, Integer> freed = b.release(ordinals);
            if (blocks.writeOrDelete(stored.get(), b)) {
                freed.forEach((h, n) -> {
                    if (!h.isEmpty()) {
                        handles.decrement(h, cidr.toString(), n);
                    }
                });
                return notAllocated;
            }
        }
        throw contention("ips", "block " + cidr);
    }

    /** Releases every address of a handle and the handle itself; nothing to do when it does not exist. */
    public void releaseByHandle(String handleId) {
        checkHandle(handleId, "handleId");
        for (int attempt = 0; attempt < options.maxRetries(); attempt++) {
            Optional<IPAMHandle> h = handles.get(handleId);
            if (h.isEmpty()) {
                return;
            }
            for (String block : new TreeMap<>(h.get().spec().block()).keySet()) {
                releaseHandlesFromBlock(Cidr.parse(block), Set.of(handleId));
            }
            try {
                ds.delete(h.get().key(), h.get().metadata().resourceVersion());
                return;
            } catch (DatastoreException.NotFound gone) {
                return;
            } catch (DatastoreException.Conflict changed) {
                // an allocation for this handle happened meanwhile: release again
            }
        }
        throw contention("handleId", "handle " + handleId);
    }

    /**
     * Releases every address of each handle and the handles themselves, as {@link #releaseByHandle} does for
     * one, but with one read and one write per block for all the handles in it (a garbage collector releasing
     * thousands of handles otherwise rewrites each block once per handle). A handle that gained an address
     * meanwhile (its delete conflicts) is released again on its own; unknown handles are skipped.
     */
    public void releaseByHandles(Collection<String> handleIds) {
        Map<String, IPAMHandle> found = new LinkedHashMap<>();
        for (String id : new LinkedHashSet<>(handleIds)) {
            checkHandle(id, "handleIds");
            handles.get(id).ifPresent(h -> found.put(id, h));
        }
        Map<String, Set<String>> byBlock = new TreeMap<>();
        found.forEach((id, h) -> h.spec().block().keySet().forEach(
                block -> byBlock.computeIfAbsent(block, c -> new HashSet<>()).add(id)));
        byBlock.forEach((block, ids) -> releaseHandlesFromBlock(Cidr.parse(block), ids));
        found.forEach((id, h) -> {
            try {
                ds.delete(h.key(), h.metadata().resourceVersion());
            } catch (DatastoreException.NotFound gone) {
                // released by someone else meanwhile
            } catch (DatastoreException.Conflict changed) {
                releaseByHandle(id); // an allocation for this handle happened meanwhile
            }
        });
    }

    private void releaseHandlesFromBlock(Cidr cidr, Set<String> handleIds) {
        for (int attempt = 0; attempt < options.maxRetries(); attempt++) {
            Optional<IPAMBlock> stored = blocks.get(cidr);
            if (stored.isEmpty()) {
                return;
            }
            AllocationBlock b = AllocationBlock.of(stored.get());
            List<Integer> ordinals = new ArrayList<>();
            handleIds.forEach(h -> ordinals.addAll(b.ordinalsOf(h)));
            if (ordinals.isEmpty()) {
                return;
            }
            b.release(ordinals);
            if (blocks.writeOrDelete(stored.get(), b)) {
                return;
            }
        }
        throw contention("handleId", "block " + cidr);
    }

    /** {@return the addresses held by a handle}, in address order (empty when it does not exist). */
    public List<IpAddress> addressesByHandle(String handleId) {
        checkHandle(handleId, "handleId");
        Optional<IPAMHandle> h = handles.get(handleId);
        if (h.isEmpty()) {
            return List.of();
        }
        List<IpAddress> out = new ArrayList<>();
        for (String block : h.get().spec().block().keySet()) {
            blocks.get(Cidr.parse(block)).map(AllocationBlock::of).ifPresent(b ->
                    b.ordinalsOf(handleId).forEach(o -> out.add(b.address(o))));
        }
        out.sort(Comparator.naturalOrder());
        return out;
    }

    // ------------------------------------------------------------------ admin view

    /** {@return usage per pool and per block}, read from one list of pools and one of blocks. */
    public IpamUsage usage() {
        List<IPPool> storedPools = ds.list(ResourceKind.IP_POOL).items().stream().map(IPPool.class::cast).toList();
        List<AllocationBlock> all = blocks.all();
        Set<Cidr> placed = new HashSet<>();
        List<IpamUsage.PoolUsage> out = new ArrayList<>();
        for (IPPool stored : storedPools) {
            Pool p = Pool.of(stored);
            List<IpamUsage.BlockUsage> inPool = new ArrayList<>();
            long inUse = 0;
            for (AllocationBlock b : all) {
                if (p.cidr().contains(b.cidr()) && placed.add(b.cidr())) {
                    inPool.add(new IpamUsage.BlockUsage(b.cidr(), b.node(), b.size(), b.inUse()));
                    inUse += b.inUse();
                }
            }
            out.add(new IpamUsage.PoolUsage(p.name(), p.cidr(), p.blockSize(), p.disabled(), Addresses.size(p.cidr()),
                    inUse, inPool));
        }
        List<IpamUsage.BlockUsage> orphans = all.stream().filter(b -> !placed.contains(b.cidr()))
                .map(b -> new IpamUsage.BlockUsage(b.cidr(), b.node(), b.size(), b.inUse())).toList();
        return new IpamUsage(out, orphans);
    }

    // ------------------------------------------------------------------ GC primitives

    /**
     * {@return handle IDs that hold nothing a live owner needs}: those whose owner
     * {@code ownerLive} says is gone, and those that hold no address in any block (left by a
     * crash between the handle write and the block write). Release each with
     * {@link #releaseByHandle}; a controller should see a handle leaked twice, some time apart,
     * before it does (an assignment in flight has written its handle but not yet its block).
     */
    public List<String> leakedHandles(Predicate<String> ownerLive) {
        Map<String, Integer> held = new HashMap<>();
        for (AllocationBlock b : blocks.all()) {
            b.countsByHandle().forEach((h, n) -> held.merge(h, n, Integer::sum));
        }
        List<String> leaked = new ArrayList<>();
        for (Resource r : ds.list(ResourceKind.IPAM_HANDLE).items()) {
            String id = ((IPAMHandle) r).spec().handleID();
            if (held.getOrDefault(id, 0) == 0 || !ownerLive.test(id)) {
                leaked.add(id);
            }
        }
        leaked.sort(Comparator.naturalOrder());
        return leaked;
    }

    /** {@return every allocated address}, block by block (what {@code calicoctl ipam check}'s report lists). */
    public List<IpamAllocation> allocations() {
        List<IpamAllocation> out = new ArrayList<>();
        for (AllocationBlock b : blocks.all()) {
            out.addAll(b.allocations());
        }
        return out;
    }

    /** {@return the blocks affine to {@code node} that hold no address} (candidates for {@link #releaseBlockAffinity}) */
    public List<Cidr> emptyBlocks(String node) {
        checkHostname(node);
        return blocks.all().stream().filter(b -> b.affineTo(node) && b.isEmpty()).map(AllocationBlock::cidr)
                .sorted(Comparator.comparing(Cidr::address)).toList();
    }

    /**
     * Releases {@code node}'s affinity to every block (a node that left the cluster).
     * {@return how many affinities were released}
     *
     * @param requireEmpty when true, blocks still holding addresses keep their affinity
     */
    public int releaseHostAffinities(String node, boolean requireEmpty) {
        checkHostname(node);
        int released = 0;
        for (BlockAffinity a : blocks.hostAffinities(node)) {
            if (releaseBlockAffinity(Cidr.parse(a.spec().cidr()), node, requireEmpty)) {
                released++;
            }
        }
        return released;
    }

    /**
     * Releases {@code node}'s affinity to one block: the affinity goes to {@code pendingDeletion},
     * the block is deleted when empty (or loses its affinity when not, unless
     * {@code requireEmpty}), then the affinity is deleted. {@return whether it was released}
     */
    public boolean releaseBlockAffinity(Cidr blockCidr, String node, boolean requireEmpty) {
        checkHostname(node);
        return blocks.releaseAffinity(blockCidr, node, requireEmpty);
    }

    /**
     * Checks the IPAM state for inconsistencies (what {@code calicoctl ipam check} prints):
     * handle counts against the blocks, allocations whose handle is gone, confirmed affinities
     * without their block, and affine blocks without their affinity.
     */
    public IpamCheckReport check() {
        return IpamChecker.check(blocks.all(), ds.list(ResourceKind.IPAM_HANDLE).items(),
                ds.list(ResourceKind.BLOCK_AFFINITY).items());
    }

    // ------------------------------------------------------------------ pools and configuration

    private List<Pool> pools() {
        return ds.list(ResourceKind.IP_POOL).items().stream().map(r -> Pool.of((IPPool) r)).toList();
    }

    private List<Pool> eligiblePools(int version, List<Cidr> requested, String field, AutoAssignRequest r, Context ctx) {
        List<Pool> candidates = new ArrayList<>();
        if (requested.isEmpty()) {
            ctx.pools().stream().filter(p -> p.cidr().version() == version && !p.disabled() && !p.manual())
                    .forEach(candidates::add);
        } else {
            for (int i = 0; i < requested.size(); i++) {
                Cidr want = requested.get(i).network();
                int index = i;
                candidates.add(ctx.pools().stream().filter(p -> p.cidr().equals(want) && !p.disabled()).findFirst()
                        .orElseThrow(() -> new IpamException.NoSuchPool(field + "[" + index + "]", "pool " + want
                                + " does not exist or is disabled")));
            }
        }
        List<Pool> out = new ArrayList<>();
        for (Pool p : candidates) {
            if (p.uses().contains(r.intendedUse().allowedUse())
                    && (p.selectsAllNodes() || p.selects(ctx.nodeLabels()))
                    && p.selectsNamespace(r.namespaceLabels())) {
                out.add(p);
            }
        }
        if (out.isEmpty()) {
            throw new IpamException.NoSuchPool(field, "no enabled IPv" + version + " pool"
                    + (requested.isEmpty() ? "" : " among " + requested) + " allows "
                    + r.intendedUse().allowedUse() + " addresses for node " + r.hostname()
                    + (r.namespaceLabels() == null ? "" : " and namespace labels " + new java.util.TreeMap<>(r.namespaceLabels()))
                    + " (check the pools' disabled, allowedUses, assignmentMode, nodeSelector and namespaceSelector)");
        }
        return out;
    }

    private Context context(String node) {
        List<Pool> pools = pools();
        List<Cidr> reservations = new ArrayList<>();
        for (Resource r : ds.list(ResourceKind.IP_RESERVATION).items()) {
            for (String c : ((IPReservation) r).spec().reservedCIDRs()) {
                Cidr.tryParseCidrOrIp(c).map(Cidr::network).ifPresent(reservations::add);
            }
        }
        Optional<IPAMConfiguration> config = ds.get(ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, IpamNames.IPAM_CONFIG_NAME))
                .map(IPAMConfiguration.class::cast);
        boolean strict = config.map(c -> c.spec() != null && Boolean.TRUE.equals(c.spec().strictAffinity())).orElse(false);
        boolean auto = config.map(c -> c.spec() == null || !Boolean.FALSE.equals(c.spec().autoAllocateBlocks())).orElse(true);
        int max = config.map(c -> c.spec() == null || c.spec().maxBlocksPerHost() == null ? 0 : c.spec().maxBlocksPerHost())
                .orElse(0);
        Map<String, String> labels = pools.stream().allMatch(Pool::selectsAllNodes) ? Map.of()
                : ds.get(ResourceKey.of(ResourceKind.NODE, node)).map(n -> ((Node) n).metadata().labels()).orElse(Map.of());
        return new Context(pools, reservations, strict, auto, max, labels);
    }

    /** What one assignment reads once: pools, reservations, IPAM configuration, the node's labels. */
    private record Context(List<Pool> pools, List<Cidr> reservations, boolean strictAffinity,
                           boolean autoAllocateBlocks, int maxBlocksPerHost, Map<String, String> nodeLabels) {

        boolean reserved(IpAddress ip) {
            for (Cidr c : reservations) {
                if (c.contains(ip)) {
                    return true;
                }
            }
            return false;
        }

        boolean whollyReserved(Cidr block) {
            for (Cidr c : reservations) {
                if (c.contains(block)) {
                    return true;
                }
            }
            return false;
        }
    }

    // ------------------------------------------------------------------ request checks

    private static void checkHandle(String handleId, String field) {
        if (handleId == null || handleId.isEmpty()) {
            throw new IpamException.InvalidRequest(field, "is required");
        }
        if (handleId.length() > 253 || !HANDLE.matcher(handleId).matches()) {
            throw new IpamException.InvalidRequest(field, "\"" + handleId + "\" must be at most 253 letters, digits, "
                    + "'-' or '.', starting and ending with a letter or digit");
        }
    }

    private static void checkHostname(String hostname) {
        if (hostname == null || hostname.isEmpty()) {
            throw new IpamException.InvalidRequest("hostname", "is required");
        }
    }

    private static void checkVersions(List<Cidr> pools, int version, String field) {
        for (int i = 0; i < pools.size(); i++) {
            if (pools.get(i).version() != version) {
                throw new IpamException.InvalidRequest(field + "[" + i + "]", pools.get(i) + " is not an IPv" + version + " CIDR");
            }
        }
    }

    private IpamException.TooMuchContention contention(String field, String what) {
        return IpamException.TooMuchContention.after(field, what, options.maxRetries());
    }
}
