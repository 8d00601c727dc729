package calico.dataplane.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.testing.NetNs;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two namespaces on a veth underlay, each with a wireguard-go device of the same name (Calico's
 * {@code wireguard.cali}: the per-namespace socket directories keep them apart), configured
 * through {@link UserspaceWireguard}; packets cross the tunnel, and the read-back is what was set.
 */
class UserspaceWireguardTest {
    static final String PREFIX = "wg-uwt";
    static final String DEV = "wireguard.cali";

    private NetNs a;
    private NetNs b;

    @BeforeEach
    void underlay() {
        assumeTrue(UserspaceWireguard.installed(), "wireguard-go is not installed (scripts/lib/install-deps.sh)");
        a = NetNs.create(PREFIX);
        b = NetNs.create(PREFIX);
        a.veth("eth0", b, "eth0");
        a.exec("ip", "addr", "add", "10.99.0.1/24", "dev", "eth0");
        b.exec("ip", "addr", "add", "10.99.0.2/24", "dev", "eth0");
    }

    /**
     * The devices go before the namespaces: a wireguard-go daemon keeps its network namespace
     * alive after {@code ip netns delete}, and would run on unseen.
     */
    @AfterEach
    void delete() throws Exception {
        for (NetNs ns : new NetNs[] {a, b}) {
            if (ns != null) {
                ns.run(() -> {
                    try (WireguardBackend wg = backend(ns)) {
                        wg.deleteDevice(DEV);
                    }
                });
                ns.close();
                try (var files = Files.walk(socketDir(ns))) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    static Path socketDir(NetNs ns) {
        return Path.of("/run/calico-test-wireguard", ns.name());
    }

    static WireguardBackend backend(NetNs ns) {
        return new UserspaceWireguard(List.of("ip", "netns", "exec", ns.name()), socketDir(ns));
    }

    private static void bringUp(NetNs ns, String address) {
        ns.run(() -> {
            try (Netlink nl = new Netlink()) {
                nl.addAddress(nl.linkIndex(DEV), IpPrefix.parse(address));
                nl.setLinkUp(DEV, true);
            }
        });
    }

    @Test
    void twoNamespacesTalkThroughSameNamedDevicesAndRemovalStopsTheDaemon() throws Exception {
        WireguardKey ka = WireguardKey.generatePrivate();
        WireguardKey kb = WireguardKey.generatePrivate();
        WireguardState wantA = new WireguardState(ka, 51820, 0x100000, Map.of(kb.publicKey(),
                new WireguardPeer(kb.publicKey(), new InetSocketAddress(InetAddress.getByName("10.99.0.2"), 51820),
                        Set.of(IpPrefix.parse("10.200.0.2/32")), 0)));
        WireguardState wantB = new WireguardState(kb, 51820, 0x100000, Map.of(ka.publicKey(),
                new WireguardPeer(ka.publicKey(), new InetSocketAddress(InetAddress.getByName("10.99.0.1"), 51820),
                        Set.of(IpPrefix.parse("10.200.0.1/32")), 0)));
        for (var e : Map.of(a, wantA, b, wantB).entrySet()) {
            WireguardState got = e.getKey().call(() -> {
                try (WireguardBackend wg = backend(e.getKey())) {
                    assertThat(wg.read(DEV)).isEmpty();
                    assertThat(wg.ensureDevice(DEV)).isTrue();
                    assertThat(wg.ensureDevice(DEV)).isFalse();
                    wg.apply(DEV, WireguardChange.between(wg.read(DEV).orElseThrow(), e.getValue()));
                    return wg.read(DEV).orElseThrow();
                }
            });
            assertThat(got).isEqualTo(e.getValue());
            assertThat(Files.exists(socketDir(e.getKey()).resolve(DEV + ".sock"))).isTrue();
        }
        bringUp(a, "10.200.0.1/32");
        bringUp(b, "10.200.0.2/32");
        a.exec("ip", "route", "add", "10.200.0.2/32", "dev", DEV);
        b.exec("ip", "route", "add", "10.200.0.1/32", "dev", DEV);

        assertThat(a.pings("10.200.0.2", Duration.ofSeconds(10))).isTrue();

        // The peer goes: no more packets through the tunnel.
        a.run(() -> {
            try (WireguardBackend wg = backend(a)) {
                WireguardState now = wg.read(DEV).orElseThrow();
                WireguardState without = new WireguardState(now.privateKey(), now.listenPort(), now.fwmark(), Map.of());
                wg.apply(DEV, WireguardChange.between(now, without));
                assertThat(wg.read(DEV).orElseThrow().peers()).isEmpty();
            }
        });
        assertThat(a.pings("10.200.0.2", Duration.ofSeconds(1))).isFalse();

        boolean deleted = b.call(() -> {
            try (WireguardBackend wg = backend(b)) {
                boolean d = wg.deleteDevice(DEV);
                assertThat(wg.read(DEV)).isEmpty();
                return d;
            }
        });
        assertThat(deleted).isTrue();
        assertThat(b.tryExec("ip", "link", "show", DEV).status()).isNotZero();
    }
}
