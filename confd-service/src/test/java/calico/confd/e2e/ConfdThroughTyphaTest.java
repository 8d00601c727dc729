package calico.confd.e2e;

import static calico.confd.Fixtures.affinity;
import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.node;
import static calico.confd.Fixtures.peer;
import static calico.confd.Fixtures.pool;
import static calico.confd.Fixtures.wep;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ASNumber;
import calico.api.model.BGPConfigurationSpec;
import calico.confd.Await;
import calico.api.model.BGPPeerSpec;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.confd.app.ConfdApplication;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import calico.typha.server.ServerSettings;
import calico.typha.server.TyphaServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The confd application reading through typha: a real etcd, a real {@link TyphaServer} in
 * process over it, and confd given an etcd address where nothing listens plus
 * CALICO_TYPHAADDR. Everything in the BIRD configuration it installs
 * came through typha's {@code bgp} syncer: nodes (the mesh), pools, this node's block
 * affinities, and workload endpoints for a {@code localWorkloadSelector} peer; later changes
 * in etcd reach the file the same way. No BIRD runs: only the installed file (parsed by
 * {@code bird -p}) is checked.
 */
class ConfdThroughTyphaTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @TempDir
    Path tmp;

    @Test
    void rendersFromTyphasBgpSyncerWithoutTheDatastore() throws Exception {
        EtcdAdmin.wipe(ETCD.endpoint());
        try (Datastore etcd = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()));
             Datastore typhaStore = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            etcd.create(node("node-1", "10.99.0.1/24"));
            etcd.create(node("node-2", "10.99.0.2/24"));
            etcd.create(pool("pool", "10.98.0.0/16", false, false));
            etcd.create(affinity("node-1", "10.98.1.0/26"));
            etcd.create(affinity("node-2", "10.98.2.0/26"));
            etcd.create(bgpConfig("default", new BGPConfigurationSpec(null, null, null, null, null, null, null, null,
                    null, null, null, null, null, "169.254.0.179", null, null)));
            etcd.create(peer("local-bgp-pods", new BGPPeerSpec(null, null, null, ASNumber.of(65401), null, null,
                    "role == 'router'", null, null, null, null, null, null, null, null, null)));
            etcd.create(wep("ns1", "router-a", "node-1", "10.98.1.5", Map.of("role", "router")));
            etcd.create(wep("ns1", "router-b", "node-2", "10.98.2.5", Map.of("role", "router")));

            TyphaServer typha = new TyphaServer(typhaStore, ServerSettings.defaults(0), null, new SimpleMeterRegistry(),
                    new HealthAggregator(Clock.systemUTC()), "confd-e2e");
            typha.start();
            Path config = tmp.resolve("bird.cfg");
            try (typha; ConfdApplication app = ConfdApplication.start(Map.ofEntries(Map.entry("NODENAME", "node-1"),
                    Map.entry("DATASTORE_TYPE", "etcdv3"), Map.entry("ETCD_ENDPOINTS", "http://127.0.0.1:9"),
                    Map.entry("CALICO_TYPHAADDR", "127.0.0.1:" + typha.port()),
                    Map.entry("CALICO_BIRD_SOCKET", tmp.resolve("no-bird.ctl").toString()),
                    Map.entry("CALICO_BIRD_CONFIG", config.toString()), Map.entry("CALICO_CONFD_RESYNC_INTERVAL", "1"),
                    Map.entry("CALICO_CONFD_PEER_POLL_INTERVAL", "1"), Map.entry("CALICO_TYPHAREADTIMEOUT", "2"),
                    Map.entry("CONFD_ADMINPORT", "0"), Map.entry("CONFD_ADMINHOST", "127.0.0.1"),
                    Map.entry("CONFD_HEALTHPORT", "0"), Map.entry("CONFD_HEALTHHOST", "127.0.0.1")))) {
                assertThat(app.service().datastore()).as("no datastore opened").isNull();
                await("config rendered from typha", () -> Files.exists(config)
                        && Files.readString(config).contains("protocol bgp Mesh_10_99_0_2"));
                String cfg = Files.readString(config);
                assertThat(cfg).contains("route 10.98.1.0/26 blackhole;", "if ( net ~ [ 10.98.0.0/16+ ] )",
                        "protocol bgp Local_Workload_10_98_1_5", "local 169.254.0.179 as 64512;",
                        "neighbor 10.98.1.5 as 65401;");
                assertThat(cfg).as("other nodes' blocks and pods").doesNotContain("10.98.2.0/26", "10.98.2.5");
                assertThat(typha.connectionCount()).as("confd's stream").isEqualTo(1);

                // Changes in etcd arrive through typha: a new block for node-1, node-2 gone.
                etcd.create(affinity("node-1", "10.98.3.0/26"));
                etcd.delete(ResourceKey.of(ResourceKind.NODE, "node-2"), null);
                await("new block and no mesh session to node-2", () -> {
                    String c = Files.readString(config);
                    return c.contains("route 10.98.3.0/26 blackhole;") && !c.contains("Mesh_10_99_0_2");
                });

                // Typha gone for longer than the read timeout: not ready, naming typha; BIRD's configuration kept.
                // (No BIRD here, so the confd reporter itself is never ready: the typha reporter is looked at.)
                HealthAggregator health = app.health();
                // Ready also while typha is "away" within the read timeout: wait for the connection itself.
                await("the typha connection ready", () -> health.status("TyphaConnection").orElseThrow().readiness()
                        .healthy() && health.status("TyphaConnection").orElseThrow().detail().startsWith("connected"));
                assertThat(health.status("TyphaConnection").orElseThrow().detail()).startsWith("connected to typha at");
                String kept = Files.readString(config);
                int port = typha.port();
                typha.close();
                await("not ready once typha is away longer than 2 s", () -> !health.status("TyphaConnection")
                        .orElseThrow().readiness().healthy() && health.status("TyphaConnection").orElseThrow().detail()
                        .contains("typha has been unreachable"));
                assertThat(Files.readString(config)).as("the configuration kept").isEqualTo(kept);
                try (TyphaServer back = new TyphaServer(typhaStore, ServerSettings.defaults(port), null,
                        new SimpleMeterRegistry(), new HealthAggregator(Clock.systemUTC()), "confd-e2e")) {
                    back.start();
                    await("ready again once typha is back", () -> health.status("TyphaConnection").orElseThrow()
                            .readiness().healthy());
                }
            }
        }
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        Await.until(what, Duration.ofSeconds(60), condition);
    }
}
