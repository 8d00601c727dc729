package calico.typha.server;

import static calico.typha.server.TyphaFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.libcalico.datastore.memory.MemoryDatastore;
import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Typha design invariant 5: each client's messages are framed and written by its connection's
 * event loop, one thread per stream, never handed from a pool thread to the transport.
 */
class EventLoopDrainTest {

    @Test
    void everyMessageToAClientIsSentFromItsConnectionsEventLoop() throws Exception {
        Map<Integer, Set<String>> sendersByStream = new ConcurrentHashMap<>();
        AtomicInteger streams = new AtomicInteger();
        ServerInterceptor recordSenders = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                int stream = streams.incrementAndGet();
                Set<String> senders = sendersByStream.computeIfAbsent(stream, k -> ConcurrentHashMap.newKeySet());
                return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void sendMessage(R message) {
                        senders.add(Thread.currentThread().getName());
                        super.sendMessage(message);
                    }
                }, headers);
            }
        };
        try (MemoryDatastore ds = new MemoryDatastore()) {
            for (int i = 0; i < 20; i++) {
                ds.create(set("before-" + i));
            }
            TyphaServer typha = TyphaFixture.server(ds, ServerSettings.defaults(0), new SimpleMeterRegistry(),
                    recordSenders);
            List<RawClient> clients = new ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    RawClient c = RawClient.connect(typha.port());
                    c.hello("node-" + i, "felix");
                    clients.add(c);
                }
                await("every client in sync", () -> clients.stream().allMatch(RawClient::inSync));
                for (int i = 0; i < 30; i++) {
                    ds.create(set("after-" + i));
                }
                await("every client has the last delta", () -> clients.stream().allMatch(c -> has(c, "after-29")));
            } finally {
                clients.forEach(RawClient::close);
                typha.close();
            }
        }

        assertThat(sendersByStream).hasSize(8);
        sendersByStream.forEach((stream, senders) -> {
            assertThat(senders).as("threads that sent on stream %d", stream).hasSize(1);
            assertThat(senders.iterator().next()).as("stream %d's sender", stream).contains("worker-ELG");
        });
    }

    private static boolean has(RawClient c, String name) {
        return c.received.stream().filter(m -> m.hasKvs())
                .flatMap(m -> m.getKvs().getKvsList().stream())
                .anyMatch(kv -> kv.getValueJson().toStringUtf8().contains("\"" + name + "\""));
    }

    private static GlobalNetworkSet set(String name) {
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(List.of("10.1.0.0/24")));
    }
}
