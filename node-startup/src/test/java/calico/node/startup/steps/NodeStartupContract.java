package calico.node.startup.steps;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.ASNumber;
import calico.api.model.Action;
import calico.api.model.BGPConfiguration;
import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.EncapsulationMode;
import calico.api.model.FelixConfiguration;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMHandle;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.Node;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Tier;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.node.startup.autodetect.AddressDetector;
import calico.node.startup.autodetect.AutodetectionMethod;
import calico.node.startup.autodetect.HostInterface;
import calico.node.startup.autodetect.KubernetesNodes;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What calico-node's start-up writes and keeps, on one datastore (a real etcd, a real
 * kube-apiserver: the subclasses). The host is a fixed list of interfaces here (autodetection
 * against real interfaces is {@code AutodetectionNetnsTest}); everything else is real.
 */
abstract class NodeStartupContract {

    static final String NODE = "node-a";
    /** The host: eth0 10.0.0.5/24 (+ link-local IPv6), eth1 2001:db8::5/64; docker0 never counts. */
    static final List<HostInterface> HOST = List.of(
            new HostInterface(1, "lo", List.of(Cidr.parse("127.0.0.1/8"))),
            new HostInterface(2, "eth0", List.of(Cidr.parse("10.0.0.5/24"), Cidr.parse("fe80::1/64"))),
            new HostInterface(3, "eth1", List.of(Cidr.parse("2001:db8::5/64"))),
            new HostInterface(4, "docker0", List.of(Cidr.parse("172.17.0.1/16"))));

    protected Datastore ds;

    protected abstract Datastore newDatastore();

    /** Makes the Node exist where start-up cannot create it (the kubernetes datastore); a no-op elsewhere. */
    protected abstract void nodeExists(String name);

    protected abstract boolean kubernetes();

    @BeforeEach
    void open() {
        ds = newDatastore();
        nodeExists(NODE);
    }

    @AfterEach
    void close() {
        ds.close();
    }

    NodeStartup startup() {
        return new NodeStartup(ds, new AddressDetector(() -> HOST, KubernetesNodes.NONE));
    }

    static NodeSettings node(AddressSetting ip, AddressSetting ip6, ASNumber as) {
        return new NodeSettings(NODE, NODE, false, ip, ip6, new AutodetectionMethod.FirstFound(),
                new AutodetectionMethod.FirstFound(), as, false, true, false);
    }

    static PoolSettings pool(String cidr, int blockSize, EncapsulationMode ipip, EncapsulationMode vxlan,
                             boolean nat) {
        return new PoolSettings(true, Optional.of(Cidr.parse(cidr)), blockSize, ipip, vxlan, nat, "", false);
    }

    NodeStartup.Settings settings(NodeSettings node, PoolSettings v4, PoolSettings v6) {
        return new NodeStartup.Settings(node, v4, v6, true, new ClusterSettings("v0.1.0-test", "", kubernetes()));
    }

    NodeStartup.Settings defaults() {
        return settings(node(new AddressSetting.Unset(), new AddressSetting.Unset(), null),
                pool("10.244.0.0/16", 26, EncapsulationMode.Always, EncapsulationMode.Never, true),
                PoolSettings.disabled());
    }

