package calico.confd.e2e;

import static calico.confd.Fixtures.affinity;
import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.config;
import static calico.confd.Fixtures.node;
import static calico.confd.Fixtures.peer;
import static calico.confd.Fixtures.peerSpec;
import static calico.confd.Fixtures.pool;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.confd.bird.BirdValidator;
import calico.confd.bird.ConfigFile;
import calico.confd.daemon.ConfdDaemon;
import calico.confd.daemon.ConfdStatus;
import calico.confd.model.BgpStore;
import calico.confd.model.BgpView;
import calico.confd.render.BirdConfigBuilder;
import calico.confd.render.Rendered;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.libcalico.syncer.WatcherSyncer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Prints render, {@code bird -p} and "BGPPeer change → BIRD reconfigured" times for a 500-node
 * full mesh and for a route reflector with 5,000 clients. Needs root (BIRD runs in a network
 * namespace). {@code bench/run.sh confd-service calico.confd.e2e.ConfdBench [rounds]}
 */
public final class ConfdBench {

    private ConfdBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        System.out.println("case | sessions | config bytes | render ms (median) | bird -p ms (median) | "
                + "BGPPeer change -> BIRD reconfigured ms (median / max)");
        int meshNodes = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        int clients = args.length > 2 ? Integer.parseInt(args[2]) : 5000;
        run(meshNodes + "-node full mesh", mesh(meshNodes), "node-1", rounds);
        if (clients > 0) {
            run(clients + " clients, 1 route reflector", reflector(clients), "rr", rounds);
        }
    }

    private static List<Resource> mesh(int n) {
        List<Resource> rs = new ArrayList<>();
        rs.add(pool("pool", "10.200.0.0/16", false, false));
        for (int i = 1; i <= n; i++) {
            rs.add(node("node-" + i, addr(i) + "/16"));
            rs.add(affinity("node-" + i, "10.200." + (i % 256) + "." + (i / 256 * 64) + "/26"));
        }
        return rs;
    }

    private static List<Resource> reflector(int clients) {
        List<Resource> rs = new ArrayList<>();
        rs.add(pool("pool", "10.200.0.0/16", false, false));
        rs.add(bgpConfig("default", config(false, null)));
        rs.add(node("rr", "10.0.255.254/16", null, null, "224.0.0.1", Map.of("route-reflector", "true")));
        for (int i = 1; i <= clients; i++) {
            rs.add(node("node-" + i, addr(i) + "/16"));
        }
        rs.add(peer("peer-to-rr", peerSpec(null, "!has(route-reflector)", null, null, "route-reflector == 'true'")));
        return rs;
    }

    private static String addr(int i) {
        return "10.0." + (i / 250) + "." + (i % 250 + 1);
    }

    private static void run(String name, List<Resource> resources, String nodeName, int rounds) throws Exception {
        BgpStore store = new BgpStore();
        store.apply(resources.stream().map(r -> Update.of(UpdateType.NEW, r, 1)).toList());
        BgpView view = store.view();
        BirdConfigBuilder builder = new BirdConfigBuilder(SecretSource.none());
        BirdValidator validator = new BirdValidator("/usr/sbin/bird");
        Path dir = Files.createTempDirectory("confd-bench");
        long[] render = new long[rounds];
        long[] validate = new long[rounds];
        Rendered r = null;
        for (int i = 0; i < 3; i++) {
            r = builder.render(view, nodeName, "");
        }
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            r = builder.render(view, nodeName, "");
            render[i] = System.nanoTime() - t0;
            Path f = dir.resolve("bird.cfg");
            Files.writeString(f, r.config());
            t0 = System.nanoTime();
            String problem = validator.check(f);
            validate[i] = System.nanoTime() - t0;
            if (problem != null) {
                throw new IllegalStateException("bird -p rejected the " + name + " config: " + problem);
            }
        }
        long[] change = reconfigure(resources, nodeName, dir, rounds);
        System.out.printf("%s | %d | %d | %.1f | %.1f | %.1f / %.1f%n", name, r.sessions().size(),
                r.config().length(), median(render), median(validate), median(change), max(change));
    }

    /** A real BIRD in a namespace on the node's config; each round adds or removes a BGPPeer and waits for BIRD's "Reconfigured". */
    private static long[] reconfigure(List<Resource> resources, String nodeName, Path dir, int rounds)
            throws Exception {
        long[] out = new long[rounds];
        try (NetnsLab lab = new NetnsLab(dir, 1); MemoryDatastore ds = new MemoryDatastore()) {
            for (Resource r : resources) {
                ds.create(r);
            }
            LinkedBlockingQueue<ConfdStatus> statuses = new LinkedBlockingQueue<>();
            try (ConfdDaemon d = new ConfdDaemon(nodeName, "", new BirdConfigBuilder(SecretSource.none()),
                    new ConfigFile(lab.config(1), new BirdValidator("/usr/sbin/bird")), lab.control(1),
                    Duration.ofHours(1));
                 WatcherSyncer s = new WatcherSyncer(ds, BgpStore.KINDS, debug(d))) {
                d.onStatus(st -> {
                    if (Boolean.getBoolean("bench.debug")) {
                        System.out.println("status " + st.result() + " gen " + st.generation() + " sessions "
                                + st.sessions().size());
                    }
                    statuses.add(st);
                });
                s.start();
                while (!Files.exists(lab.config(1))) {
                    Thread.sleep(20);
                }
                lab.startBird(1);
                // The first pass may have run before BIRD was up: make sure BIRD runs the current config.
                ConfdStatus first;
                do {
                    d.request();
                    first = statuses.poll(120, TimeUnit.SECONDS);
                } while (first != null && first.result() != ConfdStatus.Result.RELOADED
                        && first.result() != ConfdStatus.Result.UNCHANGED);
                int base = d.status().sessions().size();
                Thread.sleep(500);
                for (int i = 0; i < rounds; i++) {
                    statuses.clear();
                    if (Boolean.getBoolean("bench.debug")) {
                        System.out.println("round " + i);
                    }
                    long t0 = System.nanoTime();
                    if (i % 2 == 0) {
                        ds.create(peer("bench-peer", peerSpec(null, null, "10.1.0.1", 65001L, null)));
                    } else {
                        ds.delete(ResourceKey.of(ResourceKind.BGP_PEER, "bench-peer"), null);
                    }
                    while (true) {
                        ConfdStatus st = statuses.poll(120, TimeUnit.SECONDS);
                        if (st == null) {
                            throw new IllegalStateException("no reconfiguration within 120 s; last " + d.status()
                                    + "\n" + lab.log(1));
                        }
                        if (st.result() == ConfdStatus.Result.RELOADED
                                && st.sessions().size() == base + (i % 2 == 0 ? 1 : 0)) {
                            break;
                        }
                    }
                    out[i] = System.nanoTime() - t0;
                }
            }
        }
        return out;
    }

    private static SyncerCallbacks debug(ConfdDaemon d) {
        if (!Boolean.getBoolean("bench.debug")) {
            return d;
        }
        return new SyncerCallbacks() {
            @Override
            public void onStatusUpdated(SyncerStatus status) {
                System.out.println("syncer " + status);
                d.onStatusUpdated(status);
            }

            @Override
            public void onUpdates(List<Update> updates) {
                System.out.println("updates " + updates.size() + " first " + updates.get(0).key() + " "
                        + updates.get(0).type());
                d.onUpdates(updates);
            }
        };
    }

    private static double median(long[] ns) {
        long[] c = ns.clone();
        Arrays.sort(c);
        return c[c.length / 2] / 1e6;
    }

    private static double max(long[] ns) {
        return Arrays.stream(ns).max().orElse(0) / 1e6;
    }
}
