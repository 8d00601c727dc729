package calico.confd.e2e;

import calico.confd.Await;
import calico.confd.bird.BirdValidator;
import calico.confd.bird.ConfigFile;
import calico.confd.daemon.ConfdDaemon;
import calico.confd.model.BgpStore;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.syncer.WatcherSyncer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One confd per node of a {@link NetnsLab}, each watching the same datastore and installing
 * its node's config where that node's BIRD reads it. {@link #close()} stops the syncers and
 * daemons (the lab and the datastore stay the caller's).
 */
final class ConfdNodes implements AutoCloseable {

    private final NetnsLab lab;
    private final Datastore datastore;
    private final List<ConfdDaemon> daemons = new ArrayList<>();
    private final List<WatcherSyncer> syncers = new ArrayList<>();

    ConfdNodes(NetnsLab lab, Datastore datastore) {
        this.lab = lab;
        this.datastore = datastore;
    }

    /** Starts confd for node {@code i} ({@code node-<i>}); {@return its daemon} */
    ConfdDaemon start(int i, SecretSource secrets, Duration resync) {
        ConfdDaemon d = new ConfdDaemon("node-" + i, "", new BirdConfigBuilder(secrets),
                new ConfigFile(lab.config(i), new BirdValidator("/usr/sbin/bird")), lab.control(i), resync);
        WatcherSyncer s = new WatcherSyncer(datastore, BgpStore.KINDS, d);
        daemons.add(d);
        syncers.add(s);
        s.start();
        return d;
    }

    /** BIRD starts on each node's first installed configuration, as calico-node starts it after confd. */
    void startBirds(int n) throws Exception {
        for (int i = 1; i <= n; i++) {
            int node = i;
            Await.until("config for node-" + i, Duration.ofSeconds(90), () -> Files.exists(lab.config(node)));
            lab.startBird(i);
        }
    }

    /** {@return node {@code i}'s daemon} (1-based, in start order) */
    ConfdDaemon daemon(int i) {
        return daemons.get(i - 1);
    }

    @Override
    public void close() {
        syncers.forEach(WatcherSyncer::close);
        daemons.forEach(ConfdDaemon::close);
    }
}
