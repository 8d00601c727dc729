package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsTest {

    @TempDir
    Path dir;

    @Test
    void badValuesAreRefusedNamingTheField() {
        assertThatThrownBy(() -> new Settings.Ports(0, 0, 70000, 0, 0))
                .hasMessage("kube-apiserver port: must be between 0 and 65535, got 70000");
        assertThatThrownBy(() -> Settings.in(dir).withPorts(Settings.Ports.free()).withScheduler(false)
                .withControllerManager(true).detached().withEtcdData(null).withPorts(new Settings.Ports(-1, 0, 0, 0, 0)))
                .hasMessage("etcd client port: must be between 0 and 65535, got -1");
        assertThatThrownBy(() -> new Settings(dir, null, Settings.Ports.free(), true, true, "10.96.0.1/16", false, List.of()))
                .hasMessageStartingWith("service CIDR: must be an IPv4 network ending in .0");
    }

    @Test
    void theApiServiceIpIsTheRangesFirstAddress() {
        assertThat(new Settings(dir, null, Settings.Ports.free(), true, true, "10.100.0.0/24", false, List.of()).apiServiceIp())
                .isEqualTo("10.100.0.1");
        assertThat(Settings.in(dir).etcdData()).isEqualTo(dir.toAbsolutePath().resolve("etcd"));
    }

    @Test
    void portsAreTheGivenOnesThenThoseOfTheLastStartThenFreeOnes() {
        Settings.Ports previous = new Settings.Ports(2379, 2380, 6443, 10257, 10259);
        Settings.Ports chosen = ControlPlane.choosePorts(new Settings.Ports(0, 0, 16443, 0, 0), Optional.of(previous));
        assertThat(chosen).isEqualTo(new Settings.Ports(2379, 2380, 16443, 10257, 10259));
        Settings.Ports fresh = ControlPlane.choosePorts(Settings.Ports.free(), Optional.empty());
        assertThat(fresh.etcdClient()).isPositive();
        assertThat(fresh.apiServer()).isPositive();
    }

    @Test
    void freePortsOfOneStartAreDistinctAndAPreviousPortTakenTwiceIsReplaced() {
        for (int i = 0; i < 200; i++) {
            Settings.Ports p = ControlPlane.choosePorts(Settings.Ports.free(), Optional.empty());
            assertThat(new java.util.HashSet<>(List.of(p.etcdClient(), p.etcdPeer(), p.apiServer(), p.controllerManager(), p.scheduler())))
                    .as("the five ports of one start").hasSize(5);
        }
        Settings.Ports clash = ControlPlane.choosePorts(Settings.Ports.free(),
                Optional.of(new Settings.Ports(2379, 2379, 6443, 10257, 10259)));
        assertThat(clash.etcdClient()).isEqualTo(2379);
        assertThat(clash.etcdPeer()).as("a recorded port given twice").isNotIn(2379, 0);
    }

    @Test
    void binariesAreFoundByTheHashOfTheModuleFiles(@TempDir Path repo) throws Exception {
        Path module = repo.resolve("control-plane/go");
        java.nio.file.Files.createDirectories(module);
        java.nio.file.Files.writeString(module.resolve("go.mod"), "module x\n");
        java.nio.file.Files.writeString(module.resolve("go.sum"), "");
        // printf 'module x\n' | sha256sum | cut -c1-16
        Binaries b = Binaries.locate(Map.of("CALICO_CACHE_DIR", "/c"), repo);
        assertThat(b.dir()).isEqualTo(Path.of("/c/control-plane/" + Binaries.versionKey(repo) + "/bin"));
        assertThat(Binaries.versionKey(repo)).isEqualTo("fc4a3fdfa1b8230e");
        assertThat(Binaries.locate(Map.of("CALICO_CONTROL_PLANE_BIN", "/opt/k8s"), repo).dir()).isEqualTo(Path.of("/opt/k8s"));
        assertThatThrownBy(() -> new Binaries(repo).requireAll())
                .hasMessageContaining("etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl")
                .hasMessageContaining("scripts/control-plane.sh build");
    }
}
