package calico.libcalico.datastore.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.ResponseHeader;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link WatchPrefetch} over a real gRPC connection (Netty, loopback) to a server speaking etcd's
 * Watch service that sends {@value #SENT} responses as soon as a stream opens.
 */
class WatchPrefetchTest {

    private static final int SENT = 20;

    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void setUp() throws Exception {
        server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(new WatchGrpc.WatchImplBase() {
                    @Override
                    public StreamObserver<WatchRequest> watch(StreamObserver<WatchResponse> out) {
                        for (int rev = 1; rev <= SENT; rev++) {
                            out.onNext(WatchResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setRevision(rev)).build());
                        }
                        return new StreamObserver<>() {
                            @Override
                            public void onNext(WatchRequest request) {
                            }

                            @Override
                            public void onError(Throwable t) {
                            }

                            @Override
                            public void onCompleted() {
                                out.onCompleted();
                            }
                        };
                    }
                })
                .build().start();
        channel = NettyChannelBuilder.forAddress(InetAddress.getLoopbackAddress().getHostAddress(), server.getPort())
                .usePlaintext().intercept(new WatchPrefetch(4)).build();
    }

    @AfterEach
    void tearDown() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void aWatchStreamGetsTheWindowAheadOfTheOneMessageItAskedForInOrder() throws Exception {
        BlockingQueue<Long> revisions = new LinkedBlockingQueue<>();
        ClientCall<WatchRequest, WatchResponse> call = channel.newCall(WatchGrpc.getWatchMethod(), CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(WatchResponse message) {
                revisions.add(message.getHeader().getRevision()); // and, unlike jetcd's stub, no request(1) after it
            }
        }, new Metadata());
        call.request(1); // what jetcd's stub asks for when it starts the stream

        List<Long> got = new ArrayList<>();
        for (int i = 0; i < 1 + 4; i++) {
            Long rev = revisions.poll(10, TimeUnit.SECONDS);
            assertThat(rev).as("message %d of the 1 asked for + 4 prefetched", i + 1).isNotNull();
            got.add(rev);
        }
        assertThat(got).containsExactly(1L, 2L, 3L, 4L, 5L);
        call.cancel("done", null);
    }

    @Test
    void otherCallsAreLeftAsTheyAre() {
        ClientCall<?, ?> watch = new WatchPrefetch(4).interceptCall(WatchGrpc.getWatchMethod(), CallOptions.DEFAULT, channel);
        ClientCall<?, ?> range = new WatchPrefetch(4).interceptCall(KVGrpc.getRangeMethod(), CallOptions.DEFAULT, channel);

        assertThat(watch).isInstanceOf(ForwardingClientCall.class);
        assertThat(range).isNotInstanceOf(ForwardingClientCall.class);
        assertThatThrownBy(() -> new WatchPrefetch(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyEtcdClientOfTheDatastoreReadsWatchesAhead() {
        assertThat(EtcdDatastore.interceptors(1_000)).contains(new WatchPrefetch(EtcdDatastore.WATCH_PREFETCH));
    }
}
