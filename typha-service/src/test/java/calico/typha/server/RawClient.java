package calico.typha.server;

import calico.libcalico.typha.proto.ClientHello;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.ServerMessage;
import calico.libcalico.typha.proto.SyncStatus;
import calico.libcalico.typha.proto.TyphaGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** A bare protocol client for tests: sends whatever it is told, records what comes back. */
final class RawClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final ClientCallStreamObserver<ClientMessage> requests;
    final List<ServerMessage> received = new CopyOnWriteArrayList<>();
    private final CompletableFuture<Status> closed = new CompletableFuture<>();

    private RawClient(int port, boolean stalled) {
        this(stalled ? NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().flowControlWindow(64 * 1024)
                .build() : NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build(), stalled);
    }

    /** A client over a given channel (closed with the client). */
    static RawClient over(ManagedChannel channel) {
        return new RawClient(channel, false);
    }

    private RawClient(ManagedChannel channel, boolean stalled) {
        this.channel = channel;
        CompletableFuture<ClientCallStreamObserver<ClientMessage>> req = new CompletableFuture<>();
        TyphaGrpc.newStub(channel).sync(new ClientResponseObserver<ClientMessage, ServerMessage>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<ClientMessage> r) {
                if (stalled) {
                    r.disableAutoRequestWithInitial(0);
                }
                req.complete(r);
            }

            @Override
            public void onNext(ServerMessage m) {
                received.add(m);
            }

            @Override
            public void onError(Throwable t) {
                closed.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                closed.complete(Status.OK);
            }
        });
        requests = req.join();
    }

    static RawClient connect(int port) {
        return new RawClient(port, false);
    }

    /** A client that reads nothing until {@link #readAll()}. */
    static RawClient stalled(int port) {
        return new RawClient(port, true);
    }

    void send(ClientMessage m) {
        requests.onNext(m);
    }

    void hello(String hostname, String syncerType) {
        send(ClientMessage.newBuilder().setHello(ClientHello.newBuilder().setHostname(hostname)
                .setSyncerType(syncerType)).build());
    }

    /** {@return whether typha has said IN_SYNC to this client} */
    boolean inSync() {
        return received.stream().anyMatch(m -> m.hasStatus() && m.getStatus().getStatus() == SyncStatus.IN_SYNC);
    }

    void readAll() {
        requests.request(Integer.MAX_VALUE);
    }

    Status awaitClose() throws Exception {
        return closed.get(60, TimeUnit.SECONDS);
    }

    boolean isClosed() {
        return closed.isDone();
    }

    @Override
    public void close() {
        requests.cancel("test over", null);
        channel.shutdownNow();
    }
}
