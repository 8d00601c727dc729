package calico.libcalico.ipam;

import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.IPAMBlock;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Blocks and block affinities in the datastore: reading them, claiming a block for a node
 * (affinity pending → block → affinity confirmed) and releasing an affinity (pendingDeletion →
 * block deleted or un-affined → affinity deleted), each write a compare-and-swap.
 */
final class Blocks {

    private final Datastore ds;
    private final int maxRetries;
    private final Clock clock;

    Blocks(Datastore ds, int maxRetries, Clock clock) {
        this.ds = ds;
        this.maxRetries = maxRetries;
        this.clock = clock;
    }

    /**
     * Claims a block for a node: affinity {@code pending}, then the block (create), then affinity
     * {@code confirmed}. {@return false when another node created the block first} (its pending
     * affinity is then removed)
     */
    boolean claim(Cidr cidr, String node) {
        ResourceKey affinity = affinityKey(node, cidr);
        try {
            ds.create(new BlockAffinity(ObjectMeta.named(affinity.name()),
                    BlockAffinitySpec.of(BlockAffinitySpec.PENDING, node, cidr.toString())));
        } catch (DatastoreException.AlreadyExists again) {
            // an earlier attempt of ours (or another process on this node) got this far
        }
        try {
            ds.create(AllocationBlock.empty(cidr, node, Instant.now(clock).truncatedTo(ChronoUnit.SECONDS)
                    .toString()).toResource());
        } catch (DatastoreException.AlreadyExists taken) {
            Optional<IPAMBlock> existing = get(cidr);
            if (existing.isEmpty() || !AllocationBlock.of(existing.get()).affineTo(node)) {
                deletePending(affinity);
                return false;
            }
        }
        confirm(affinity);
        return true;
    }

    void confirm(ResourceKey affinity) {
        for (int attempt = 0; attempt < maxRetries; attempt++) {
            Optional<BlockAffinity> a = ds.get(affinity).map(BlockAffinity.class::cast);
            if (a.isEmpty() || BlockAffinitySpec.CONFIRMED.equals(a.get().spec().state())) {
                return;
            }
            try {
                ds.update(a.get().withSpecState(BlockAffinitySpec.CONFIRMED));
                return;
            } catch (DatastoreException.Conflict | DatastoreException.NotFound raced) {
                // read again
            }
        }
        throw contention("hostname", "affinity " + affinity.name());
    }

    private void restoreConfirmed(BlockAffinity a) {
        try {
            ds.update(a.withSpecState(BlockAffinitySpec.CONFIRMED));
        } catch (DatastoreException.Conflict | DatastoreException.NotFound ignored) {
            // someone else changed it; the retry reads it again
        }
    }

    /** Deletes our pending affinity of a lost claim, by its resourceVersion (someone may have changed it: then leave it). */
    private void deletePending(ResourceKey key) {
        Optional<BlockAffinity> a = ds.get(key).map(BlockAffinity.class::cast);
        if (a.isEmpty() || !BlockAffinitySpec.PENDING.equals(a.get().spec().state())) {
            return;
        }
        try {
            ds.delete(key, a.get().metadata().resourceVersion());
        } catch (DatastoreException.NotFound | DatastoreException.Conflict changed) {
            // gone already, or changed by someone else: not ours to remove any more
        }
    }

    /**
     * {@return the node's usable blocks in the pools}, pool by pool: confirmed affinities, and
     * pending ones whose block exists affine to the node (a claim interrupted after its block
     * write; confirmed here).
     */
    List<Cidr> affineBlocks(String node, List<Pool> pools) {
        List<Cidr> out = new ArrayList<>();
        List<BlockAffinity> mine = hostAffinities(node);
        for (Pool p : pools) {
            List<Cidr> inPool = new ArrayList<>();
            for (BlockAffinity a : mine) {
                Cidr c = Cidr.parse(a.spec().cidr());
                if (!p.cidr().contains(c)) {
                    continue;
                }
                if (BlockAffinitySpec.CONFIRMED.equals(a.spec().state())) {
                    inPool.add(c);
                } else if (BlockAffinitySpec.PENDING.equals(a.spec().state())
                        && get(c).map(b -> AllocationBlock.of(b).affineTo(node)).orElse(false)) {
                    confirm(a.key());
                    inPool.add(c);
                }
            }
            inPool.sort(Comparator.comparing(Cidr::address));
            out.addAll(inPool);
        }
        return out;
    }

    List<BlockAffinity> hostAffinities(String node) {
        return ds.list(ResourceKind.BLOCK_AFFINITY).items().stream().map(BlockAffinity.class::cast)
                .filter(a -> node.equals(a.spec().node()) && !"true".equals(a.spec().deleted())
                        && !BlockAffinitySpec.PENDING_DELETION.equals(a.spec().state()))
                .toList();
    }