    @Test
    void aFirstRunCreatesEverythingAndASecondChangesNothing() {
        NodeStartup.Result first = startup().run(defaults());
        assertThat(first.changes()).isNotEmpty();

        Node node = node();
        assertThat(node.spec().bgp().ipv4Address()).as("first-found skips lo and picks eth0's address with its subnet")
                .isEqualTo("10.0.0.5/24");
        assertThat(node.spec().bgp().ipv6Address()).as("IP6 unset: no IPv6").isNull();
        IPPool pool = (IPPool) ds.get(ResourceKey.of(ResourceKind.IP_POOL, "default-ipv4-ippool")).orElseThrow();
        assertThat(pool.spec().cidr()).isEqualTo("10.244.0.0/16");
        assertThat(pool.spec().blockSize()).isEqualTo(26);
        assertThat(pool.spec().ipipMode()).isEqualTo(EncapsulationMode.Always);
        assertThat(pool.spec().vxlanMode()).isEqualTo(EncapsulationMode.Never);
        assertThat(pool.spec().natOutgoing()).isTrue();
        ClusterInformationSpec ci = clusterInformation().spec();
        assertThat(ci.datastoreReady()).isTrue();
        assertThat(ci.clusterGUID()).matches("[0-9a-f]{32}");
        assertThat(ci.calicoVersion()).isEqualTo("v0.1.0-test");
        assertThat(ci.clusterType()).isEqualTo(kubernetes() ? "kdd" : null);
        Tier tier = (Tier) ds.get(ResourceKey.of(ResourceKind.TIER, "default")).orElseThrow();
        assertThat(tier.spec().order()).isEqualTo(1_000_000d);
        assertThat(tier.spec().defaultAction()).isEqualTo(Action.Deny);
        Tier admin = (Tier) ds.get(ResourceKey.of(ResourceKind.TIER, "kube-admin")).orElseThrow();
        assertThat(admin.spec().order()).isEqualTo(1_000d);
        assertThat(admin.spec().defaultAction()).isEqualTo(Action.Pass);
        Tier baseline = (Tier) ds.get(ResourceKey.of(ResourceKind.TIER, "kube-baseline")).orElseThrow();
        assertThat(baseline.spec().order()).isEqualTo(10_000_000d);
        assertThat(baseline.spec().defaultAction()).isEqualTo(Action.Pass);
        FelixConfiguration fc = (FelixConfiguration) ds.get(ResourceKey.of(ResourceKind.FELIX_CONFIGURATION, "default"))
                .orElseThrow();
        assertThat(fc.spec().reportingInterval()).isEqualTo("0s");
        assertThat(fc.spec().logSeverityScreen()).isEqualTo("Info");
        assertThat(ds.get(ResourceKey.of(ResourceKind.FELIX_CONFIGURATION, "node." + NODE)).isPresent())
                .as("per-node FelixConfiguration only off the kubernetes datastore").isEqualTo(!kubernetes());
        assertThat(ds.get(ResourceKey.of(ResourceKind.BGP_CONFIGURATION, "default"))).get()
                .isInstanceOf(BGPConfiguration.class);
        assertThat(ds.get(ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, "default"))).isPresent();

        String ipip = node.spec().bgp().ipv4IPIPTunnelAddr();
        assertTunnelAddress(ipip, "ipip-tunnel-addr-" + NODE, "ipipTunnelAddress", "10.244.0.0/16");
        assertThat(node.spec().ipv4VXLANTunnelAddr()).as("no VXLAN pool").isNull();

