package calico.controllers.ipam;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.api.net.IpAddress;
import calico.controllers.node.ClusterNodes;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.MutableClock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * IPAM GC's decisions, run after run, with time moved by hand (fast, in memory: the same IPAM the
 * real datastores run; {@code KubernetesControllersTest} and {@code EtcdControllersTest} run it on the
 * real ones). Pods are a plain map here: what the API server would list.
 */
class IpamGarbageCollectorTest {

    private static final Duration GRACE = Duration.ofMinutes(15);
    private static final Optional<Duration> ON = Optional.of(GRACE);

    private final MemoryDatastore ds = new MemoryDatastore();
    private final MutableClock clock = new MutableClock(1_700_000_000L);
    private final IpamClient ipam = new IpamClient(ds, IpamOptions.defaults());
    private final Map<String, PodView> listed = new HashMap<>();
    private final Map<String, PodView> current = new HashMap<>();
    private final Pods pods = new Pods() {
        @Override
        public Map<String, PodView> all() {
            return Map.copyOf(listed);
        }

        @Override
        public Optional<PodView> get(String namespace, String name) {
            return Optional.ofNullable(current.get(Pods.key(namespace, name)));
        }
    };
    private final IpamGarbageCollector gc = new IpamGarbageCollector(ds, ipam, pods, clock);
    private GcState state = GcState.empty();

    IpamGarbageCollectorTest() {
        ds.create(new IPPool(ObjectMeta.named("p"), new IPPoolSpec("10.9.0.0/24", null, null, null, null, null, 29, null,
                null, List.of(IPPoolSpec.AllowedUse.Workload, IPPoolSpec.AllowedUse.Tunnel), null)));
        for (String n : List.of("n1", "n2")) {
            ds.create(new Node(ObjectMeta.named(n), new NodeSpec(null, null, null, null, null,
                    List.of(new NodeSpec.OrchRef(n, "k8s")), null, null, null)));
        }
    }

    @AfterEach
    void close() {
        ds.close();
    }

    private IpAddress pod(String name, String node, boolean running) {
        IpAddress ip = assign("k8s-pod-network." + name, node, Map.of("node", node, "namespace", "ns", "pod", name));
        if (running) {
            live(name, node, Set.of(ip));
        }
        return ip;
    }

    private void live(String name, String node, Set<IpAddress> ips) {
        PodView v = new PodView("ns", name, node, ips, false);
        listed.put(Pods.key("ns", name), v);
        current.put(Pods.key("ns", name), v);
    }

    private void gone(String name) {
        listed.remove(Pods.key("ns", name));
        current.remove(Pods.key("ns", name));
    }

    private IpAddress assign(String handle, String node, Map<String, String> attrs) {
        return ipam.autoAssign(new AutoAssignRequest(handle, node, 1, 0, List.of(), List.of(), attrs,
                attrs.containsKey("type") ? IntendedUse.TUNNEL : IntendedUse.WORKLOAD)).ipv4().get(0).address();
    }

    private GcResult run(Optional<Duration> grace, String... k8sNodes) {
        Map<String, Map<String, String>> k8s = new HashMap<>();
        for (String n : k8sNodes) {
            k8s.put(n, Map.of());
        }
        List<Node> calico = ds.list(ResourceKind.NODE).items().stream().map(Node.class::cast).toList();
        GcResult r = gc.reconcile(ClusterNodes.of(k8s, calico), grace, state);
        state = r.state();
        return r;
    }

    private GcResult run(String... k8sNodes) {
        return run(ON, k8sNodes);
    }

    @Test
    void aLeakIsReleasedOnlyAfterTheGracePeriodAndALivePodNever() {
        IpAddress kept = pod("a", "n1", true);
        pod("b", "n1", false);
        GcResult first = run("n1", "n2");
        assertThat(first.releasedHandles()).isEmpty();
        assertThat(first.stats().gcCandidates()).containsEntry(new IpamStats.PoolNode("p", "n1"), 1L);
        clock.advance(GRACE.minusSeconds(1));
        assertThat(run("n1", "n2").releasedHandles()).as("still within the grace period").isEmpty();
        clock.advance(Duration.ofSeconds(1));
        GcResult released = run("n1", "n2");
        assertThat(released.releasedHandles()).containsExactly("k8s-pod-network.b");
        assertThat(released.reclaimed()).containsEntry(new IpamStats.PoolNode("p", "n1"), 1);
        assertThat(released.stats().gcCandidates()).containsEntry(new IpamStats.PoolNode("p", "n1"), 0L);
        clock.advance(GRACE.multipliedBy(10));
        assertThat(run("n1", "n2").releasedHandles()).isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.a")).containsExactly(kept);
        assertThat(state.leakSince()).isEmpty();
    }

    @Test
    void aPodThatComesBackWithinTheGracePeriodClearsTheTimer() {
        IpAddress ip = pod("a", "n1", false);
        run("n1");
        clock.advance(GRACE.minusMinutes(1));
        live("a", "n1", Set.of(ip));
        run("n1");
        assertThat(state.leakSince()).isEmpty();
        gone("a");
        clock.advance(Duration.ofMinutes(2));
        assertThat(run("n1").releasedHandles()).as("the timer restarted when it went again").isEmpty();
    }

    @Test
    void theLastLookBeforeReleaseKeepsAPodThatCameBack() {
        IpAddress ip = pod("a", "n1", false);
        run("n1");
        clock.advance(GRACE);
        current.put(Pods.key("ns", "a"), new PodView("ns", "a", "n1", Set.of(ip), false)); // the list is stale
        assertThat(run("n1").releasedHandles()).isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.a")).containsExactly(ip);
    }

