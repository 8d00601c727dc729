package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A port picked free and bound by someone else before its part binds it (CI saw a control plane
 * fail to start while other modules' tests ran beside it): the real parts, a real listener on
 * the port.
 */
class PortConflictTest {

    @Test
    void aPartWhosePortWasTakenMeanwhileStartsAgainOnOtherPorts(@TempDir Path dir) throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Settings.Ports free = ControlPlane.choosePorts(Settings.Ports.free(), Optional.empty());
            Deque<Settings.Ports> picks = new ArrayDeque<>();
            // The first pick is free but for kube-apiserver's port, which a listener took after the pick.
            picks.add(new Settings.Ports(free.etcdClient(), free.etcdPeer(), taken.getLocalPort(), free.controllerManager(),
                    free.scheduler()));
            Settings settings = Settings.in(dir).withControllerManager(false).withScheduler(false);
            try (ControlPlane cp = ControlPlane.start(settings, Binaries.locate(),
                    () -> picks.isEmpty() ? ControlPlane.choosePorts(Settings.Ports.free(), Optional.empty()) : picks.poll())) {
                assertThat(cp.ports().apiServer()).isNotEqualTo(taken.getLocalPort());
                assertThat(cp.kubectl("get", "namespace", "default", "-o", "name")).contains("namespace/default");
                assertThat(Files.readString(dir.resolve("logs/kube-apiserver.log")))
                        .as("the first start met the taken port").contains("address already in use");
            }
        }
    }

    @Test
    void aGivenPortThatIsTakenIsAnErrorAtOnce(@TempDir Path dir) throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Settings settings = Settings.in(dir).withControllerManager(false).withScheduler(false)
                    .withPorts(new Settings.Ports(0, 0, taken.getLocalPort(), 0, 0));
            assertThatThrownBy(() -> ControlPlane.start(settings, Binaries.locate(), () -> {
                throw new AssertionError("a given port is never replaced by free ones");
            })).isInstanceOf(Probe.PortTakenException.class).hasMessageContaining("kube-apiserver exited while starting")
                    .hasMessageContaining("address already in use");
            assertThat(ControlPlane.attach(dir, Binaries.locate()).flatMap(cp -> cp.status().values().stream()
                    .filter(s -> s.startsWith("running")).findAny())).as("nothing left running").isEmpty();
        }
    }
}
