package calico.whisker;

import static calico.whisker.testing.Flows.flow;
import static calico.whisker.testing.Flows.key;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.Flow;
import calico.whisker.testing.RealGoldmane;
import calico.whisker.testing.Whisker;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * GET /flows latency and throughput through the whole path (HTTP, auth, parameter parsing, gRPC
 * to a real in-process goldmane holding 20,000 distinct flow keys, JSON). Run with
 * {@code bench/run.sh whisker-backend calico.whisker.WhiskerBench [requests] [threads]}.
 */
public final class WhiskerBench {

    private WhiskerBench() {
    }

    public static void main(String[] args) throws Exception {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        Path dir = Files.createTempDirectory("whisker-bench");
        try (RealGoldmane gm = RealGoldmane.plaintext()) {
            List<Flow> batch = new ArrayList<>();
            for (int i = 0; i < 20_000; i++) {
                batch.add(flow(key("ns-" + (i % 50), "src-" + i + "-", "dst-ns-" + (i % 20), "dst-" + (i % 500) + "-",
                        1000 + i % 1000, i % 7 == 0 ? Action.Deny : Action.Allow), gm.now(), 1 + i % 13, 100 + i));
                if (batch.size() == 2000) {
                    gm.feed(batch);
                    batch.clear();
                }
            }
            try (Whisker w = Whisker.start(dir, gm.address(), "--logging.level.root=warn")) {
                String filter = "/flows?pageSize=100&filters="
                        + Whisker.enc("{\"source_namespaces\":[{\"type\":\"Exact\",\"value\":\"ns-7\"}]}");
                String[][] cases = {
                        {"pageSize=100", "/flows?pageSize=100"},
                        {"pageSize=1000", "/flows?pageSize=1000"},
                        {"filter ns-7 (400 keys)", filter},
                        {"sortBy=SourceName", "/flows?pageSize=100&sortBy=SourceName"}};
                for (String[] c : cases) {
                    run(w, c[1], 20, 1); // warm-up
                }
                System.out.printf("20000 flow keys; %d requests per row; concurrent = %d threads%n", requests, threads);
                System.out.printf("%-24s %-10s %8s %8s %8s %9s %8s%n", "case", "mode", "p50 ms", "p99 ms", "max ms",
                        "req/s", "KiB");
                for (String[] c : cases) {
                    print(c[0], "sequential", run(w, c[1], requests, 1));
                    print(c[0], "concurrent", run(w, c[1], requests, threads));
                }
                // The same List straight over gRPC: what goldmane itself costs, without the backend.
                for (int size : new int[] {100, 1000}) {
                    var stub = calico.libcalico.goldmane.proto.FlowsGrpc.newBlockingStub(ch(gm));
                    var req = calico.libcalico.goldmane.proto.FlowListRequest.newBuilder().setPageSize(size).build();
                    for (int i = 0; i < 20; i++) {
                        stub.list(req);
                    }
                    long[] lat = new long[requests];
                    long t0 = System.nanoTime();
                    for (int i = 0; i < requests; i++) {
                        long st = System.nanoTime();
                        stub.list(req);
                        lat[i] = System.nanoTime() - st;
                    }
                    print("gRPC direct, size " + size, "sequential", new Result(lat, System.nanoTime() - t0, 0));
                }
            }
        }
    }

    static io.grpc.ManagedChannel ch(RealGoldmane gm) {
        return io.grpc.netty.NettyChannelBuilder.forTarget(gm.address()).usePlaintext()
                .maxInboundMessageSize(64 << 20).build();
    }

    record Result(long[] nanos, long wallNanos, int bytes) {
    }

    static Result run(Whisker w, String path, int n, int threads) throws Exception {
        long[] lat = new long[n];
        int[] size = new int[1];
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> fs = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            int k = i;
            fs.add(pool.submit(() -> {
                long s = System.nanoTime();
                HttpResponse<String> r = w.get(path);
                lat[k] = System.nanoTime() - s;
                if (r.statusCode() != 200) {
                    throw new IllegalStateException(path + " → " + r.statusCode() + " " + r.body());
                }
                size[0] = r.body().length();
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        long wall = System.nanoTime() - t0;
        pool.shutdown();
        return new Result(lat, wall, size[0]);
    }

    static void print(String name, String mode, Result r) {
        long[] s = r.nanos().clone();
        Arrays.sort(s);
        System.out.printf("%-24s %-10s %8.1f %8.1f %8.1f %9.0f %8d%n", name, mode, s[s.length / 2] / 1e6,
                s[(int) Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] / 1e6, s[s.length - 1] / 1e6,
                s.length / (r.wallNanos() / 1e9), r.bytes() / 1024);
    }
}
