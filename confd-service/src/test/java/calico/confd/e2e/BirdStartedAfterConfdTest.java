package calico.confd.e2e;

import static calico.confd.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.Await;
import calico.confd.bird.BirdValidator;
import calico.confd.bird.ConfigFile;
import calico.confd.daemon.ConfdDaemon;
import calico.confd.daemon.ConfdStatus;
import calico.confd.model.BgpStore;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.syncer.WatcherSyncer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * calico-node's order: confd installs BIRD's first configuration, then BIRD is started on it. The
 * reload confd tried before BIRD ran failed; it is retried soon after, so confd is ready (generation
 * 1) seconds after BIRD answers, not at the next resync (an hour here, 30 s by default: the 32 s
 * start-up FootprintBench saw, issue 30).
 */
class BirdStartedAfterConfdTest {

    @TempDir
    Path dir;

    @BeforeAll
    static void needs() {
        NetnsLab.assumeBirdAndRoot();
    }

    @Test
    void aReloadThatFailedBeforeBirdRanIsRetriedOnceBirdRuns() throws Exception {
        try (NetnsLab lab = new NetnsLab(dir, 1);
             MemoryDatastore ds = new MemoryDatastore();
             ConfdDaemon d = new ConfdDaemon("node-1", "", new BirdConfigBuilder(SecretSource.none()),
                     new ConfigFile(lab.config(1), new BirdValidator("/usr/sbin/bird")), lab.control(1), Duration.ofHours(1));
             WatcherSyncer s = new WatcherSyncer(ds, BgpStore.KINDS, d)) {
            ds.create(node("node-1", NetnsLab.address(1) + "/24"));
            s.start();
            Await.until("the first configuration installed, BIRD not told", Duration.ofSeconds(60),
                    () -> d.status().result() == ConfdStatus.Result.RELOAD_FAILED && Files.exists(lab.config(1)));
            assertThat(d.status().generation()).isZero();

            lab.startBird(1);
            Await.until("BIRD reloaded after it started", Duration.ofSeconds(60), () -> d.status().generation() > 0);
            assertThat(d.status().result()).isEqualTo(ConfdStatus.Result.RELOADED);
        }
    }
}
