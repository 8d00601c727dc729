package calico.confd.daemon;

import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.node;
import static calico.confd.Fixtures.peer;
import static calico.confd.Fixtures.peerSpec;
import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.Await;
import calico.libcalico.bird.BirdControl;
import calico.confd.bird.BirdValidator;
import calico.confd.bird.ConfigFile;
import calico.confd.model.BgpStore;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.syncer.WatcherSyncer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A configuration BIRD rejects is never installed: the daemon reports REJECTED with BIRD's
 * reason and keeps the last good file; once BIRD accepts again the change goes in. The
 * validator is the real {@code bird -p} behind a wrapper that refuses while a marker exists.
 */
class ConfdDaemonTest {

    @TempDir
    Path dir;

    @Test
    void rejectedConfigKeepsTheLastGoodOne() throws Exception {
        Path marker = dir.resolve("refuse");
        Path wrapper = dir.resolve("bird-wrapper");
        Files.writeString(wrapper, "#!/bin/sh\nif [ -e " + marker + " ]; then echo \"bird.cfg:1:1 refused by test\"; "
                + "exit 1; fi\nexec /usr/sbin/bird \"$@\"\n");
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
        Path cfg = dir.resolve("bird.cfg");
        try (MemoryDatastore ds = new MemoryDatastore();
             ConfdDaemon d = new ConfdDaemon("node-1", "", new BirdConfigBuilder(SecretSource.none()),
                     new ConfigFile(cfg, new BirdValidator(wrapper.toString())),
                     new BirdControl(dir.resolve("no-bird.ctl"), Duration.ofSeconds(1)), Duration.ofMillis(200));
             WatcherSyncer s = new WatcherSyncer(ds, BgpStore.KINDS, d)) {
            ds.create(node("node-1", "10.0.0.1/24"));
            s.start();
            await("the first config written", () -> Files.exists(cfg));
            // No BIRD is running: installed, reload pending.
            await("the reload failed", () -> d.status().result() == ConfdStatus.Result.RELOAD_FAILED);
            String good = Files.readString(cfg);

            Files.createFile(marker);
            ds.create(peer("upstream", peerSpec(null, null, "10.0.0.254", 65001L, null)));
            await("the config rejected", () -> d.status().result() == ConfdStatus.Result.REJECTED);
            assertThat(d.status().message()).contains("bird -p rejected", "refused by test");
            assertThat(Files.readString(cfg)).isEqualTo(good).doesNotContain("Global_10_0_0_254");

            Files.delete(marker);
            // The file is installed a moment before the pass records its status (a loaded CI run
            // read REJECTED in between): wait for the status to move on, then check where it went.
            await("the peer in the config", () -> Files.readString(cfg).contains("Global_10_0_0_254")
                    && d.status().result() != ConfdStatus.Result.REJECTED);
            assertThat(d.status().result()).isEqualTo(ConfdStatus.Result.RELOAD_FAILED);
            assertThat(d.status().sessions()).extracting(x -> x.name()).containsExactly("Global_10_0_0_254");
        }
    }

    /** What confd follows itself (its log level): the node's BGPConfiguration over the default one, at every pass. */
    @Test
    void eachPassHandsOnTheNodesEffectiveBgpConfiguration() throws Exception {
        java.util.concurrent.atomic.AtomicReference<String> severity = new java.util.concurrent.atomic.AtomicReference<>();
        try (MemoryDatastore ds = new MemoryDatastore();
             ConfdDaemon d = new ConfdDaemon("node-1", "", new BirdConfigBuilder(SecretSource.none()),
                     new ConfigFile(dir.resolve("bird.cfg"), new BirdValidator("/usr/sbin/bird")),
                     new BirdControl(dir.resolve("no-bird.ctl"), Duration.ofSeconds(1)), Duration.ofMillis(200));
             WatcherSyncer s = new WatcherSyncer(ds, BgpStore.KINDS, d)) {
            d.onConfiguration(c -> severity.set(String.valueOf(c.logSeverityScreen())));
            ds.create(node("node-1", "10.0.0.1/24"));
            ds.create(bgpConfig("default", withSeverity("Warning")));
            s.start();
            await("the default's severity", () -> "Warning".equals(severity.get()));
            ds.create(bgpConfig("node.node-1", withSeverity("Debug")));
            await("the node's own over the default", () -> "Debug".equals(severity.get()));
            ds.create(bgpConfig("node.node-2", withSeverity("Error")));
            ds.delete(calico.api.model.ResourceKey.of(calico.api.model.ResourceKind.BGP_CONFIGURATION, "node.node-1"), null);
            await("back to the default, another node's ignored", () -> "Warning".equals(severity.get()));
        }
    }

    private static calico.api.model.BGPConfigurationSpec withSeverity(String severity) {
        return new calico.api.model.BGPConfigurationSpec(severity, null, null, null, null, null, null, null, null, null,
                null, null, null, null, null, null);
    }

    private static void await(String what, Callable<Boolean> c) throws Exception {
        Await.until(what, Duration.ofSeconds(60), c);
    }
}
