package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static calico.typha.server.TyphaFixture.client;
import static calico.typha.server.TyphaFixture.clientOptions;
import static calico.typha.server.TyphaFixture.closeAll;
import static calico.typha.server.TyphaFixture.server;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.proto.ClientHello;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.Pong;
import calico.libcalico.typha.proto.ServerMessage;
import io.grpc.Status;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bad clients get a gRPC status naming the field and the reason, and the server keeps serving
 * good ones. The datastore does not matter here, so these use the memory backend.
 */
class ProtocolErrorsTest {

    private MemoryDatastore ds;
    private TyphaServer typha;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    @BeforeEach
    void setUp() {
        ds = new MemoryDatastore();
        typha = server(ds, ServerSettings.defaults(0).withMaxConnections(3)
                .withPing(Duration.ofMillis(200), Duration.ofSeconds(1)), meters);
    }

    @AfterEach
    void tearDown() {
        typha.close();
        ds.close();
    }

    private long pingsAnswered() {
        return meters.get("typha_ping_latency").summaries().stream().mapToLong(s -> s.count()).sum();
    }

    private Status statusAfter(Consumer<RawClient> script) throws Exception {
        try (RawClient c = RawClient.connect(typha.port())) {
            script.accept(c);
            return c.awaitClose();
        }
    }

    @Test
    void pongBeforeHelloIsAFailedPrecondition() throws Exception {
        Status s = statusAfter(c -> c.send(ClientMessage.newBuilder().setPong(Pong.getDefaultInstance()).build()));
        assertThat(s.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(s.getDescription()).isEqualTo("pong: the first message must be a ClientHello");
    }

    @Test
    void aSecondHelloIsAFailedPrecondition() throws Exception {
        Status s = statusAfter(c -> {
            c.hello("node-a", "felix");
            c.hello("node-a", "felix");
        });
        assertThat(s.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
        assertThat(s.getDescription()).isEqualTo("hello: sent twice on one stream");
    }

    @Test
    void helloWithoutHostnameIsInvalid() throws Exception {
        Status s = statusAfter(c -> c.hello("  ", "felix"));
        assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(s.getDescription()).isEqualTo("hello.hostname: required");
    }

    @Test
    void unknownSyncerTypeIsInvalid() throws Exception {
        Status s = statusAfter(c -> c.hello("node-a", "confd-v0"));
        assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(s.getDescription()).isEqualTo("hello.syncer_type: \"confd-v0\" is not one of felix, bgp");
    }

    /** Pings due every millisecond, many clients saying hello: each stream still starts with the ServerHello. */
    @Test
    void theServerHelloComesFirstEvenWhenAPingIsDue() throws Exception {
        TyphaServer pinging = server(ds, ServerSettings.defaults(0).withPing(Duration.ofMillis(1), Duration.ofMinutes(1)));
        java.util.List<RawClient> clients = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 60; i++) {
                RawClient c = RawClient.connect(pinging.port());
                clients.add(c);
                c.hello("node-" + i, "felix");
            }
            for (RawClient c : clients) {
                await("pinged", () -> c.received.stream().anyMatch(ServerMessage::hasPing));
                assertThat(c.received.get(0).getPayloadCase()).isEqualTo(ServerMessage.PayloadCase.HELLO);
            }
        } finally {
            closeAll(clients);
            pinging.close();
        }
    }

    @Test
    void aNegativeSeenRevisionIsInvalid() throws Exception {
        Status s = statusAfter(c -> c.send(ClientMessage.newBuilder().setHello(ClientHello.newBuilder()
                .setHostname("node-a").setSyncerType("felix").putSeenRevisions("GlobalNetworkSet", -4)).build()));
        assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(s.getDescription()).isEqualTo("hello.seen_revisions[\"GlobalNetworkSet\"]: must not be negative, got -4");
    }

    @Test
    void anEmptyMessageIsInvalid() throws Exception {
        Status s = statusAfter(c -> c.send(ClientMessage.getDefaultInstance()));
        assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
        assertThat(s.getDescription()).isEqualTo("ClientMessage.payload: empty or unknown message");
    }

    @Test
    void aClientThatNeverSaysHelloTimesOut() throws Exception {
        Status s = statusAfter(c -> { });
        assertThat(s.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(s.getDescription()).startsWith("hello:");
    }

    @Test
    void aClientThatNeverAnswersPingsIsDropped() throws Exception {
        Status s = statusAfter(c -> c.hello("mute", "bgp"));
        assertThat(s.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(s.getDescription()).startsWith("pong:");
    }

    @Test
    void connectionsBeyondTheLimitAreRefused() throws Exception {
        java.util.List<RawClient> admitted = new java.util.ArrayList<>();
        try {
            for (int i = 1; i <= 3; i++) {
                RawClient x = RawClient.connect(typha.port());
                admitted.add(x);
                x.hello("n" + i, "felix");
                int n = i;
                await("stream " + i + " admitted", () -> typha.connectionCount() == n);
            }
            try (RawClient d = RawClient.connect(typha.port())) {
                d.hello("n4", "felix");
                Status s = d.awaitClose();
                assertThat(s.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(s.getDescription()).contains("TYPHA_MAXCONNECTIONSUPPERLIMIT").contains("at most 3");
            }
            assertThat(typha.connectionCount()).isEqualTo(3);
        } finally {
            admitted.forEach(RawClient::close);
        }
    }

    @Test
    void theServerKeepsServingAfterBadClientsAndAnswersPingsOfGoodOnes() throws Exception {
        for (String type : new String[] {"", "x", "FELIX "}) {
            try (RawClient bad = RawClient.connect(typha.port())) {
                bad.send(ClientMessage.newBuilder().setHello(ClientHello.newBuilder().setHostname("h")
                        .setSyncerType(type)).build());
                if (!type.equals("FELIX ")) {
                    assertThat(bad.awaitClose().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                }
            }
        }
        ds.create(TyphaServerTest.set("after-bad-clients", 1, 1));
        ViewRecorder v = new ViewRecorder();
        try (TyphaClient good = client(clientOptions("good", typha.port()), v)) {
            await("the good client in sync", v::inSync);
            // Typha's own count of answered pings: 10 at one per 200 ms span 2 s, well past the
            // 1 s pong timeout, so a client not answering would have been dropped by then.
            long before = pingsAnswered();
            await("10 more pings answered", () -> pingsAnswered() >= before + 10);
            assertThat(good.connections()).isEqualTo(1);
            assertThat(v.view()).hasSize(1);
            assertThat(v.violations()).isEmpty();
        }
    }
}