    @Test
    void whatMakesAnAddressLeaked() {
        IpAddress moved = pod("moved", "n1", false);
        live("moved", "n2", Set.of(moved)); // a pod of that name now on another node
        IpAddress other = pod("other", "n1", false);
        live("other", "n1", Set.of(IpAddress.parse("10.99.0.1"))); // the pod holds another address
        pod("done", "n1", false);
        listed.put(Pods.key("ns", "done"), new PodView("ns", "done", "n1", Set.of(), true));
        IpAddress noIpsYet = pod("adding", "n1", false);
        live("adding", "n1", Set.of()); // CNI ADD in flight: no address known yet, so valid
        assign("no-pod-attributes", "n1", Map.of("node", "n1"));
        run("n1", "n2");
        clock.advance(GRACE);
        assertThat(run("n1", "n2").releasedHandles()).containsExactlyInAnyOrder("k8s-pod-network.moved",
                "k8s-pod-network.other", "k8s-pod-network.done");
        assertThat(ipam.addressesByHandle("k8s-pod-network.adding")).containsExactly(noIpsYet);
        assertThat(ipam.addressesByHandle("no-pod-attributes")).hasSize(1);
        assertThat(other).isNotEqualTo(moved);
    }

    @Test
    void aHandleIsReleasedWholeOrNotAtAll() {
        IpAddress first = pod("two", "n1", true);
        IpAddress second = assign("k8s-pod-network.two", "n1", Map.of("node", "n1", "namespace", "ns", "pod", "two"));
        run("n1");
        clock.advance(GRACE);
        assertThat(run("n1").releasedHandles()).as("one address of the handle is the pod's").isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.two")).containsExactlyInAnyOrder(first, second);
    }

    @Test
    void aGoneNodeLosesItsAddressesAndBlocksAtOnceButALivePodKeepsItsAddress() {
        pod("x", "n2", false);
        assign("vxlan-tunnel-addr-n2", "n2", Map.of("node", "n2", "type", "vxlanTunnelAddress"));
        IpAddress tunnel1 = assign("vxlan-tunnel-addr-n1", "n1", Map.of("node", "n1", "type", "vxlanTunnelAddress"));
        GcResult r = run("n1");
        assertThat(r.releasedHandles()).containsExactlyInAnyOrder("k8s-pod-network.x", "vxlan-tunnel-addr-n2");
        assertThat(r.releasedNodes()).containsExactly("n2");
        assertThat(ipam.addressesByHandle("vxlan-tunnel-addr-n1")).containsExactly(tunnel1);
        assertThat(ipam.check().problems()).isEmpty();
        assertThat(ds.list(ResourceKind.BLOCK_AFFINITY).items()).hasSize(1);

        IpAddress kept = pod("y", "n1", true);
        live("y", "n1", Set.of(kept));
        assertThat(run().releasedNodes()).as("n1 gone but its pod y lives").isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.y")).containsExactly(kept);
    }

    @Test
    void withoutAGracePeriodOnlyGoneNodesAreCollected() {
        pod("a", "n1", false);
        pod("b", "n2", false);
        run(Optional.empty(), "n1");
        clock.advance(GRACE.multipliedBy(100));
        GcResult r = run(Optional.empty(), "n1");
        assertThat(ipam.addressesByHandle("k8s-pod-network.a")).hasSize(1);
        assertThat(ipam.addressesByHandle("k8s-pod-network.b")).isEmpty();
        assertThat(r.stats().gcCandidates()).containsEntry(new IpamStats.PoolNode("p", "n1"), 0L);
    }

    @Test
    void anEmptyBlockIsReleasedAfterTheGracePeriodExceptTheNodesLast() {
        for (int i = 0; i < 9; i++) { // a /29 holds 8: the ninth claims a second block
            pod("p" + i, "n1", true);
        }
        for (int i = 0; i < 9; i++) {
            ipam.releaseByHandle("k8s-pod-network.p" + i);
            gone("p" + i);
        }
        assertThat(run("n1").releasedBlocks()).isEmpty();
        clock.advance(GRACE);
        GcResult r = run("n1");
        assertThat(r.releasedBlocks()).hasSize(1);
        clock.advance(GRACE);
        assertThat(run("n1").releasedBlocks()).as("the node's last block stays").isEmpty();
        assertThat(ds.list(ResourceKind.IPAM_BLOCK).items()).hasSize(1);
    }

    @Test
    void loadBalancerAddressesAreNotTheGcsToJudge() {
        ds.create(new IPPool(ObjectMeta.named("lb"), new IPPoolSpec("10.8.0.0/27", null, null, null, null, null, 29, null,
                null, List.of(IPPoolSpec.AllowedUse.LoadBalancer), null)));
        IpAddress lb = ipam.autoAssign(new AutoAssignRequest("lb-abc", "load-balancer", 1, 0, List.of(), List.of(),
                Map.of("service", "s", "namespace", "ns", "type", "LoadBalancer"), IntendedUse.LOAD_BALANCER))
                .ipv4().get(0).address();
        run("n1");
        clock.advance(GRACE);
        GcResult r = run("n1");
        assertThat(r.releasedHandles()).isEmpty();
        assertThat(r.releasedNodes()).as("the load-balancer blocks keep their affinity").isEmpty();
        assertThat(ipam.addressesByHandle("lb-abc")).containsExactly(lb);
    }
}
