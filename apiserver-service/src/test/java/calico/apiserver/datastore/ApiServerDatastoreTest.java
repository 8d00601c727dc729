package calico.apiserver.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.apiserver.e2e.ApiServerFixture;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.datastore.apiserver.ApiServerConfig;
import calico.libcalico.datastore.apiserver.ApiServerDatastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the contracts do not cover: IPAM races across clients, 410, credentials, TLS and configuration. */
class ApiServerDatastoreTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void concurrentIpamClientsNeverHandOutTheSameAddress() throws Exception {
        SharedApiServer server = SharedApiServer.get();
        int threads = 4;
        int each = 8;
        List<ApiServerDatastore> clients = new ArrayList<>();
        try (ApiServerDatastore admin = server.newDatastore()) {
            admin.create(new IPPool(ObjectMeta.named("race"), new IPPoolSpec("10.77.0.0/24", null, null, null, null,
                    null, 28, null, null, null, null)));
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<List<Cidr>>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    ApiServerDatastore client = new ApiServerDatastore(server.config()); // one HTTP client per "process"
                    clients.add(client);
                    IpamClient ipam = new IpamClient(client, IpamOptions.defaults());
                    String node = "node-" + (t % 2); // two clients per node: they race on the same blocks
                    int id = t;
                    results.add(pool.submit(() -> {
                        List<Cidr> got = new ArrayList<>();
                        for (int i = 0; i < each; i++) {
                            got.addAll(ipam.autoAssign(new AutoAssignRequest("h-" + id + "-" + i, node, 1, 0, List.of(),
                                    List.of(), Map.of(), IntendedUse.WORKLOAD)).ipv4());
                        }
                        return got;
                    }));
                }
                Set<String> seen = new HashSet<>();
                int total = 0;
                for (Future<List<Cidr>> f : results) {
                    for (Cidr c : f.get(2, TimeUnit.MINUTES)) {
                        total++;
                        assertThat(seen.add(c.address().toString())).as("address %s handed out twice", c).isTrue();
                    }
                }
                assertThat(total).isEqualTo(threads * each);
                assertThat(new IpamClient(admin, IpamOptions.defaults()).usage().toString()).isNotEmpty();
            } finally {
                pool.shutdownNow();
                clients.forEach(ApiServerDatastore::close);
            }
        }
    }

    @Test
    void aWatchFromACompactedRevisionReportsTheServers410AndTheStoreStaysUsable() {
        SharedApiServer server = SharedApiServer.get();
        try (ApiServerDatastore store = server.newDatastore()) {
            long start = store.currentRevision();
            Resource a = store.create(set("a"));
            store.update(a);
            long compacted = server.serverStore().currentRevision();
            server.serverStore().compact(compacted);

            WatchRecorder rec = new WatchRecorder();
            store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, start, rec);
            WatchEvent e = rec.next(x -> !(x instanceof WatchEvent.Bookmark), WAIT);

            assertThat(e).isInstanceOfSatisfying(WatchEvent.Compacted.class,
                    c -> assertThat(c.compactRevision()).isEqualTo(compacted));
            // The consumer's resync: list, then watch from the list's revision.
            long listed = store.list(ResourceKind.GLOBAL_NETWORK_SET).revision();
            WatchRecorder again = new WatchRecorder();
            try (var w = store.watch(ResourceKind.GLOBAL_NETWORK_SET, null, listed, again)) {
                Resource b = store.create(set("b"));
                assertThat(again.changes(1, WAIT)).containsExactly(
                        new WatchEvent.Added(b, Long.parseLong(b.metadata().resourceVersion())));
            }
        }
    }

    @Test
    void aBadTokenIsDeniedNamingTheTokenFile() throws IOException {
        SharedApiServer server = SharedApiServer.get();
        Path token = Files.writeString(dir.resolve("wrong.token"), "not-a-token\n");
        try (ApiServerDatastore store = new ApiServerDatastore(new ApiServerConfig(URI.create(server.fixture().url()),
                token, server.caFile(), false, null))) {
            assertThatThrownBy(() -> store.list(ResourceKind.TIER))
                    .isInstanceOf(DatastoreException.Denied.class)
                    .hasMessageContaining("401")
                    .hasMessageContaining("CALICO_APISERVER_TOKEN_FILE")
                    .hasMessageContaining(token.toString());
            WatchRecorder rec = new WatchRecorder();
            store.watch(ResourceKind.TIER, null, 1, rec);
            assertThat(rec.next(x -> true, WAIT)).isInstanceOfSatisfying(WatchEvent.Failed.class,
                    f -> assertThat(f.error()).isInstanceOf(DatastoreException.Denied.class));
        }
    }

    @Test
    void aUserWithoutRightsIsForbidden() throws IOException {
        SharedApiServer server = SharedApiServer.get();
        Path token = Files.writeString(dir.resolve("alice.token"), ApiServerFixture.ALICE_TOKEN);
        try (ApiServerDatastore store = new ApiServerDatastore(new ApiServerConfig(URI.create(server.fixture().url()),
                token, server.caFile(), false, null))) {
            assertThatThrownBy(() -> store.create(set("x")))
                    .isInstanceOf(DatastoreException.Denied.class)
                    .hasMessageContaining("403");
        }
    }

    @Test
    void theServerCertificateIsVerifiedAgainstTheCaFile() throws IOException {
        SharedApiServer server = SharedApiServer.get();
        // A CA that did not sign the server's certificate: the handshake fails, nothing is sent.
        Path other = dir.resolve("other.crt");
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-keyout", dir.resolve("other.key").toString(), "-out", other.toString(), "-subj", "/CN=other")
                .redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        try (ApiServerDatastore store = new ApiServerDatastore(new ApiServerConfig(URI.create(server.fixture().url()),
                server.tokenFile(), other, false, null))) {
            assertThatThrownBy(store::currentRevision).isInstanceOf(DatastoreException.Unavailable.class)
                    .hasMessageContaining("unreachable");
        }
        try (ApiServerDatastore insecure = new ApiServerDatastore(new ApiServerConfig(
                URI.create(server.fixture().url()), server.tokenFile(), null, true, null))) {
            assertThat(insecure.currentRevision()).isPositive();
        }
    }

    @Test
    void aServerThatIsNotThereIsUnavailable() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (ApiServerDatastore store = new ApiServerDatastore(new ApiServerConfig(URI.create("https://127.0.0.1:" + port),
                null, null, true, Duration.ofSeconds(2)))) {
            assertThatThrownBy(() -> store.get(set("a").key()))
                    .isInstanceOfSatisfying(DatastoreException.Unavailable.class, e -> assertThat(e.retryable()).isTrue());
        }
    }

    @Test
    void configurationErrorsNameTheVariable() throws IOException {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver")))
                .hasMessageStartingWith("CALICO_APISERVER_URL: required");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver",
                "CALICO_APISERVER_URL", "http://127.0.0.1:1")))
                .hasMessageStartingWith("CALICO_APISERVER_URL: \"http://127.0.0.1:1\" must be https://host:port");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver",
                "CALICO_APISERVER_URL", "https://127.0.0.1:1")))
                .hasMessageStartingWith("CALICO_APISERVER_CA_FILE: required");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver",
                "CALICO_APISERVER_URL", "https://127.0.0.1:1", "CALICO_APISERVER_CA_FILE", "/nonexistent/ca.pem")))
                .hasMessageStartingWith("CALICO_APISERVER_CA_FILE: cannot read /nonexistent/ca.pem");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver",
                "CALICO_APISERVER_URL", "https://127.0.0.1:1", "CALICO_APISERVER_CA_FILE", ca.toString(),
                "CALICO_APISERVER_TOKEN_FILE", "/nonexistent/token")))
                .hasMessageStartingWith("CALICO_APISERVER_TOKEN_FILE: cannot read /nonexistent/token");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver",
                "CALICO_APISERVER_URL", "https://127.0.0.1:1", "CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY", "yes")))
                .hasMessageStartingWith("CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY: \"yes\" is not true or false");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver",
                "CALICO_APISERVER_URL", "https://127.0.0.1:1", "CALICO_APISERVER_CA_FILE", ca.toString())).open())
                .hasMessageStartingWith("CALICO_APISERVER_CA_FILE: cannot load");
        Path empty = Files.writeString(dir.resolve("empty.token"), "  \n");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "apiserver",
                "CALICO_APISERVER_URL", "https://127.0.0.1:1", "CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY", "true",
                "CALICO_APISERVER_TOKEN_FILE", empty.toString())).open())
                .hasMessageStartingWith("CALICO_APISERVER_TOKEN_FILE: " + empty + " must hold exactly one token");
        assertThatThrownBy(() -> DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "etcd")))
                .hasMessage("DATASTORE_TYPE: \"etcd\" is not one of etcdv3, kubernetes, memory, apiserver");
        DatastoreConfig ok = DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "APIServer",
                "CALICO_APISERVER_URL", "https://127.0.0.1:6443", "CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY", "true"));
        assertThat(ok.type()).isEqualTo(DatastoreConfig.Type.APISERVER);
        assertThat(ok.apiserver().url()).isEqualTo(URI.create("https://127.0.0.1:6443"));
    }

    private static GlobalNetworkSet set(String name) {
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(List.of("10.0.0.0/8")));
    }
}
