package calico.confd.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.Await;
import calico.confd.app.ConfdApplication;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.health.TrainingRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@link ConfdApplicationContract} over a real etcd, and confd with BGP off. */
class ConfdApplicationTest extends ConfdApplicationContract {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected Map<String, String> datastoreVariables() {
        return Map.of("DATASTORE_TYPE", "etcdv3", "ETCD_ENDPOINTS", ETCD.endpoint().toString());
    }

    /** CALICO_NETWORKING_BACKEND=none: no datastore, no BIRD, healthy and ready, /peers says so. */
    @Test
    void bgpOffIsIdleAndReady() throws Exception {
        try (ConfdApplication app = ConfdApplication.start(Map.of("CALICO_NETWORKING_BACKEND", "none", "NODENAME", "",
                "HOSTNAME", "", "CONFD_ADMINPORT", "0", "CONFD_ADMINHOST", "127.0.0.1", "CONFD_HEALTHPORT", "0",
                "CONFD_HEALTHHOST", "127.0.0.1"))) {
            int web = app.adminPort();
            int health = app.healthPort();
            Await.until("readiness", WAIT, () -> get(health, "/readiness").statusCode() == 200);
            assertThat(get(web, "/peers").body()).contains("\"configResult\":\"DISABLED\"");
            assertThat(get(health, "/actuator/health").body()).contains("disabled (CALICO_NETWORKING_BACKEND=none)");
        }
    }

    /**
     * An AppCDS training run ({@code -Dcalico.exit=onReady}) of the main ends by itself once confd's start-up is done:
     * its first configuration pass (this node is in no datastore: refused), with no BIRD running, as in the launcher's
     * and the images' training runs. Without the property confd would run until SIGTERM.
     */
    @Test
    void aTrainingRunEndsAfterTheFirstConfigurationPass(@TempDir Path dir) throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:TieredStopAtLevel=1",
                "-D" + TrainingRun.PROPERTY + "=" + TrainingRun.ON_READY, "-cp", System.getProperty("java.class.path"),
                ConfdApplication.class.getName());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("out.log").toFile());
        pb.environment().putAll(datastoreVariables());
        pb.environment().putAll(Map.of("NODENAME", "training-node", "CALICO_NETWORKING_BACKEND", "bird",
                "CALICO_BIRD_SOCKET", dir.resolve("bird.ctl").toString(), "CALICO_BIRD_CONFIG", dir.resolve("bird.cfg").toString(),
                "CONFD_ADMINPORT", "0", "CONFD_ADMINHOST", "127.0.0.1", "CONFD_HEALTHPORT", "0", "CONFD_HEALTHHOST", "127.0.0.1"));
        Process p = pb.start();
        try {
            assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("ended: %s", Files.readString(dir.resolve("out.log"))).isTrue();
            assertThat(p.exitValue()).isZero();
            assertThat(Files.readString(dir.resolve("out.log"))).contains("confd ready: ending the training run", "confd stopped");
        } finally {
            p.destroyForcibly().waitFor();
        }
    }
}