    /**
     * {@return a block of the pools that nobody has created}: each pool is scanned from a
     * point derived from the node name (as Calico does, so nodes rarely race for the same
     * block), skipping existing blocks and blocks that are wholly reserved.
     */
    Optional<Cidr> unclaimed(List<Pool> pools, String node, Predicate<Cidr> whollyReserved) {
        Set<Cidr> existing = new HashSet<>();
        ds.list(ResourceKind.IPAM_BLOCK).items().forEach(r -> existing.add(Cidr.parse(((IPAMBlock) r).spec().cidr())));
        for (Pool p : pools) {
            BigInteger blocks = BigInteger.ONE.shiftLeft(p.blockSize() - p.cidr().prefixLength());
            BigInteger blockAddresses = BigInteger.ONE.shiftLeft(p.cidr().address().bits() - p.blockSize());
            BigInteger start = BigInteger.valueOf(node.hashCode() & 0x7fffffffL).mod(blocks);
            long limit = blocks.min(BigInteger.valueOf(existing.size() + 1L + (1 << 16))).longValue();
            for (long i = 0; i < limit; i++) {
                BigInteger index = start.add(BigInteger.valueOf(i)).mod(blocks);
                Cidr candidate = new Cidr(Addresses.add(p.cidr(), index.multiply(blockAddresses)), p.blockSize());
                if (!existing.contains(candidate) && !whollyReserved.test(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }

    List<AllocationBlock> in(List<Pool> pools) {
        List<AllocationBlock> all = all();
        List<AllocationBlock> out = new ArrayList<>();
        for (Pool p : pools) {
            all.stream().filter(b -> p.cidr().contains(b.cidr())).forEach(out::add);
        }
        return out;
    }

    List<AllocationBlock> all() {
        return ds.list(ResourceKind.IPAM_BLOCK).items().stream().map(IPAMBlock.class::cast)
                .filter(b -> !Boolean.TRUE.equals(b.spec().deleted()))
                .map(AllocationBlock::of).toList();
    }

    Optional<IPAMBlock> get(Cidr cidr) {
        return ds.get(ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(cidr))).map(IPAMBlock.class::cast)
                .filter(b -> !Boolean.TRUE.equals(b.spec().deleted()));
    }

    static ResourceKey affinityKey(String node, Cidr cidr) {
        return ResourceKey.of(ResourceKind.BLOCK_AFFINITY, IpamNames.affinityName(node, cidr));
    }

    /**
     * Writes a block back with a CAS, or deletes it (CAS) when it is empty and affine to nobody.
     * {@return false on a conflict} (the caller reads again)
     */
    boolean writeOrDelete(IPAMBlock stored, AllocationBlock b) {
        try {
            if (b.isEmpty() && b.node() == null) {
                ds.delete(stored.key(), stored.metadata().resourceVersion());
            } else {
                ds.update(b.toResource());
            }
            return true;
        } catch (DatastoreException.Conflict | DatastoreException.NotFound raced) {
            return false;
        }
    }

    /**
     * Releases {@code node}'s affinity to one block: the affinity goes to {@code pendingDeletion},
     * the block is deleted when empty (or loses its affinity when not, unless
     * {@code requireEmpty}), then the affinity is deleted. {@return whether it was released}
     */
    boolean releaseAffinity(Cidr blockCidr, String node, boolean requireEmpty) {
        ResourceKey key = affinityKey(node, blockCidr);
        for (int attempt = 0; attempt < maxRetries; attempt++) {
            Optional<BlockAffinity> a = ds.get(key).map(BlockAffinity.class::cast);
            if (a.isEmpty()) {
                return false;
            }
            Optional<IPAMBlock> stored = get(blockCidr);
            if (stored.isPresent()) {
                AllocationBlock b = AllocationBlock.of(stored.get());
                if (b.affineTo(node)) {
                    if (!b.isEmpty() && requireEmpty) {
                        return false;
                    }
                    try {
                        a = Optional.of((BlockAffinity) ds.update(a.get().withSpecState(BlockAffinitySpec.PENDING_DELETION)));
                        if (b.isEmpty()) {
                            ds.delete(stored.get().key(), stored.get().metadata().resourceVersion());
                        } else {
                            b.clearAffinity();
                            ds.update(b.toResource());
                        }
                    } catch (DatastoreException.Conflict | DatastoreException.NotFound raced) {
                        restoreConfirmed(a.get());
                        continue;
                    }
                }
            }
            try {
                ds.delete(key, a.get().metadata().resourceVersion());
                return true;
            } catch (DatastoreException.Conflict | DatastoreException.NotFound raced) {
                // read again
            }
        }
        throw contention("node", "affinity " + key.name());
    }

    private IpamException.TooMuchContention contention(String field, String what) {
        return IpamException.TooMuchContention.after(field, what, maxRetries);
    }
}
