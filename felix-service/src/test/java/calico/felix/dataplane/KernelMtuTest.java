package calico.felix.dataplane;

import static calico.felix.dataplane.KernelTestbed.felixConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.EncapsulationMode;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.dataplane.testing.NetNs;
import calico.felix.dataplane.mtu.MtuFile;
import calico.felix.dataplane.mtu.Mtus;
import calico.libcalico.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel dataplane's MTUs against real links: veth pairs in the programmed namespace stand
 * for the host's NICs (this kernel has no {@code dummy} links). The pod MTU is written to the MTU
 * file once the configuration is in, and rewritten when a link's MTU or state changes (the link
 * monitor's announcements, no refresh: the refresh interval is 10 minutes), when a pool turns
 * VXLAN on, when an explicit MTU is configured or removed, and when {@code mtuIfacePattern} changes
 * (WireGuard's part is {@code MtuManagerTest}'s: enabling it here would build a tunnel).
 */
class KernelMtuTest {

    private static final Duration PROMPT = Duration.ofSeconds(2);

    @TempDir
    Path dir;

    /** A test bed whose kernel dataplane writes the pod MTU to {@code mtuFile}. */
    private static KernelTestbed bed(String prefix, Path mtuFile) {
        KernelTestbed bed = new KernelTestbed(prefix);
        try {
            bed.dataplane = new KernelDataplane(bed.host.name(),
                    new KernelPolicyDrivers(KernelDataplane.commandPrefix(bed.host.name())), DataplaneObserver.NONE,
                    Optional.of(new MtuFile(mtuFile)));
            return bed;
        } catch (RuntimeException e) {
            bed.close();
            throw e;
        }
    }

    @Test
    void theMtuFileFollowsLinksPoolsAndSettings() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        Path file = dir.resolve("calico/mtu");
        try (KernelTestbed bed = bed("nm-mtu", file)) {
            NetNs host = bed.host;
            nic(host, "eth0", 1500);
            nic(host, "ens5", 9000);
            nic(host, "docker0", 1200); // not matched by Calico's pattern
            assertThat(bed.dataplane.mtus()).as("nothing before the configuration").isEmpty();

            Map<String, Object> config = new java.util.HashMap<>(Map.of("iptablesRefreshInterval", "10m"));
            bed.put(felixConfig(config));
            bed.inSync();
            awaitFile(file, "1500");
            assertThat(bed.dataplane.mtus()).contains(Mtus.of(1500, Mtus.Enabled.NONE, Mtus.Configured.NONE));

            host.exec("ip", "link", "set", "eth0", "mtu", "1400");
            awaitFile(file, "1400");
            host.exec("ip", "link", "set", "eth0", "down");
            awaitFile(file, "9000"); // only ens5 is up and matching now
            host.exec("ip", "link", "set", "eth0", "up");
            awaitFile(file, "1400");

            bed.put(new IPPool(ObjectMeta.named("vxlan-pool"), new IPPoolSpec("10.70.0.0/16",
                    EncapsulationMode.Always, EncapsulationMode.Never, false, false, null, null, null, null, null, null)));
            awaitFile(file, "1350");
            assertThat(bed.dataplane.mtus().orElseThrow().vxlan()).isEqualTo(1350);

            config.put("vxlanMTU", 1300);
            bed.put(felixConfig(config));
            awaitFile(file, "1300");
            config.remove("vxlanMTU");
            bed.put(felixConfig(config));
            awaitFile(file, "1350");

            config.put("mtuIfacePattern", "^ens");
            bed.put(felixConfig(config));
            awaitFile(file, "8950");
            assertThat(bed.dataplane.mtus().orElseThrow().host()).isEqualTo(9000);
            assertThat(bed.dataplane.status().refreshes()).as("no refresh: link announcements did it").isZero();
            assertThat(bed.dataplane.errors()).isEmpty();
        }
    }

    /**
     * An MTU file that cannot be written: felix carries on (Calico logs "pod MTU may not be properly
     * set"), unless {@code requireMTUFile}, which makes it a recorded failure (not ready).
     */
    @Test
    void anUnwritableMtuFileFailsFelixOnlyWithRequireMtuFile() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        Path blocker = dir.resolve("blocker");
        Files.writeString(blocker, "a file where the directory should be");
        try (KernelTestbed bed = bed("nm-mtr", blocker.resolve("mtu"))) {
            bed.put(felixConfig(Map.of()));
            bed.inSync();
            assertThat(bed.dataplane.mtus()).as("computed all the same").isPresent();
            assertThat(bed.dataplane.errors()).isEmpty();
            bed.put(felixConfig(Map.of("requireMTUFile", true)));
            assertThat(bed.dataplane.errors()).anySatisfy(e -> assertThat(e).contains("requireMTUFile"));
        }
    }

    /** A host "NIC": one end of a veth pair whose other end ({@code x<name>}) matches no pattern. */
    private static void nic(NetNs ns, String name, int mtu) {
        ns.exec("ip", "link", "add", name, "mtu", Integer.toString(mtu), "type", "veth", "peer", "name", "x" + name,
                "mtu", Integer.toString(mtu));
        ns.exec("ip", "link", "set", "x" + name, "up");
        ns.exec("ip", "link", "set", name, "up");
    }

    private static void awaitFile(Path file, String mtu) {
        Await.until("MTU file says " + mtu, PROMPT, () -> read(file), mtu::equals);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "(no file)";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
