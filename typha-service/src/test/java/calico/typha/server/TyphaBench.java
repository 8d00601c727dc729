package calico.typha.server;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.proto.ClientHello;
import calico.libcalico.typha.proto.ClientMessage;
import calico.libcalico.typha.proto.KV;
import calico.libcalico.typha.proto.Pong;
import calico.libcalico.typha.proto.ServerMessage;
import calico.libcalico.typha.proto.SyncStatus;
import calico.libcalico.typha.proto.TyphaGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Typha under load (printed figures, not a test). Typha runs in a child JVM (so its heap is
 * measured alone) over a memory datastore holding N GlobalNetworkSets; C lightweight protocol
 * clients in this JVM connect at once; then U updates/s for S seconds, each stamped with
 * {@code System.nanoTime()} (CLOCK_MONOTONIC, shared by both JVMs) in a label, give the delay
 * from datastore write to receipt by each client.
 *
 * <p>{@code bench/run.sh typha-service calico.typha.server.TyphaBench [clients] [resources] [rate] [seconds]}
 * (defaults 1000 20000 200 10).
 */
public final class TyphaBench {

    private static final String STAMP = "\"bench-t\":\"";

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("server")) {
            server(Integer.parseInt(args[1]));
            return;
        }
        int clients = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int resources = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int rate = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        int seconds = args.length > 3 ? Integer.parseInt(args[3]) : 10;

        Process child = new ProcessBuilder(javaBin(), "-Xms256m", "-Xmx3g", "-cp", System.getProperty("java.class.path"),
                TyphaBench.class.getName(), "server", String.valueOf(resources))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        // Drain the child's stdout continuously (its logs share it): a full pipe would stall typha.
        java.util.concurrent.BlockingQueue<String> in = new java.util.concurrent.LinkedBlockingQueue<>();
        BufferedReader childOut = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        Thread pump = new Thread(() -> {
            try {
                for (String line; (line = childOut.readLine()) != null; ) {
                    if (line.matches("^(PORT|HEAP|UPDATES|QUIT|ERROR) .*")) {
                        in.add(line);
                    }
                }
            } catch (java.io.IOException ignored) {
                // child ended
            }
            in.add("EOF ");
        }, "child-stdout");
        pump.setDaemon(true);
        pump.start();
        PrintWriter out = new PrintWriter(child.getOutputStream(), true, StandardCharsets.UTF_8);
        try {
            int port = Integer.parseInt(expect(in, "PORT"));
            long heapBefore = Long.parseLong(command(in, out, "HEAP"));
            System.out.printf("typha: %d resources in sync, heap after GC %.1f MiB%n", resources, heapBefore / 1048576.0);

            long[] latencies = new long[clients * rate * seconds + clients * 16];
            AtomicInteger latencyCount = new AtomicInteger();
            CountDownLatch inSync = new CountDownLatch(clients);
            List<BenchClient> all = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < clients; i++) {
                all.add(new BenchClient(port, "bench-" + i, inSync, latencies, latencyCount));
            }
            boolean synced = inSync.await(300, TimeUnit.SECONDS);
            double syncSeconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf("%d clients: %s in %.2f s (%d snapshot KVs each)%n", clients,
                    synced ? "all in sync" : "NOT all in sync", syncSeconds, all.get(0).snapshotKvs.get());
            long heapWith = Long.parseLong(command(in, out, "HEAP"));
            System.out.printf("typha heap with %d clients %.1f MiB: %.1f KiB per client%n", clients,
                    heapWith / 1048576.0, (heapWith - heapBefore) / 1024.0 / clients);

            long written = Long.parseLong(command(in, out, "UPDATES " + rate + " " + seconds));
            long expected = written * clients;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (latencyCount.get() < expected && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            int n = Math.min(latencyCount.get(), latencies.length);
            long[] sorted = Arrays.copyOf(latencies, n);
            Arrays.sort(sorted);
            long reconnects = all.stream().filter(c -> c.failed.get() != null).count();
            System.out.printf("deltas: %d written at %d/s, %d of %d receipts; latency write->client p50 %.1f ms, "
                            + "p99 %.1f ms, max %.1f ms; clients that lost their stream: %d%n",
                    written, rate, n, expected, pct(sorted, 0.50), pct(sorted, 0.99),
                    n == 0 ? 0 : sorted[n - 1] / 1e6, reconnects);
            all.forEach(BenchClient::close);
            command(in, out, "QUIT");
        } finally {
            child.destroy();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        System.exit(0);
    }

    private static double pct(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.floor(p * sorted.length))] / 1e6;
    }

    private static String javaBin() {
        return java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String expect(java.util.concurrent.BlockingQueue<String> in, String prefix) throws Exception {
        for (String line; !(line = in.take()).startsWith("EOF "); ) {
            if (line.startsWith(prefix + " ")) {
                return line.substring(prefix.length() + 1).trim();
            }
        }
        throw new IllegalStateException("typha child ended before " + prefix);
    }

    private static String command(java.util.concurrent.BlockingQueue<String> in, PrintWriter out, String cmd) throws Exception {
        out.println(cmd);
        return expect(in, cmd.split(" ")[0]);
    }

    // ---- child: typha over a memory datastore ----

    private static void server(int resources) throws Exception {
        MemoryDatastore ds = new MemoryDatastore();
        for (int i = 0; i < resources; i++) {
            ds.create(set("gns-" + i, Map.of(), i));
        }
        TyphaServer typha = new TyphaServer(ds, ServerSettings.defaults(0).withMaxConnections(100_000),
                null, new SimpleMeterRegistry(), new HealthAggregator(Clock.systemUTC()), "bench");
        typha.start();
        while (typha.status(SyncerType.FELIX) != SyncerStatus.IN_SYNC || typha.status(SyncerType.BGP) != SyncerStatus.IN_SYNC) {
            Thread.sleep(20);
        }
        System.out.println("PORT " + typha.port());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.split(" ");
            switch (w[0]) {
                case "HEAP" -> {
                    for (int i = 0; i < 3; i++) {
                        System.gc();
                        Thread.sleep(200);
                    }
                    System.out.println("HEAP " + ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
                }
                case "UPDATES" -> {
                    int rate = Integer.parseInt(w[1]);
                    int seconds = Integer.parseInt(w[2]);
                    long interval = 1_000_000_000L / rate;
                    long start = System.nanoTime();
                    long n = (long) rate * seconds;
                    for (long i = 0; i < n; i++) {
                        long due = start + i * interval;
                        long wait;
                        while ((wait = due - System.nanoTime()) > 0) {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        }
                        String name = "gns-" + (i % resources);
                        var current = ds.get(ResourceKey.of(ResourceKind.GLOBAL_NETWORK_SET, name)).orElseThrow();
                        ds.update(set(name, Map.of("bench-t", String.valueOf(System.nanoTime())), (int) i)
                                .withMetadata(current.metadata().withLabels(
                                        Map.of("bench-t", String.valueOf(System.nanoTime())))));
                    }
                    System.out.println("UPDATES " + n);
                }
                case "QUIT" -> {
                    System.out.println("QUIT bye");
                    typha.close();
                    System.exit(0);
                }
                default -> System.out.println("ERROR unknown command " + line);
            }
        }
        System.exit(0);
    }

    private static GlobalNetworkSet set(String name, Map<String, String> labels, int variant) {
        return new GlobalNetworkSet(ObjectMeta.named(name).withLabels(labels),
                new GlobalNetworkSetSpec(List.of("10." + (variant % 250) + "." + (variant / 250 % 250) + ".0/24")));
    }

    /**
     * The Sync method with a response marshaller that skims snapshot chunks (counts their KVs
     * without building objects) and parses everything else: the bench measures typha and the
     * transport, not 1 000 clients' protobuf decoding sharing this JVM.
     */
    private static final io.grpc.MethodDescriptor<ClientMessage, ServerMessage> SKIMMING_SYNC =
            TyphaGrpc.getSyncMethod().toBuilder(io.grpc.protobuf.ProtoUtils.marshaller(ClientMessage.getDefaultInstance()),
                    new io.grpc.MethodDescriptor.Marshaller<ServerMessage>() {
                        @Override
                        public java.io.InputStream stream(ServerMessage value) {
                            throw new UnsupportedOperationException();
                        }

                        @Override
                        public ServerMessage parse(java.io.InputStream in) {
                            try {
                                byte[] b = in.readAllBytes();
                                ServerMessage skimmed = skimSnapshot(b);
                                return skimmed != null ? skimmed : ServerMessage.parseFrom(b);
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }
                    }).build();

    /** {@return a snapshot chunk with its KVs replaced by empty ones (same count), or null if not a chunk} */
    private static ServerMessage skimSnapshot(byte[] b) throws java.io.IOException {
        var top = com.google.protobuf.CodedInputStream.newInstance(b);
        int tag = top.readTag();
        if (tag != ((2 << 3) | 2)) { // ServerMessage.kvs
            return null;
        }
        var kvs = com.google.protobuf.CodedInputStream.newInstance(top.readByteArray());
        int count = 0;
        boolean snapshot = false;
        boolean last = false;
        for (int t; (t = kvs.readTag()) != 0; ) {
            switch (t >>> 3) {
                case 1 -> {
                    count++;
                    kvs.skipField(t);
                }
                case 2 -> snapshot = kvs.readBool();
                case 3 -> last = kvs.readBool();
                default -> kvs.skipField(t);
            }
        }
        if (!snapshot) {
            return null;
        }
        calico.libcalico.typha.proto.KVs.Builder out = calico.libcalico.typha.proto.KVs.newBuilder()
                .setSnapshot(true).setLastSnapshotChunk(last);
        for (int i = 0; i < count; i++) {
            out.addKvs(KV.getDefaultInstance());
        }
        return ServerMessage.newBuilder().setKvs(out).build();
    }

    /** A protocol client that only counts and timestamps: the bench measures typha, not decoding. */
    private static final class BenchClient implements ClientResponseObserver<ClientMessage, ServerMessage> {
        private final ManagedChannel channel;
        private final CountDownLatch inSync;
        private final long[] latencies;
        private final AtomicInteger latencyCount;
        final AtomicLong snapshotKvs = new AtomicLong();
        final java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        private ClientCallStreamObserver<ClientMessage> requests;
        private boolean synced;

        BenchClient(int port, String host, CountDownLatch inSync, long[] latencies, AtomicInteger latencyCount) {
            this.inSync = inSync;
            this.latencies = latencies;
            this.latencyCount = latencyCount;
            this.channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
            var req = io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
                    channel.newCall(SKIMMING_SYNC, io.grpc.CallOptions.DEFAULT), this);
            req.onNext(ClientMessage.newBuilder().setHello(ClientHello.newBuilder().setHostname(host)
                    .setSyncerType("felix")).build());
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<ClientMessage> r) {
            requests = r;
        }

        @Override
        public void onNext(ServerMessage m) {
            long now = System.nanoTime();
            switch (m.getPayloadCase()) {
                case KVS -> {
                    if (m.getKvs().getSnapshot()) {
                        snapshotKvs.addAndGet(m.getKvs().getKvsCount());
                        return;
                    }
                    for (KV kv : m.getKvs().getKvsList()) {
                        String json = kv.getValueJson().toStringUtf8();
                        int at = json.indexOf(STAMP);
                        if (at >= 0) {
                            int from = at + STAMP.length();
                            long t = Long.parseLong(json.substring(from, json.indexOf('"', from)));
                            int i = latencyCount.getAndIncrement();
                            if (i < latencies.length) {
                                latencies[i] = now - t;
                            }
                        }
                    }
                }
                case STATUS -> {
                    if (m.getStatus().getStatus() == SyncStatus.IN_SYNC && !synced) {
                        synced = true;
                        inSync.countDown();
                    }
                }
                case PING -> requests.onNext(ClientMessage.newBuilder().setPong(Pong.newBuilder()
                        .setPingSentUnixNanos(m.getPing().getSentUnixNanos())).build());
                default -> { }
            }
        }

        @Override
        public void onError(Throwable t) {
            failed.set(t);
        }

        @Override
        public void onCompleted() {
            failed.set(new IllegalStateException("completed"));
        }

        void close() {
            requests.cancel("bench over", null);
            channel.shutdownNow();
        }
    }
}
