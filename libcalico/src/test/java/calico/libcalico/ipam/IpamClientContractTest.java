package calico.libcalico.ipam;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.codec.ResourceCodec;
import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMConfigurationSpec;
import calico.api.model.IPAMHandle;
import calico.api.model.IPAMHandleSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.IPReservation;
import calico.api.model.IPReservationSpec;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.Datastore;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What Calico IPAM promises, run against every datastore backend (subclasses: real etcd, memory):
 * claims, full blocks, borrowing vs strict affinity, reservations, disabled pools, node
 * selectors and allowed uses, release by handle and address, all-or-nothing requests, and the
 * GC primitives.
 */
abstract class IpamClientContractTest {

    protected Datastore store;
    protected IpamClient ipam;

    protected abstract Datastore newDatastore();

    @BeforeEach
    void open() {
        store = newDatastore();
        ipam = new IpamClient(store, IpamOptions.defaults());
    }

    @AfterEach
    void close() {
        store.close();
        closeBackend();
    }

    /** Stops whatever serves the datastore, after the datastore is closed. */
    protected void closeBackend() {
    }

    // ------------------------------------------------------------------ fixtures

    protected void pool(String name, String cidr, int blockSize) {
        pool(name, new IPPoolSpec(cidr, null, null, null, null, null, blockSize, null, null, null, null));
    }

    protected void pool(String name, IPPoolSpec spec) {
        store.create(new IPPool(ObjectMeta.named(name), spec));
    }

    private void config(boolean strict, Boolean auto, Integer max) {
        store.create(new IPAMConfiguration(ObjectMeta.named("default"), new IPAMConfigurationSpec(strict, auto, max)));
    }

    /** Creates a Node with labels given as a YAML flow map, e.g. {@code {zone: b}}. */
    protected void node(String name, String labels) {
        store.create(ResourceCodec.get().parse("apiVersion: projectcalico.org/v3\nkind: Node\nmetadata: {name: " + name
                + ", labels: " + labels + "}\nspec: {}\n"));
    }

    private static AutoAssignRequest v4(String handle, String node, int n) {
        return new AutoAssignRequest(handle, node, n, 0, List.of(), List.of(), Map.of("node", node), IntendedUse.WORKLOAD);
    }

    private static IpAddress ip(String s) {
        return IpAddress.parse(s);
    }

    private List<IpAddress> assign(String handle, String node, int n) {
        return ipam.autoAssign(v4(handle, node, n)).ipv4().stream().map(Cidr::address).toList();
    }

