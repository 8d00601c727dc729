package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code scripts/control-plane.sh start|stop|status DIR}, as the script runs them. */
class MainTest {

    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @AfterEach
    void stopWhateverStarted() {
        ControlPlane.attach(dir, Binaries.locate()).ifPresent(ControlPlane::stop);
    }

    @Test
    void startReturnsReadyStatusReportsAndStopLeavesNothingRunning() {
        assertThat(run("start", dir.toString(), "--no-scheduler")).isZero();
        assertThat(out.toString()).contains("kube-apiserver ready at https://127.0.0.1:")
                .contains("kubeconfig " + dir.toAbsolutePath().resolve("admin.kubeconfig"));
        State state = State.read(dir.toAbsolutePath()).orElseThrow();
        assertThat(state.pids()).containsOnlyKeys("etcd", "kube-apiserver", "kube-controller-manager");
        List<ProcessHandle> started = new ArrayList<>();
        state.pids().values().forEach(pid -> started.add(ProcessHandle.of(pid).orElseThrow()));

        out.reset();
        assertThat(run("status", dir.toString())).isZero();
        assertThat(out.toString()).contains("kube-apiserver: running, pid " + state.pids().get("kube-apiserver"))
                .contains("kube-scheduler: stopped").contains("kube-apiserver /readyz: ok");

        out.reset();
        assertThat(run("kubeconfig", dir.toString(), "carol", "auditors")).isZero();
        java.nio.file.Path carol = java.nio.file.Path.of(out.toString().strip());
        assertThat(carol).isEqualTo(dir.toAbsolutePath().resolve("kubeconfigs/carol.kubeconfig"));
        ControlPlane attached = ControlPlane.attach(dir, Binaries.locate()).orElseThrow();
        assertThat(attached.kubectlAs(carol, "auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}").output())
                .contains("auditors");

        out.reset();
        assertThat(run("stop", dir.toString())).isZero();
        assertThat(started).noneMatch(ProcessHandle::isAlive);
        assertThat(State.read(dir.toAbsolutePath()).orElseThrow().pids()).isEmpty();
        assertThat(run("status", dir.toString())).isEqualTo(3);
        assertThat(out.toString()).contains("etcd: stopped").contains("kube-apiserver /readyz: not ready");
    }

    @Test
    void badArgumentsAreUsageErrorsNamingTheOption() {
        assertThat(run("start", dir.toString(), "--apiserver-port", "http")).isEqualTo(2);
        assertThat(err.toString()).contains("--apiserver-port: must be a port between 1 and 65535, got http");
        assertThat(run("start", dir.toString(), "--colour")).isEqualTo(2);
        assertThat(err.toString()).contains("unknown option --colour");
        assertThat(run("start")).isEqualTo(2);
        assertThat(err.toString()).contains("start needs DIR");
        assertThat(run("stop", dir.toString())).isZero();
        assertThat(out.toString()).contains("nothing started in");
    }

    private int run(String... args) {
        return Main.run(List.of(args), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }
}
