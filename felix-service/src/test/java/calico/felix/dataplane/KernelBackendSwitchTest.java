package calico.felix.dataplane;

import static calico.felix.dataplane.KernelTestbed.allowAllProfile;
import static calico.felix.dataplane.KernelTestbed.allowFromOnPort;
import static calico.felix.dataplane.KernelTestbed.felixConfig;
import static calico.felix.dataplane.KernelTestbed.tier;
import static calico.felix.dataplane.KernelTestbed.wep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.Await;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The policy backend follows FelixConfiguration at run time: a FelixConfiguration edit in the
 * graph's stream moves the rules from iptables-nft to iptables-legacy in the dataplane's own
 * namespace (both backends are installed here), the old backend keeps nothing of ours, the new
 * one holds everything, routes are untouched and real TCP still obeys the policy.
 */
class KernelBackendSwitchTest {

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    private static final String A_IP = "10.66.0.1";
    private static final String B_IP = "10.66.0.2";

    private KernelTestbed bed;

    @AfterEach
    void tearDown() {
        if (bed != null) {
            bed.close();
        }
    }

    @Test
    void aConfigEditSwitchesNftToLegacyWithoutLosingPolicyOrRoutes() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/iptables-nft-restore"))
                && Files.isExecutable(Path.of("/usr/sbin/iptables-legacy-restore")), "both iptables backends");
        bed = new KernelTestbed("kbs");
        NetNs a = bed.workload("kbsa", "calia1b2c3d4", A_IP);
        NetNs b = bed.workload("kbsb", "calib1b2c3d4", B_IP);
        bed.dataplane = new KernelDataplane(bed.host.name());

        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket allowed = b.call(() -> new ServerSocket(8080, 50, bAddr));
             ServerSocket denied = b.call(() -> new ServerSocket(9090, 50, bAddr))) {
            // (1) Start on iptables-nft: b admits a on 8080 only (the port rule and an IP set).
            bed.put(felixConfig(Map.of("iptablesBackend", "NFT")), tier("default", 1000.0),
                    allowAllProfile("kns.test"), wep("a", A_IP, "calia1b2c3d4", "a"),
                    wep("b", B_IP, "calib1b2c3d4", "b"), allowFromOnPort("b-from-a", "app == 'b'", "app == 'a'", 8080));
            bed.inSync();
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(bed.dataplane.backend()).isEqualTo("iptables-nft");
            List<String> nftChains = ourChains("iptables-nft-save");
            assertThat(nftChains).contains("cali-FORWARD");
            assertThat(ourChains("iptables-legacy-save")).isEmpty();
            assertThat(bed.host.exec("ipset", "list", "-n")).contains("cali40");
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("nft: allowed port").isTrue();
            assertThat(a.tcpConnects(B_IP, 9090, CONNECT_TIMEOUT)).as("nft: other port denied").isFalse();
            String routes = bed.host.exec("ip", "route", "show", "proto", "80");
            KernelDataplane.Status before = bed.dataplane.status();
            assertThat(before.programmed().chains()).isPositive();
            assertThat(before.programmed().sets()).isPositive();

            // (2) An unrelated config change does not restart the driver.
            bed.put(felixConfig(Map.of("iptablesBackend", "NFT", "logSeverityScreen", "Debug")));
            assertThat(bed.dataplane.status().backendRestarts()).isZero();

            // (3) The edit: iptablesBackend Legacy. One batch later the rules live in legacy only.
            // Meanwhile two probe loops try the denied port: no moment of the switch lets one through.
            java.util.concurrent.atomic.AtomicBoolean probing = new java.util.concurrent.atomic.AtomicBoolean(true);
            java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger leaks = new java.util.concurrent.atomic.AtomicInteger();
            List<Thread> probes = new java.util.ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Thread t = new Thread(() -> {
                    while (probing.get()) {
                        attempts.incrementAndGet();
                        if (a.tcpConnects(B_IP, 9090, Duration.ofMillis(20))) {
                            leaks.incrementAndGet();
                        }
                    }
                }, "switch-probe-" + i);
                t.start();
                probes.add(t);
            }
            Await.until("both probes under way", Duration.ofSeconds(10), () -> attempts.get() >= 4);
            long t0 = System.nanoTime();
            int attemptsBefore = attempts.get();
            bed.put(felixConfig(Map.of("iptablesBackend", "Legacy")));
            double switchMs = (System.nanoTime() - t0) / 1e6;
            int attemptsAfter = attempts.get();
            int during = attemptsAfter - attemptsBefore;
            Await.until("more probes after the switch", Duration.ofSeconds(10), () -> attempts.get() >= attemptsAfter + 4);
            probing.set(false);
            for (Thread t : probes) {
                t.join();
            }
            KernelDataplane.BackendSwitch sw = bed.dataplane.status().lastBackendSwitch();
            System.out.printf("backend switch nft -> legacy: %.1f ms for the batch (switch %d ms), %d ms without "
                    + "complete rules; %d probes of the denied port during it, %d in all, %d connected%n",
                    switchMs, sw.took().toMillis(), sw.unprotected().toMillis(), during, attempts.get(), leaks.get());
            assertThat(during).as("probes ran during the switch").isPositive();
            assertThat(leaks.get()).as("no probe of the denied port connected during the switch").isZero();
            assertThat(sw.unprotected()).isZero();
            assertThat(sw.from()).isEqualTo("iptables-nft");
            assertThat(sw.to()).isEqualTo("iptables-legacy");
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(bed.dataplane.backend()).isEqualTo("iptables-legacy");
            KernelDataplane.Status after = bed.dataplane.status();
            assertThat(after.backendRestarts()).isEqualTo(1);
            assertThat(after.lastApply().stats().resync()).as("the new driver started with a resync").isTrue();
            assertThat(after.programmed()).isEqualTo(before.programmed());
            assertThat(ourChains("iptables-nft-save")).as("nothing of ours left in nft").isEmpty();
            assertThat(bed.host.exec("iptables-nft-save", "-t", "filter")).doesNotContain("cali-");
            // (programmed() also counts the nat table and IPv6: compare the IPv4 filter table by name)
            assertThat(ourChains("iptables-legacy-save")).as("the same chains, now in legacy").isEqualTo(nftChains);
            assertThat(bed.host.exec("iptables-legacy-save", "-t", "filter")).contains("-A FORWARD -j cali-FORWARD");
            assertThat(bed.host.exec("ipset", "list", "-n")).contains("cali40");
            assertThat(bed.host.exec("ip", "route", "show", "proto", "80")).as("routes untouched").isEqualTo(routes);
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("legacy: allowed port").isTrue();
            assertThat(a.tcpConnects(B_IP, 9090, CONNECT_TIMEOUT)).as("legacy: other port denied").isFalse();

            // (4) Later updates go to the new driver incrementally: relabelling a denies it.
            bed.put(wep("a", A_IP, "calia1b2c3d4", "not-a"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("legacy: a relabelled").isFalse();
            assertThat(bed.dataplane.status().lastApply().stats().resync()).isFalse();
            assertThat(bed.dataplane.errors()).isEmpty();
        }
    }

    @Test
    void anUnavailableBackendIsReportedAndTheOldOneKeepsEnforcing() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/iptables-nft-restore")), "iptables-nft");
        bed = new KernelTestbed("kbu");
        NetNs a = bed.workload("kbua", "calia1b2c3d5", A_IP);
        NetNs b = bed.workload("kbub", "calib1b2c3d5", B_IP);
        // A node whose libnftables cannot be used: the standard drivers, except that nftables fails to start.
        KernelPolicyDrivers standard = new KernelPolicyDrivers(KernelDataplane.commandPrefix(bed.host.name()));
        bed.dataplane = new KernelDataplane(bed.host.name(), (choice, model) -> {
            if (choice instanceof BackendChoice.Nftables) {
                throw new IllegalStateException("libnftables: not available on this node");
            }
            return standard.create(choice, model);
        }, DataplaneObserver.NONE);
        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket denied = b.call(() -> new ServerSocket(9090, 50, bAddr))) {
            bed.put(felixConfig(Map.of("iptablesBackend", "NFT")), tier("default", 1000.0),
                    allowAllProfile("kns.test"), wep("a", A_IP, "calia1b2c3d5", "a"),
                    wep("b", B_IP, "calib1b2c3d5", "b"), allowFromOnPort("b-from-a", "app == 'b'", "app == 'a'", 8080));
            bed.inSync();
            assertThat(a.tcpConnects(B_IP, 9090, CONNECT_TIMEOUT)).isFalse();

            // nftablesMode Enabled, but the driver cannot start: recorded, not thrown; the
            // iptables-nft rules stay and keep denying.
            bed.put(felixConfig(Map.of("iptablesBackend", "NFT", "nftablesMode", "Enabled")));
            assertThat(bed.dataplane.errors()).singleElement().asString()
                    .contains("nftables", "not available", "keeping iptables-nft");
            assertThat(bed.dataplane.backend()).isEqualTo("iptables-nft");
            assertThat(ourChains("iptables-nft-save")).contains("cali-FORWARD");
            assertThat(a.tcpConnects(B_IP, 9090, CONNECT_TIMEOUT)).as("still enforced").isFalse();
            // The problem stays (felix not ready) through unrelated batches, while the config asks for it ...
            bed.put(wep("a", A_IP, "calia1b2c3d5", "a2"));
            assertThat(bed.dataplane.errors()).hasSize(1);
            // ... and is resolved when the configuration goes back to a backend that runs.
            bed.put(felixConfig(Map.of("iptablesBackend", "NFT", "nftablesMode", "Disabled")));
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(bed.dataplane.status().backendRestarts()).isZero();
            assertThat(bed.dataplane.recentErrors()).hasSize(1);
        }
    }

    @Test
    void nftablesModeEnabledMovesThePolicyFromIptablesToTheCalicoTableAndBack() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/iptables-nft-restore")), "iptables-nft");
        bed = new KernelTestbed("kbn");
        NetNs a = bed.workload("kbna", "calia1b2c3d7", A_IP);
        NetNs b = bed.workload("kbnb", "calib1b2c3d7", B_IP);
        bed.dataplane = new KernelDataplane(bed.host.name());
        InetAddress bAddr = InetAddress.getByName(B_IP);
        try (ServerSocket allowed = b.call(() -> new ServerSocket(8080, 50, bAddr));
             ServerSocket denied = b.call(() -> new ServerSocket(9090, 50, bAddr))) {
            bed.put(felixConfig(Map.of("iptablesBackend", "NFT")), tier("default", 1000.0),
                    allowAllProfile("kns.test"), wep("a", A_IP, "calia1b2c3d7", "a"),
                    wep("b", B_IP, "calib1b2c3d7", "b"), allowFromOnPort("b-from-a", "app == 'b'", "app == 'a'", 8080));
            bed.inSync();
            assertThat(bed.dataplane.backend()).isEqualTo("iptables-nft");

            bed.put(felixConfig(Map.of("iptablesBackend", "NFT", "nftablesMode", "Enabled")));
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(bed.dataplane.backend()).isEqualTo("nftables");
            assertThat(bed.dataplane.status().lastBackendSwitch().unprotected()).isZero();
            assertThat(ourChains("iptables-nft-save")).as("iptables rules removed").isEmpty();
            assertThat(bed.host.exec("ipset", "list", "-n")).as("ipsets removed").doesNotContain("cali40");
            String table = bed.host.exec("nft", "list", "table", "inet", "calico");
            assertThat(table).contains("chain cali-FORWARD", "cali-from-wl-dispatch-map");
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("nftables: allowed port").isTrue();
            assertThat(a.tcpConnects(B_IP, 9090, CONNECT_TIMEOUT)).as("nftables: other port denied").isFalse();
            bed.put(wep("a", A_IP, "calia1b2c3d7", "not-a"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("nftables: a relabelled").isFalse();

            // And back: the table goes, the iptables rules return.
            bed.put(felixConfig(Map.of("iptablesBackend", "NFT", "nftablesMode", "Disabled")));
            assertThat(bed.dataplane.errors()).isEmpty();
            assertThat(bed.dataplane.backend()).isEqualTo("iptables-nft");
            assertThat(bed.host.tryExec("nft", "list", "table", "inet", "calico").status()).isNotZero();
            assertThat(ourChains("iptables-nft-save")).contains("cali-FORWARD");
            assertThat(a.tcpConnects(B_IP, 9090, CONNECT_TIMEOUT)).as("iptables again: denied").isFalse();
            bed.put(wep("a", A_IP, "calia1b2c3d7", "a"));
            assertThat(a.tcpConnects(B_IP, 8080, CONNECT_TIMEOUT)).as("iptables again: allowed").isTrue();
            assertThat(bed.dataplane.status().backendRestarts()).isEqualTo(2);
        }
    }

    /** {@return the cali- chains the backend's save shows in the host namespace} */
    private List<String> ourChains(String save) {
        return bed.host.exec(save, "-t", "filter").lines().filter(l -> l.startsWith(":cali-"))
                .map(l -> l.substring(1, l.indexOf(' '))).sorted().toList();
    }
}