    private IPAMBlock block(String cidr) {
        return (IPAMBlock) store.get(ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(Cidr.parse(cidr)))).orElseThrow();
    }

    private List<String> affinities(String node) {
        return store.list(ResourceKind.BLOCK_AFFINITY).items().stream().map(BlockAffinity.class::cast)
                .filter(a -> a.spec().node().equals(node))
                .map(a -> a.spec().cidr() + " " + a.spec().state()).toList();
    }

    // ------------------------------------------------------------------ claims

    @Test
    void theFirstAddressClaimsABlockForTheNode() {
        pool("p", "10.0.0.0/24", 26);

        AssignResult r = ipam.autoAssign(v4("k8s-pod-network.c1", "n1", 1));

        assertThat(r.ipv4()).singleElement().satisfies(c -> assertThat(c.prefixLength()).isEqualTo(32));
        IpAddress got = r.ipv4().get(0).address();
        assertThat(Cidr.parse("10.0.0.0/24").contains(got)).isTrue();
        Cidr blockCidr = new Cidr(got.mask(26), 26);
        IPAMBlock b = block(blockCidr.toString());
        assertThat(b.spec().affinity()).isEqualTo("host:n1");
        assertThat(b.spec().allocations().stream().filter(a -> a != null).count()).isEqualTo(1);
        assertThat(b.spec().unallocated()).hasSize(63);
        assertThat(b.spec().attributes()).singleElement()
                .satisfies(a -> assertThat(a.handleId()).isEqualTo("k8s-pod-network.c1"))
                .satisfies(a -> assertThat(a.secondary()).containsEntry("node", "n1"));
        assertThat(affinities("n1")).containsExactly(blockCidr + " confirmed");
        IPAMHandle h = (IPAMHandle) store.get(ResourceKey.of(ResourceKind.IPAM_HANDLE, "k8s-pod-network.c1")).orElseThrow();
        assertThat(h.spec().block()).containsExactly(Map.entry(blockCidr.toString(), 1));
        assertThat(ipam.addressesByHandle("k8s-pod-network.c1")).containsExactly(got);
        assertThat(ipam.check().problems()).isEmpty();
    }

    @Test
    void aFullBlockMakesTheNodeClaimAnother() {
        pool("p", "10.0.0.0/28", 30);

        List<IpAddress> first = assign("h1", "n1", 4);
        List<IpAddress> fifth = assign("h2", "n1", 1);

        assertThat(affinities("n1")).hasSize(2).allMatch(a -> a.endsWith("confirmed"));
        Set<Cidr> blocksOfFirst = new HashSet<>();
        first.forEach(a -> blocksOfFirst.add(new Cidr(a.mask(30), 30)));
        assertThat(blocksOfFirst).hasSize(1);
        assertThat(blocksOfFirst).doesNotContain(new Cidr(fifth.get(0).mask(30), 30));
        assertThat(ipam.usage().pools()).singleElement().satisfies(p -> {
            assertThat(p.inUse()).isEqualTo(5);
            assertThat(p.blocks()).hasSize(2).allMatch(b -> "n1".equals(b.node()));
        });
    }

    @Test
    void otherNodesBlocksAreBorrowedOnlyWhenNoBlockIsFreeAndNeverWithStrictAffinity() {
        pool("p", "10.0.0.0/29", 30); // two blocks of four
        List<IpAddress> n1 = assign("h1", "n1", 2);
        assign("h2", "n2", 4); // n2's block is full, and the pool has no other free block

        List<IpAddress> borrowed = assign("h3", "n2", 1);

        assertThat(new Cidr(borrowed.get(0).mask(30), 30)).isEqualTo(new Cidr(n1.get(0).mask(30), 30));
        assertThat(block(new Cidr(n1.get(0).mask(30), 30).toString()).spec().affinity()).isEqualTo("host:n1");
        assertThat(affinities("n2")).hasSize(1);

        config(true, null, null);
        assertThatThrownBy(() -> assign("h4", "n2", 1)).isInstanceOf(IpamException.PoolExhausted.class)
                .hasMessageContaining("ipv4Pools").hasMessageContaining("strictAffinity");
        assertThat(ipam.addressesByHandle("h4")).isEmpty();
    }

    @Test
    void maxBlocksPerHostAndAutoAllocateBlocksLimitClaims() {
        pool("p", "10.0.0.0/28", 30);
        config(true, true, 1);
        assign("h1", "n1", 4);
        assertThatThrownBy(() -> assign("h2", "n1", 1)).isInstanceOf(IpamException.PoolExhausted.class)
                .hasMessageContaining("maxBlocksPerHost 1");

        store.delete(ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, "default"), null);
        config(false, false, null);
        assertThatThrownBy(() -> assign("h3", "n2", 1)).isInstanceOf(IpamException.PoolExhausted.class);
        assertThat(affinities("n2")).isEmpty();
    }

    // ------------------------------------------------------------------ what is never used

    @Test
    void reservedAddressesAreSkipped() {
        pool("p", "10.0.0.0/30", 30);
        store.create(new IPReservation(ObjectMeta.named("r"), new IPReservationSpec(List.of("10.0.0.0/31"))));

        assertThat(assign("h1", "n1", 2)).containsExactly(ip("10.0.0.2"), ip("10.0.0.3"));
        assertThatThrownBy(() -> assign("h2", "n1", 1)).isInstanceOf(IpamException.PoolExhausted.class);
        // A reservation only steers automatic assignment: the address can still be asked for.
        ipam.assignIp(new AssignIpRequest("h3", ip("10.0.0.0"), "n1", Map.of()));
        assertThat(ipam.addressesByHandle("h3")).containsExactly(ip("10.0.0.0"));
    }

    @Test
    void disabledPoolsAreNeverUsed() {
        pool("a", new IPPoolSpec("10.1.0.0/24", null, null, null, true, null, 26, null, null, null, null));
        pool("b", "10.2.0.0/24", 26);

        assertThat(Cidr.parse("10.2.0.0/24").contains(assign("h1", "n1", 1).get(0))).isTrue();
        assertThatThrownBy(() -> ipam.autoAssign(new AutoAssignRequest("h2", "n1", 1, 0, List.of(Cidr.parse("10.1.0.0/24")),
                List.of(), Map.of(), IntendedUse.WORKLOAD)))
                .isInstanceOf(IpamException.NoSuchPool.class)
                .hasMessage("ipv4Pools[0]: pool 10.1.0.0/24 does not exist or is disabled");
        assertThatThrownBy(() -> ipam.assignIp(new AssignIpRequest("h3", ip("10.1.0.9"), "n1", Map.of())))
                .isInstanceOf(IpamException.NoSuchPool.class).hasMessageStartingWith("ip: 10.1.0.9");
    }

    @Test
    void poolNodeSelectorsAndAllowedUsesAreHonoured() {
        pool("zone-a", new IPPoolSpec("10.1.0.0/24", null, null, null, null, null, 26, "zone == 'a'", null,
                List.of(IPPoolSpec.AllowedUse.Workload), null));
        pool("zone-b", new IPPoolSpec("10.2.0.0/24", null, null, null, null, null, 26, "zone == 'b'", null,
                List.of(IPPoolSpec.AllowedUse.Workload), null));
        pool("tunnels", new IPPoolSpec("10.3.0.0/24", null, null, null, null, null, 26, null, null,
                List.of(IPPoolSpec.AllowedUse.Tunnel), null));
        node("n1", "{zone: b}");

        assertThat(Cidr.parse("10.2.0.0/24").contains(assign("h1", "n1", 1).get(0))).isTrue();
        IpAddress tunnel = ipam.autoAssign(new AutoAssignRequest("ipip-tunnel-addr-n1", "n1", 1, 0, List.of(), List.of(),
                Map.of(), IntendedUse.TUNNEL)).ipv4().get(0).address();
        assertThat(Cidr.parse("10.3.0.0/24").contains(tunnel)).isTrue();
        // A node no selector picks gets nothing from the selected pools.
        node("n2", "{zone: c}");
        assertThatThrownBy(() -> assign("h2", "n2", 1)).isInstanceOf(IpamException.NoSuchPool.class)
                .hasMessageContaining("ipv4Pools: no enabled IPv4 pool allows Workload addresses for node n2");
    }

    @Test
    void poolNamespaceSelectorsAreHonouredAlongWithNodeSelectors() {
        pool("team-a", new IPPoolSpec("10.1.0.0/24", null, null, null, null, null, 26, null, "team == 'a'", null, null));
        pool("team-b", new IPPoolSpec("10.2.0.0/24", null, null, null, null, null, 26, "zone == 'b'", "team == 'b'",
                null, null));
        node("n1", "{zone: b}");
        node("n2", "{zone: c}");

        assertThat(Cidr.parse("10.2.0.0/24").contains(inNamespace("h1", "n1", Map.of("team", "b"), List.of()))).isTrue();
        assertThat(Cidr.parse("10.1.0.0/24").contains(inNamespace("h2", "n1", Map.of("team", "a"), List.of()))).isTrue();
        // team b's pool is not for node n2, team a's is not for team b: nothing left.
        assertThatThrownBy(() -> inNamespace("h3", "n2", Map.of("team", "b"), List.of()))
                .isInstanceOf(IpamException.NoSuchPool.class)
                .hasMessageContaining("ipv4Pools: no enabled IPv4 pool allows Workload addresses for node n2 and namespace labels {team=b}");
        // No namespace at all: a pool with a namespace selector is never used.
        assertThatThrownBy(() -> assign("h4", "n1", 1)).isInstanceOf(IpamException.NoSuchPool.class);
        // A requested pool is refused too when it does not select the namespace.
        assertThatThrownBy(() -> inNamespace("h5", "n1", Map.of("team", "b"), List.of(Cidr.parse("10.1.0.0/24"))))
                .isInstanceOf(IpamException.NoSuchPool.class).hasMessageStartingWith("ipv4Pools:");
        assertThat(store.list(ResourceKind.IPAM_HANDLE).items()).hasSize(2);
    }

    private IpAddress inNamespace(String handle, String node, Map<String, String> namespaceLabels, List<Cidr> pools) {
        return ipam.autoAssign(new AutoAssignRequest(handle, node, 1, 0, pools, List.of(), Map.of("node", node),
                IntendedUse.WORKLOAD, namespaceLabels)).ipv4().get(0).address();
    }

    // ------------------------------------------------------------------ release

    @Test
    void releaseByAddressAndByHandleAreIdempotent() {
        pool("p", "10.0.0.0/24", 26);
        List<IpAddress> got = assign("k8s-pod-network.c1", "n1", 3);

        assertThat(ipam.releaseIps(List.of(got.get(0)))).isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.c1")).containsExactlyElementsOf(got.subList(1, 3));
        assertThat(ipam.releaseIps(List.of(got.get(0), ip("192.168.9.9")))).containsExactly(got.get(0), ip("192.168.9.9"));
        IPAMHandle h = (IPAMHandle) store.get(ResourceKey.of(ResourceKind.IPAM_HANDLE, "k8s-pod-network.c1")).orElseThrow();
        assertThat(h.spec().block().values()).containsExactly(2);

        ipam.releaseByHandle("k8s-pod-network.c1");
        ipam.releaseByHandle("k8s-pod-network.c1");

        assertThat(ipam.addressesByHandle("k8s-pod-network.c1")).isEmpty();
        assertThat(store.list(ResourceKind.IPAM_HANDLE).items()).isEmpty();
        assertThat(ipam.usage().pools().get(0).inUse()).isZero();
        // The block stays, affine to its node, for the next pod.
        assertThat(affinities("n1")).hasSize(1);
        assertThat(ipam.check().problems()).isEmpty();
        // A freed address is handed out again.
        assertThat(assign("h2", "n1", 64)).contains(got.get(0));
    }

    @Test
    void releaseByHandlesWritesEachBlockOnceForAllItsHandles() {
        pool("p", "10.0.0.0/24", 26);
        List<IpAddress> a = assign("k8s-pod-network.a", "n1", 2);
        List<IpAddress> b = assign("k8s-pod-network.b", "n1", 3);
        List<IpAddress> kept = assign("k8s-pod-network.kept", "n1", 1);
        java.util.concurrent.atomic.AtomicInteger blockWrites = new java.util.concurrent.atomic.AtomicInteger();
        IpamClient counted = new IpamClient(new calico.libcalico.testing.ForwardingDatastore(store) {
            @Override
            public calico.api.model.Resource update(calico.api.model.Resource r) {
                if (r.resourceKind() == ResourceKind.IPAM_BLOCK) {
                    blockWrites.incrementAndGet();
                }
                return super.update(r);
            }
        }, IpamOptions.defaults());

        counted.releaseByHandles(List.of("k8s-pod-network.a", "k8s-pod-network.b", "k8s-pod-network.unknown"));

        assertThat(blockWrites).as("one write of the block for both handles").hasValue(1);
        assertThat(ipam.addressesByHandle("k8s-pod-network.a")).isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.b")).isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.kept")).containsExactlyElementsOf(kept);
        assertThat(store.list(ResourceKind.IPAM_HANDLE).items()).hasSize(1);
        assertThat(ipam.check().problems()).isEmpty();
        assertThat(ipam.usage().pools().get(0).inUse()).as("only kept's address of %s and %s", a, b).isEqualTo(1);
    }

    @Test
    void aSpecificAddressIsAssignedOnceAndClaimsItsBlock() {
        pool("p", "10.0.0.0/24", 26);

        ipam.assignIp(new AssignIpRequest("h1", ip("10.0.0.70"), "n1", Map.of("pod", "web")));

        assertThat(block("10.0.0.64/26").spec().affinity()).isEqualTo("host:n1");
        assertThat(ipam.addressesByHandle("h1")).containsExactly(ip("10.0.0.70"));
        assertThatThrownBy(() -> ipam.assignIp(new AssignIpRequest("h2", ip("10.0.0.70"), "n2", Map.of())))
                .isInstanceOf(IpamException.AlreadyAllocated.class)
                .hasMessage("ip: 10.0.0.70 is already allocated (handle h1)");
        assertThat(ipam.addressesByHandle("h2")).isEmpty();
    }

    @Test
    void aRequestThatCannotBeMetHoldsNothing() {
        pool("p", "10.0.0.0/30", 30);
        pool("p6", "fd00::/126", 126);

        assertThatThrownBy(() -> ipam.autoAssign(new AutoAssignRequest("h1", "n1", 2, 5, List.of(), List.of(), Map.of(), null)))
                .isInstanceOf(IpamException.PoolExhausted.class).hasMessageStartingWith("ipv6Pools: found 4 of 5 IPv6");

        assertThat(ipam.addressesByHandle("h1")).isEmpty();
        assertThat(store.list(ResourceKind.IPAM_HANDLE).items()).isEmpty();
        assertThat(ipam.usage().pools()).allMatch(p -> p.inUse() == 0);
        AssignResult both = ipam.autoAssign(new AutoAssignRequest("h1", "n1", 1, 1, List.of(), List.of(), Map.of(), null));
        assertThat(both.ipv6()).singleElement().satisfies(c -> {
            assertThat(c.prefixLength()).isEqualTo(128);
            assertThat(Cidr.parse("fd00::/126").contains(c.address())).isTrue();
        });
    }

    @Test
    void badRequestsNameTheField() {
        pool("p", "10.0.0.0/24", 26);
        assertThatThrownBy(() -> ipam.autoAssign(v4("", "n1", 1))).hasMessage("handleId: is required");
        assertThatThrownBy(() -> ipam.autoAssign(AutoAssignRequest.ipv4("h", null))).hasMessage("hostname: is required");
        assertThatThrownBy(() -> ipam.autoAssign(v4("h", "n1", 0))).isInstanceOf(IpamException.InvalidRequest.class)
                .hasMessageStartingWith("num4: ");
        assertThatThrownBy(() -> ipam.autoAssign(v4("bad/handle", "n1", 1))).hasMessageStartingWith("handleId: \"bad/handle\"");
        assertThatThrownBy(() -> ipam.autoAssign(new AutoAssignRequest("h", "n1", 1, 0, List.of(Cidr.parse("fd00::/64")),
                List.of(), Map.of(), null))).hasMessage("ipv4Pools[0]: fd00::/64 is not an IPv4 CIDR");
        assertThat(store.list(ResourceKind.IPAM_HANDLE).items()).isEmpty();
    }

    // ------------------------------------------------------------------ GC primitives

    @Test
    void leakedHandlesAreThoseOfGoneOwnersOrHoldingNothing() {
        pool("p", "10.0.0.0/24", 26);
        assign("k8s-pod-network.alive", "n1", 1);
        assign("k8s-pod-network.gone", "n1", 1);
        // A crash between the handle write and the block write leaves a handle holding nothing.
        store.create(new IPAMHandle(ObjectMeta.named("k8s-pod-network.crashed"),
                new IPAMHandleSpec("k8s-pod-network.crashed", Map.of("10.0.0.0/26", 1), null)));

        assertThat(ipam.check().problems()).singleElement().asString()
                .contains("handle k8s-pod-network.crashed: records 1 address(es) in block 10.0.0.0/26, the block holds 0");
        List<String> leaked = ipam.leakedHandles(h -> !h.endsWith(".gone"));
        assertThat(leaked).containsExactly("k8s-pod-network.crashed", "k8s-pod-network.gone");

        leaked.forEach(ipam::releaseByHandle);

        assertThat(ipam.check().problems()).isEmpty();
        assertThat(store.list(ResourceKind.IPAM_HANDLE).items()).extracting(r -> r.metadata().name())
                .containsExactly("k8s-pod-network.alive");
    }

    @Test
    void emptyBlocksAndAffinitiesOfANodeAreReleased() {
        pool("p", "10.0.0.0/28", 30);
        List<IpAddress> a = assign("h1", "n1", 4);
        List<IpAddress> b = assign("h2", "n1", 1);
        ipam.releaseByHandle("h2");
        Cidr emptied = new Cidr(b.get(0).mask(30), 30);

        assertThat(ipam.emptyBlocks("n1")).containsExactly(emptied);
        assertThat(ipam.releaseHostAffinities("n1", true)).isEqualTo(1);
        assertThat(store.get(ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(emptied)))).isEmpty();
        assertThat(affinities("n1")).hasSize(1);

        // The node leaves: the full block stays (its addresses are in use) but loses its affinity.
        assertThat(ipam.releaseHostAffinities("n1", false)).isEqualTo(1);
        assertThat(affinities("n1")).isEmpty();
        Cidr full = new Cidr(a.get(0).mask(30), 30);
        assertThat(block(full.toString()).spec().affinity()).isNull();
        assertThat(ipam.check().problems()).isEmpty();
        // Released addresses of an affinity-less block delete it once empty.
        ipam.releaseByHandle("h1");
        assertThat(store.list(ResourceKind.IPAM_BLOCK).items()).isEmpty();
    }

    @Test
    void anInterruptedClaimIsFinishedByTheNextAssignment() {
        pool("p", "10.0.0.0/30", 30);
        // The claim wrote its pending affinity and the block, then died before confirming.
        store.create(new BlockAffinity(ObjectMeta.named("n1-10-0-0-0-30"),
                BlockAffinitySpec.of(BlockAffinitySpec.PENDING, "n1", "10.0.0.0/30")));
        Resource emptyBlock = AllocationBlock.empty(Cidr.parse("10.0.0.0/30"), "n1", null).toResource();
        store.create(emptyBlock);

        assertThat(assign("h1", "n1", 1)).containsExactly(ip("10.0.0.0"));
        assertThat(affinities("n1")).containsExactly("10.0.0.0/30 confirmed");
    }
}
