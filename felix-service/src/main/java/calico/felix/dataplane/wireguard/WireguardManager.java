package calico.felix.dataplane.wireguard;

import calico.dataplane.netlink.Address;
import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.netlink.Link;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.Route;
import calico.dataplane.netlink.RoutingRule;
import calico.dataplane.netlink.RoutingRules;
import calico.dataplane.netlink.Sysctls;
import calico.dataplane.wireguard.WireguardBackend;
import calico.dataplane.wireguard.WireguardChange;
import calico.dataplane.wireguard.WireguardKey;
import calico.dataplane.wireguard.WireguardState;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.WireguardEndpointUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Programs WireGuard as Calico's felix does, from the dataplane's one model: the device
 * ({@code wireguardInterfaceName}) with this node's key pair (kept on the device: a device that
 * has a private key keeps it, so restarts of felix keep the published key), the listening port,
 * the firewall mark and one peer per other node ({@link WireguardPlan}); routes to those peers'
 * allowed IPs via the device in the family's routing table (the first index of
 * {@code routeTableRanges} for IPv4, {@value #TABLE} by default; the second for IPv6); and the rule
 * {@code not fwmark M/M lookup T} at {@code wireguardRoutingRulePriority}, so every packet the
 * device did not itself send (its encrypted UDP carries mark M) looks in that table first.
 * When WireGuard of the family is off, the rule, the table's routes and the device go and the
 * published key is withdrawn. One manager per family (IPv4: {@code wireguard.cali}, IPv6:
 * {@code wg-v6.cali}), each with its own device, key pair and table, as Calico's felix runs two.
 *
 * <p>Incremental: {@link #update} compares the plan and settings with the last ones programmed
 * and touches the kernel only on a change; {@link #resync} reads the device, the rule and the
 * table back and repairs them (and makes the device again if it vanished, e.g. a wireguard-go
 * daemon that died). Single-threaded: the dataplane thread, in the namespace the netlink
 * sockets were made in. Failures are thrown to the caller, which records them and resyncs.
 */
public final class WireguardManager {

    /** The IPv4 table with Calico's default {@code routeTableRanges} (the first index felix allocates). */
    public static final long TABLE = 1;
    /** Calico's {@code RTPROT_FELIX}, as the route manager uses. */
    static final int PROTOCOL_FELIX = 80;

    private static final Logger log = LoggerFactory.getLogger(WireguardManager.class);

    private final Netlink netlink;
    private final Sysctls sysctls;
    private final DataplaneModel model;
    private final WireguardHost host;
    private final Supplier<WireguardBackend> backends;
    private final IpFamily family;
    /** The table this manager last programmed or cleaned (its routes and rule are removed from it when it changes). */
    private long programmedTable;
    private WireguardBackend backend;
    private RoutingRules rules;

    /** What was last programmed (null: nothing, or unknown). */
    private Programmed programmed;
    /** The device name WireGuard was last programmed on, for removal after a rename or a disable. */
    private String programmedDevice;
    private boolean cleanedAtStart;
    private String publishedKey;
    /** This node's public key as last read from (or made for) the device. */
    private WireguardKey currentKey;
    /** The device MTU, from the one MTU calculation. */
    private final IntSupplier mtu;
    /** The first outcome (a key, or none) is always told, so a stale key left on the Node goes. */
    private boolean publishedOnce;

    private record Programmed(String device, int port, int fwmark, int priority, long table, int mtu, String address,
                              WireguardPlan plan) {
    }

    /** IPv4 WireGuard. */
    public WireguardManager(Netlink netlink, Sysctls sysctls, DataplaneModel model, WireguardHost host,
                            Supplier<WireguardBackend> backends, IntSupplier mtu) {
        this(netlink, sysctls, model, host, backends, mtu, IpFamily.V4);
    }

    /**
     * WireGuard of one family: IPv4 ({@code wireguardEnabled}, {@code wireguardInterfaceName},
     * {@code wireguardListeningPort}, the first table of {@code routeTableRanges}, the Node's
     * {@code wireguardPublicKey}) or IPv6 ({@code wireguardEnabledV6} with {@code ipv6Support},
     * {@code wireguardInterfaceNameV6}, {@code wireguardListeningPortV6}, the second table,
     * {@code wireguardPublicKeyV6}); both share the firewall mark and the rule priority, as in Calico.
     */
    public WireguardManager(Netlink netlink, Sysctls sysctls, DataplaneModel model, WireguardHost host,
                            Supplier<WireguardBackend> backends, IntSupplier mtu, IpFamily family) {
        this.family = Objects.requireNonNull(family, "family");
        this.mtu = Objects.requireNonNull(mtu, "mtu");
        this.netlink = Objects.requireNonNull(netlink, "netlink");
        this.sysctls = Objects.requireNonNull(sysctls, "sysctls");
        this.model = Objects.requireNonNull(model, "model");
        this.host = Objects.requireNonNull(host, "host");
        this.backends = Objects.requireNonNull(backends, "backends");
    }

    /** {@return the fwmark of the device's own packets}: the fifth bit of {@code iptablesMarkMask}, where Calico allocates it */
    static int firewallMark(long markMask) {
        long m = markMask;
        for (int i = 0; i < 4; i++) {
            m &= ~Long.lowestOneBit(m);
        }
        long bit = Long.lowestOneBit(m);
        if (bit == 0) {
            throw new IllegalArgumentException("iptablesMarkMask 0x" + Long.toHexString(markMask)
                    + ": WireGuard needs a fifth mark bit");
        }
        return (int) bit;
    }

    /**
     * {@return whether {@code u} changes what {@link #update} reads from the model}: the hosts,
     * the WireGuard endpoints, the routes, the configuration and whether the model is in sync (the
     * device MTU comes from the MTU calculation, whose changes the caller passes on itself).
     */
    public static boolean reads(DataplaneUpdate u) {
        return u instanceof DataplaneUpdate.HostMetadataUpdate || u instanceof DataplaneUpdate.HostMetadataRemove
                || u instanceof WireguardEndpointUpdate || u instanceof DataplaneUpdate.WireguardEndpointRemove
                || u instanceof DataplaneUpdate.WireguardEndpointV6Update
                || u instanceof DataplaneUpdate.WireguardEndpointV6Remove
                || u instanceof DataplaneUpdate.RouteUpdate || u instanceof DataplaneUpdate.RouteRemove
                || u instanceof DataplaneUpdate.ConfigUpdate || u instanceof DataplaneUpdate.InSync;
    }

    /** Brings the kernel to the model when the plan or the settings changed since the last update. */
    public void update() {
        sync(false);
    }

    /** Reads everything back and repairs it. */
    public void resync() {
        sync(true);
    }

    /** {@return the device name programmed}, null when WireGuard is off */
    public String device() {
        return programmed == null ? null : programmed.device();
    }

    private void sync(boolean full) {
        if (!model.inSync() && programmed == null) {
            return; // the snapshot is incomplete: no peers from half of it, and no removal either
        }
        FelixSettings c = model.config();
        long table = table(c);
        boolean enabled = enabled(c) && table != 0;
        if (programmedTable != 0 && programmedTable != table) {
            removeTable(programmedTable); // routeTableRanges moved this family's table
            programmed = null;
        }
        if (!enabled || host.hostname().isEmpty()) {
            boolean tell = !cleanedAtStart || full || programmed != null; // once, and at each refresh
            if (!tell) {
                // said already
            } else if (enabled(c) && table == 0) {
                log.warn("{} is true but routeTableRanges leave it no routing table: WireGuard ({}) is not programmed",
                        enabledField(), family);
            } else if (enabled) {
                log.warn("{} is true but this dataplane has no node name: WireGuard is not programmed", enabledField());
            } else if (family == IpFamily.V6 && c.wireguardEnabledV6()) {
                log.warn("wireguardEnabledV6 is true but ipv6Support is false: IPv6 WireGuard is not programmed");
            }
            if (programmed != null || !cleanedAtStart || full) {
                removeAll(device(c), table);
            }
            return;
        }
        String device = device(c);
        int port = port(c);
        if (programmedDevice != null && !programmedDevice.equals(device)) {
            removeAll(programmedDevice, table);
        }
        int fwmark = firewallMark(c.iptablesMarkMask());
        int keepalive = (int) Math.min(65535, c.wireguardKeepAlive().toSeconds());
        int mtu = this.mtu.getAsInt(); // the one MTU calculation's: wireguardMTU(V6) when set, else host MTU - 60 (80)
        Map<String, WireguardPlan.Endpoint> endpoints = endpoints();
        WireguardPlan.Endpoint own = endpoints.get(host.hostname());
        String address = own == null ? null : own.interfaceAddress();
        // With the key known (an incremental update after a success), the plan is made once and compared;
        // otherwise the key is read from the device first, and the plan made with it below.
        WireguardPlan plan = null;
        if (programmed != null && !full) {
            plan = WireguardPlan.compute(family, host.hostname(), currentKey, port, keepalive,
                    c.wireguardHostEncryptionEnabled(), model.hosts(), endpoints, model.routes());
            if (new Programmed(device, port, fwmark, c.wireguardRoutingRulePriority(), table, mtu,
                    address, plan).equals(programmed)) {
                return;
            }
        }
        programmed = null; // until this succeeds
        programmedDevice = device;
        programmedTable = table;
        WireguardBackend wg = backend();
        if (wg.ensureDevice(device)) {
            log.info("Created WireGuard device {} ({})", device, wg.name());
        }
        WireguardState now = wg.read(device).orElseThrow(() -> new IllegalStateException("WireGuard device " + device
                + " vanished while being programmed"));
        WireguardKey privateKey = now.privateKey() != null ? now.privateKey() : WireguardKey.generatePrivate();
        currentKey = privateKey.publicKey();
        if (plan == null) {
            // Now that the key is known, a node publishing the same key is no peer.
            plan = WireguardPlan.compute(family, host.hostname(), currentKey, port, keepalive,
                    c.wireguardHostEncryptionEnabled(), model.hosts(), endpoints, model.routes());
        }
        Programmed next = new Programmed(device, port, fwmark, c.wireguardRoutingRulePriority(), table,
                mtu, address, plan);
        WireguardChange change = WireguardChange.between(now,
                new WireguardState(privateKey, port, fwmark, plan.byKey()));
        wg.apply(device, change);
        if (!change.setPeers().isEmpty() || !change.removePeers().isEmpty()) {
            log.info("WireGuard {}: {} peer(s) set, {} removed; peers now {}", device, change.setPeers().size(),
                    change.removePeers().size(), plan.nodes());
        }
        Link link = netlink.link(device).orElseThrow(() -> new IllegalStateException("WireGuard device " + device + " has no link"));
        if (mtu > 0 && link.mtu() != mtu) {
            netlink.setLinkMtu(device, mtu);
        }
        syncAddress(link.index(), next.address());
        if (!link.up()) {
            netlink.setLinkUp(device, true);
        }
        if (family == IpFamily.V4) {
            // Incoming tunnel packets carry the device's mark for rp_filter only if src_valid_mark is on (as Calico
            // sets it; IPv6 has no rp_filter).
            sysctls.write("net/ipv4/conf/all/src_valid_mark", "1");
        }
        syncRoutes(link.index(), plan.routes(), table);
        syncRule(new RoutingRule(family == IpFamily.V6, c.wireguardRoutingRulePriority(), table, fwmark, fwmark, true),
                table);
        programmed = next;
        cleanedAtStart = true;
        publish(currentKey.base64());
    }


    private boolean ofFamily(IpPrefix p) {
        return p.isIpv4() == (family == IpFamily.V4);
    }

    private boolean enabled(FelixSettings c) {
        return family == IpFamily.V4 ? c.wireguardEnabled() : c.wireguardEnabledV6() && c.ipv6Support();
    }

    private String enabledField() {
        return family == IpFamily.V4 ? "wireguardEnabled" : "wireguardEnabledV6";
    }

    private String device(FelixSettings c) {
        return family == IpFamily.V4 ? c.wireguardInterfaceName() : c.wireguardInterfaceNameV6();
    }

    private int port(FelixSettings c) {
        return family == IpFamily.V4 ? c.wireguardListeningPort() : c.wireguardListeningPortV6();
    }

    private long table(FelixSettings c) {
        return family == IpFamily.V4 ? c.wireguardTableIndex() : c.wireguardTableIndexV6();
    }

    /** This family's WireGuard endpoints of the model, by node name. */
    private Map<String, WireguardPlan.Endpoint> endpoints() {
        Map<String, WireguardPlan.Endpoint> out = new HashMap<>();
        if (family == IpFamily.V4) {
            model.wireguardEndpoints().forEach((n, e) -> out.put(n,
                    new WireguardPlan.Endpoint(e.publicKey(), e.interfaceIpv4Address())));
        } else {
            model.wireguardEndpointsV6().forEach((n, e) -> out.put(n,
                    new WireguardPlan.Endpoint(e.publicKeyV6(), e.interfaceIpv6Address())));
        }
        return out;
    }

    private void syncAddress(int index, String address) {
        IpPrefix want = address == null ? null : IpPrefix.host(IpPrefix.parse(address).address());
        boolean has = false;
        for (Address a : netlink.addresses(index)) {
            if (!ofFamily(a.prefix()) || a.prefix().address().isLinkLocalAddress()) {
                continue;
            }
            if (a.prefix().equals(want)) {
                has = true;
            } else {
                netlink.deleteAddress(index, a.prefix());
            }
        }
        if (want != null && !has) {
            netlink.addAddress(index, want);
        }
    }

    private void syncRoutes(int index, Set<IpPrefix> want, long table) {
        Map<IpPrefix, Route> have = new HashMap<>();
        for (Route r : netlink.routes(table)) {
            if (r.protocol() == PROTOCOL_FELIX && ofFamily(r.destination())) {
                have.put(r.destination(), r);
            }
        }
        for (Route r : have.values()) {
            if (!want.contains(r.destination()) || r.linkIndex() != index) {
                deleteRoute(r);
            }
        }
        for (IpPrefix dst : want) {
            Route r = have.get(dst);
            if (r == null || r.linkIndex() != index) {
                netlink.replaceRoute(Route.device(dst, index).inTable(table).withProtocol(PROTOCOL_FELIX));
            }
        }
    }

    private void deleteRoute(Route r) {
        try {
            netlink.deleteRoute(r);
        } catch (NetlinkException e) {
            if (!e.notFound()) {
                throw e;
            }
        }
    }

    private void syncRule(RoutingRule want, long table) {
        boolean present = false;
        for (RoutingRule r : rules().list()) {
            if (r.equals(want)) {
                present = true;
            } else if (isOurs(r, table)) {
                rules().delete(r);
            }
        }
        if (!present) {
            rules().add(want);
        }
    }

    /** An inverted fwmark rule of our family to our table: a rule of ours, at whatever priority or mark it was made with. */
    private boolean isOurs(RoutingRule r, long table) {
        return r.ipv6() == (family == IpFamily.V6) && r.table() == table && r.invert() && r.mask() != 0;
    }

    /** Removes our rule to {@code table} and felix's routes of our family in it. */
    private void removeTable(long table) {
        for (RoutingRule r : rules().list()) {
            if (isOurs(r, table)) {
                rules().delete(r);
            }
        }
        for (Route r : netlink.routes(table)) {
            if (r.protocol() == PROTOCOL_FELIX && ofFamily(r.destination())) {
                deleteRoute(r);
            }
        }
    }

    private void removeAll(String device, long table) {
        if (table != 0) {
            removeTable(table);
        }
        Optional<Link> link = netlink.link(device);
        if (link.isPresent()) {
            backend().deleteDevice(device);
            log.info("WireGuard ({}) is off: removed device {}, its routing rule and table {}", family, device, table);
        } else if (programmedDevice != null && !programmedDevice.equals(device)) {
            netlink.link(programmedDevice).ifPresent(l -> backend().deleteDevice(programmedDevice));
        }
        programmed = null;
        programmedDevice = null;
        programmedTable = table;
        cleanedAtStart = true;
        currentKey = null;
        publish(null);
    }

    private void publish(String key) {
        if (!publishedOnce || !Objects.equals(key, publishedKey)) {
            publishedOnce = true;
            publishedKey = key;
            (family == IpFamily.V4 ? host.publicKeyListener() : host.publicKeyV6Listener()).accept(key);
        }
    }

    private WireguardBackend backend() {
        if (backend == null) {
            backend = backends.get();
            log.info("WireGuard devices are {}", backend.name());
        }
        return backend;
    }

    private RoutingRules rules() {
        if (rules == null) {
            rules = new RoutingRules();
        }
        return rules;
    }

    /** {@return the public key this node publishes}, null when none */
    public String publicKey() {
        return publishedKey;
    }

    public void close() {
        if (backend != null) {
            backend.close();
        }
        if (rules != null) {
            rules.close();
        }
    }
}