        Map<String, String> versions = resourceVersions();
        NodeStartup.Result second = startup().run(defaults());
        assertThat(second.changes()).as("nothing was missing").isEmpty();
        assertThat(resourceVersions()).as("no resource written again").isEqualTo(versions);
        assertThat(node().spec().bgp().ipv4IPIPTunnelAddr()).isEqualTo(ipip);
    }

    @Test
    void aPoolTheUserMadeStopsTheDefaultPool() {
        ds.create(new IPPool(ObjectMeta.named("mine"), new IPPoolSpec("10.50.0.0/16", EncapsulationMode.Always,
                EncapsulationMode.Never, true, null, null, 24, null, null, null, null)));
        startup().run(defaults());
        assertThat(ds.list(ResourceKind.IP_POOL).items()).extracting(r -> r.metadata().name()).containsExactly("mine");
        Node node = node();
        assertThat(node.spec().bgp().ipv4IPIPTunnelAddr()).as("the user's pool has no IPIP").isNull();
        assertTunnelAddress(node.spec().ipv4VXLANTunnelAddr(), "vxlan-tunnel-addr-" + NODE, "vxlanTunnelAddress",
                "10.50.0.0/16");
    }

    @Test
    void anUnsetPoolCidrTakesThePrivateRangeNoHostAddressIsIn() {
        List<HostInterface> host = new java.util.ArrayList<>(HOST);
        host.add(new HostInterface(5, "eth2", List.of(Cidr.parse("192.168.10.5/24"))));
        NodeStartup onThisHost = new NodeStartup(ds, new AddressDetector(() -> host, KubernetesNodes.NONE));
        PoolSettings unset = new PoolSettings(true, Optional.empty(), 26, EncapsulationMode.Never,
                EncapsulationMode.Never, true, "", false);
        onThisHost.run(settings(node(new AddressSetting.Unset(), new AddressSetting.Unset(), null), unset,
                PoolSettings.disabled()));
        // 192.168.0.0/16 holds eth2's address, 172.16.0.0/16 none (docker0 is in 172.17).
        assertThat(ds.list(ResourceKind.IP_POOL).items()).singleElement()
                .satisfies(p -> assertThat(((IPPool) p).spec().cidr()).isEqualTo("172.16.0.0/16"));
    }

    @Test
    void tunnelAddressesAreAssignedAndReleasedAsPoolsChangeTheirEncapsulation() {
        NodeStartup.Settings s = settings(node(new AddressSetting.Unset(), new AddressSetting.Autodetect(), null),
                pool("10.60.0.0/16", 26, EncapsulationMode.Never, EncapsulationMode.Always, true),
                pool("fd00:60::/48", 122, EncapsulationMode.Never, EncapsulationMode.CrossSubnet, false));
        startup().run(s);
        Node node = node();
        assertThat(node.spec().bgp().ipv6Address()).isEqualTo("2001:db8::5/64");
        String vxlan = node.spec().ipv4VXLANTunnelAddr();
        String vxlan6 = node.spec().ipv6VXLANTunnelAddr();
        assertTunnelAddress(vxlan, "vxlan-tunnel-addr-" + NODE, "vxlanTunnelAddress", "10.60.0.0/16");
        assertTunnelAddress(vxlan6, "vxlan-v6-tunnel-addr-" + NODE, "vxlanV6TunnelAddress", "fd00:60::/48");
        assertThat(node.spec().bgp().ipv4IPIPTunnelAddr()).isNull();

        // IPv4 pool: VXLAN -> IPIP. The VXLAN address is released, an IPIP one assigned.
        setEncapsulation("default-ipv4-ippool", EncapsulationMode.Always, EncapsulationMode.Never);
        NodeStartup.Result r = startup().run(s);
        assertThat(r.changes()).anyMatch(c -> c.startsWith("released vxlanTunnelAddress " + vxlan))
                .anyMatch(c -> c.startsWith("assigned ipipTunnelAddress"));
        node = node();
        assertThat(node.spec().ipv4VXLANTunnelAddr()).isNull();
        assertThat(ipam().addressesByHandle("vxlan-tunnel-addr-" + NODE)).isEmpty();
        assertThat(ds.get(handleKey("vxlan-tunnel-addr-" + NODE))).isEmpty();
        assertTunnelAddress(node.spec().bgp().ipv4IPIPTunnelAddr(), "ipip-tunnel-addr-" + NODE, "ipipTunnelAddress",
                "10.60.0.0/16");
        assertThat(node.spec().ipv6VXLANTunnelAddr()).as("the IPv6 pool did not change").isEqualTo(vxlan6);

        // No encapsulation anywhere: every tunnel address goes.
        setEncapsulation("default-ipv4-ippool", EncapsulationMode.Never, EncapsulationMode.Never);
        setEncapsulation("default-ipv6-ippool", EncapsulationMode.Never, EncapsulationMode.Never);
        startup().run(s);
        node = node();
        assertThat(node.spec().bgp().ipv4IPIPTunnelAddr()).isNull();
        assertThat(node.spec().ipv6VXLANTunnelAddr()).isNull();
        assertThat(node.spec().bgp().ipv4Address()).as("the rest of the Node stays").isEqualTo("10.0.0.5/24");
        for (String h : List.of("ipip-tunnel-addr-", "vxlan-tunnel-addr-", "vxlan-v6-tunnel-addr-")) {
            assertThat(ipam().addressesByHandle(h + NODE)).as(h).isEmpty();
        }
        assertThat(startup().run(s).changes()).isEmpty();
    }

    @Test
    void wireguardAddressesFollowFelixsPublishedKeysAndNotHostEncryption() {
        NodeStartup.Settings s = settings(node(new AddressSetting.Unset(), new AddressSetting.Autodetect(), null),
                pool("10.61.0.0/16", 26, EncapsulationMode.Never, EncapsulationMode.Never, true),
                pool("fd00:61::/48", 122, EncapsulationMode.Never, EncapsulationMode.Never, false));
        startup().run(s);
        assertThat(node().spec().wireguard()).as("no key published: WireGuard does not run here").isNull();

        setWireguardKeys("dGhpcyBpcyBub3QgYSByZWFsIGtleSBidXQgMzIgYnk=", "c2Vjb25kIGtleSBmb3IgdGhlIElQdjYgZGV2aWNlIQ==");
        NodeStartup.Result r = startup().tunnelAddresses(NODE, false);
        assertThat(r.changes()).anyMatch(c -> c.startsWith("assigned wireguardTunnelAddress"))
                .anyMatch(c -> c.startsWith("assigned wireguardV6TunnelAddress"));
        Node node = node();
        assertTunnelAddress(node.spec().wireguard().interfaceIPv4Address(), "wireguard-tunnel-addr-" + NODE,
                "wireguardTunnelAddress", "10.61.0.0/16");
        assertTunnelAddress(node.spec().wireguard().interfaceIPv6Address(), "wireguard-v6-tunnel-addr-" + NODE,
                "wireguardV6TunnelAddress", "fd00:61::/48");
        assertThat(node.status().wireguardPublicKey()).as("the status is kept").startsWith("dGhp");
        assertThat(startup().tunnelAddresses(NODE, false).changes()).isEmpty();

        // Host encryption: the device uses the node's address, so neither is kept.
        assertThat(startup().tunnelAddresses(NODE, true).changes()).hasSize(2);
        assertThat(node().spec().wireguard()).isNull();
        assertThat(ipam().addressesByHandle("wireguard-tunnel-addr-" + NODE)).isEmpty();

        // Back without host encryption, then the IPv6 key withdrawn: only the IPv4 address stays.
        startup().tunnelAddresses(NODE, false);
        setWireguardKeys("dGhpcyBpcyBub3QgYSByZWFsIGtleSBidXQgMzIgYnk=", null);
        assertThat(startup().tunnelAddresses(NODE, false).changes()).singleElement()
                .satisfies(c -> assertThat(c).startsWith("released wireguardV6TunnelAddress"));
        assertThat(node().spec().wireguard().interfaceIPv6Address()).isNull();
        assertThat(node().spec().wireguard().interfaceIPv4Address()).isNotNull();
        assertThat(ipam().addressesByHandle("wireguard-v6-tunnel-addr-" + NODE)).isEmpty();
    }

    @Test
    void whatIsAlreadySetIsKept() {
        ds.create(new ClusterInformation(ObjectMeta.named("default"), new ClusterInformationSpec(
                "0123456789abcdef0123456789abcdef", "typha", "v3.29.0", false, null)));
        startup().run(settings(node(new AddressSetting.Unset(), new AddressSetting.Unset(), ASNumber.of(65001)),
                PoolSettings.disabled(), PoolSettings.disabled()));
        ClusterInformationSpec ci = clusterInformation().spec();
        assertThat(ci.clusterGUID()).isEqualTo("0123456789abcdef0123456789abcdef");
        assertThat(ci.datastoreReady()).as("explicitly false stays false").isFalse();
        assertThat(ci.calicoVersion()).isEqualTo("v0.1.0-test");
        assertThat(ci.clusterType()).isEqualTo(kubernetes() ? "typha,kdd" : "typha");
        assertThat(ds.list(ResourceKind.IP_POOL).items()).as("NO_DEFAULT_POOLS").isEmpty();
        assertThat(node().spec().bgp().asNumber()).isEqualTo(ASNumber.of(65001));

        // AS unset keeps the Node's; an explicit IP replaces the address, with the host's prefix.
        startup().run(settings(node(AddressSetting.parse("10.0.0.5", 4, "IP"), new AddressSetting.Unset(), null),
                PoolSettings.disabled(), PoolSettings.disabled()));
        assertThat(node().spec().bgp().asNumber()).isEqualTo(ASNumber.of(65001));
        assertThat(node().spec().bgp().ipv4Address()).isEqualTo("10.0.0.5/24");
    }

    @Test
    void anotherNodeWithTheSameAddressStopsStartUp() {
        nodeExists("node-b");
        startup().run(defaults());
        NodeSettings b = new NodeSettings("node-b", "node-b", false, AddressSetting.parse("10.0.0.5/24", 4, "IP"),
                new AddressSetting.Unset(), new AutodetectionMethod.FirstFound(), new AutodetectionMethod.FirstFound(),
                null, false, true, false);
        assertThatThrownBy(() -> startup().run(settings(b, PoolSettings.disabled(), PoolSettings.disabled())))
                .isInstanceOf(StartupException.class).hasMessageContaining(NODE).hasMessageContaining("10.0.0.5/24")
                .hasMessageContaining("DISABLE_NODE_IP_CHECK");
    }

    @Test
    void autodetectionThatFindsNothingNamesTheMethod() {
        NodeSettings s = new NodeSettings(NODE, NODE, false, new AddressSetting.Autodetect(),
                new AddressSetting.Unset(), new AutodetectionMethod.Interface(List.of("^wlan.*")),
                new AutodetectionMethod.FirstFound(), null, false, true, false);
        assertThatThrownBy(() -> startup().run(settings(s, PoolSettings.disabled(), PoolSettings.disabled())))
                .isInstanceOf(StartupException.class).hasMessageContaining("IP_AUTODETECTION_METHOD=interface=^wlan.*")
                .hasMessageContaining("no valid host interfaces found");
    }

    // ---------------------------------------------------------------- helpers

    Node node() {
        return (Node) ds.get(ResourceKey.of(ResourceKind.NODE, NODE)).orElseThrow();
    }

    ClusterInformation clusterInformation() {
        return (ClusterInformation) ds.get(ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, "default")).orElseThrow();
    }

    IpamClient ipam() {
        return new IpamClient(ds, IpamOptions.defaults());
    }

    static ResourceKey handleKey(String handle) {
        return ResourceKey.of(ResourceKind.IPAM_HANDLE, handle);
    }

    /** The address is the handle's only one, in the pool, in a block affine to this node, with Calico's attributes. */
    void assertTunnelAddress(String address, String handle, String type, String pool) {
        assertThat(address).as(type).isNotNull();
        IpAddress ip = IpAddress.parse(address);
        assertThat(Cidr.parse(pool).contains(ip)).as(address + " in " + pool).isTrue();
        assertThat(ipam().addressesByHandle(handle)).containsExactly(ip);
        assertThat(ds.get(handleKey(handle))).get().isInstanceOf(IPAMHandle.class);
        IPAMBlock block = ds.list(ResourceKind.IPAM_BLOCK).items().stream().map(IPAMBlock.class::cast)
                .filter(b -> Cidr.parse(b.spec().cidr()).contains(ip)).findFirst().orElseThrow();
        assertThat(block.spec().affineNode()).isEqualTo(NODE);
        int ordinal = ordinal(Cidr.parse(block.spec().cidr()), ip);
        var attr = block.spec().attributes().get(block.spec().allocations().get(ordinal));
        assertThat(attr.handleId()).isEqualTo(handle);
        assertThat(attr.secondary()).isEqualTo(Map.of("node", NODE, "type", type));
    }

    private static int ordinal(Cidr block, IpAddress ip) {
        return new java.math.BigInteger(1, ip.toBytes()).subtract(new java.math.BigInteger(1, block.address().toBytes()))
                .intValueExact();
    }

    /** Felix's publication of its public keys in the Node's status. */
    void setWireguardKeys(String v4, String v6) {
        Node n = node();
        ds.updateStatus(new Node(n.metadata(), n.spec(), new calico.api.model.NodeStatus(v4, v6,
                n.status() == null ? List.of() : n.status().podCIDRs())));
    }

    void setEncapsulation(String pool, EncapsulationMode ipip, EncapsulationMode vxlan) {
        IPPool p = (IPPool) ds.get(ResourceKey.of(ResourceKind.IP_POOL, pool)).orElseThrow();
        IPPoolSpec s = p.spec();
        ds.update(new IPPool(p.metadata(), new IPPoolSpec(s.cidr(), vxlan, ipip, s.natOutgoing(), s.disabled(),
                s.disableBGPExport(), s.blockSize(), s.nodeSelector(), s.namespaceSelector(), s.allowedUses(),
                s.assignmentMode())));
    }

    /** Every resource start-up may write, by key, with its resourceVersion. */
    Map<String, String> resourceVersions() {
        Map<String, String> out = new TreeMap<>();
        for (ResourceKind k : List.of(ResourceKind.NODE, ResourceKind.IP_POOL, ResourceKind.CLUSTER_INFORMATION,
                ResourceKind.TIER, ResourceKind.FELIX_CONFIGURATION, ResourceKind.BGP_CONFIGURATION,
                ResourceKind.IPAM_CONFIGURATION, ResourceKind.IPAM_BLOCK, ResourceKind.BLOCK_AFFINITY,
                ResourceKind.IPAM_HANDLE)) {
            for (Resource r : ds.list(k).items()) {
                out.put(r.key().toString(), r.metadata().resourceVersion());
            }
        }
        assertThat(out).hasSizeGreaterThan(8);
        return out;
    }
}
