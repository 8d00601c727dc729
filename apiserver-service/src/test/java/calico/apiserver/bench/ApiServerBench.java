package calico.apiserver.bench;

import calico.apiserver.e2e.ApiServerFixture;
import calico.apiserver.http.Http;
import calico.libcalico.testing.EtcdServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Figures for DESIGN.md (printed, never asserted): with 10,000 GlobalNetworkPolicies stored,
 * create and update throughput over HTTPS, list latency, and watch fan-out to 100 watchers
 * (p50/p99 from the update call to each watcher reading the event).
 *
 * <pre>bench/run.sh apiserver-service calico.apiserver.bench.ApiServerBench [--etcd] [policies] [watchers]</pre>
 */
public final class ApiServerBench {

    static final String GNP = "/apis/projectcalico.org/v3/globalnetworkpolicies";
    static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        List<String> a = new ArrayList<>(Arrays.asList(args));
        boolean etcd = a.remove("--etcd");
        int policies = a.isEmpty() ? 10_000 : Integer.parseInt(a.get(0));
        int watchers = a.size() < 2 ? 100 : Integer.parseInt(a.get(1));
        EtcdServer etcdServer = etcd ? EtcdServer.startOnTmpfs() : null;
        try (ApiServerFixture server = ApiServerFixture.start(etcd ? etcdServer.endpoint().toString() : null)) {
            Http http = new Http(server.url(), ApiServerFixture.ADMIN_TOKEN);
            System.out.printf("datastore: %s, %d policies, %d watchers%n", etcd ? "etcd (tmpfs)" : "memory", policies, watchers);
            http.get(GNP);

            ExecutorService pool = Executors.newFixedThreadPool(4);
            long t0 = System.nanoTime();
            runAll(pool, policies, i -> check(http.post(GNP, "application/json", gnp("p-" + i, i)), 201));
            double createS = (System.nanoTime() - t0) / 1e9;
            System.out.printf("create: %d in %.1f s = %.0f/s (4 clients)%n", policies, createS, policies / createS);

            for (int round = 0; round < 5; round++) {
                long l0 = System.nanoTime();
                var r = http.get(GNP);
                long ms = (System.nanoTime() - l0) / 1_000_000;
                System.out.printf("list all (%d items, %d KiB): %d ms%n", JSON.readTree(r.body()).path("items").size(),
                        r.body().length() / 1024, ms);
            }
            long p0 = System.nanoTime();
            http.get(GNP + "?limit=500");
            System.out.printf("list first page (limit=500): %d ms%n", (System.nanoTime() - p0) / 1_000_000);

            int updates = Math.min(policies, 2_000);
            long u0 = System.nanoTime();
            runAll(pool, updates, i -> check(http.patch(GNP + "/p-" + i, "application/merge-patch+json",
                    "{\"spec\":{\"order\":" + (i + 100_000) + "}}"), 200));
            double updS = (System.nanoTime() - u0) / 1e9;
            System.out.printf("update (merge patch): %d in %.1f s = %.0f/s (4 clients)%n", updates, updS, updates / updS);

            fanOut(http, watchers, 200);
            pool.shutdownNow();
        } finally {
            if (etcdServer != null) {
                etcdServer.close();
            }
        }
        System.exit(0);
    }

    static void fanOut(Http http, int watchers, int events) throws Exception {
        String rv = JSON.readTree(http.get(GNP + "?limit=1").body()).path("metadata").path("resourceVersion").asText();
        Map<Integer, Long> sentAt = new ConcurrentHashMap<>();
        List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(watchers);
        CountDownLatch connected = new CountDownLatch(watchers);
        ExecutorService readers = Executors.newFixedThreadPool(watchers);
        for (int w = 0; w < watchers; w++) {
            readers.submit(() -> {
                var resp = http.stream(http.request(GNP + "?watch=1&resourceVersion=" + rv));
                connected.countDown();
                int seen = 0;
                try (var in = new BufferedReader(new InputStreamReader(resp.body(), StandardCharsets.UTF_8))) {
                    String line;
                    while (seen < events && (line = in.readLine()) != null) {
                        long now = System.nanoTime();
                        if (line.isBlank()) {
                            continue; // the server's keep-alive newline
                        }
                        JsonNode ev = JSON.readTree(line);
                        int order = ev.path("object").path("spec").path("order").asInt();
                        Long sent = sentAt.get(order);
                        if (sent != null) {
                            latencies.add(now - sent);
                            seen++;
                        }
                    }
                } catch (Exception e) {
                    System.out.println("watcher failed: " + e);
                }
                done.countDown();
                return null;
            });
        }
        connected.await(60, TimeUnit.SECONDS);
        Thread.sleep(1000);
        for (int i = 0; i < events; i++) {
            int order = 1_000_000 + i;
            sentAt.put(order, System.nanoTime());
            check(http.patch(GNP + "/p-" + (i % 100), "application/merge-patch+json", "{\"spec\":{\"order\":" + order + "}}"), 200);
            Thread.sleep(10);
        }
        done.await(120, TimeUnit.SECONDS);
        readers.shutdownNow();
        long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
        if (sorted.length == 0) {
            System.out.println("watch fan-out: no events received");
            return;
        }
        System.out.printf("watch fan-out to %d watchers, %d events each: %d deliveries, latency p50 %.2f ms, "
                        + "p99 %.2f ms, max %.2f ms%n", watchers, events, sorted.length, pct(sorted, 50), pct(sorted, 99),
                sorted[sorted.length - 1] / 1e6);
    }

    static double pct(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)] / 1e6;
    }

    interface Task {
        void run(int i) throws Exception;
    }

    static void runAll(ExecutorService pool, int n, Task task) throws Exception {
        AtomicInteger next = new AtomicInteger();
        List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            fs.add(pool.submit(() -> {
                int i;
                while ((i = next.getAndIncrement()) < n) {
                    task.run(i);
                }
                return null;
            }));
        }
        for (var f : fs) {
            f.get();
        }
    }

    static void check(java.net.http.HttpResponse<String> r, int code) {
        if (r.statusCode() != code) {
            throw new IllegalStateException(r.statusCode() + " " + r.body());
        }
    }

    static String gnp(String name, int order) {
        return "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"GlobalNetworkPolicy\",\"metadata\":{\"name\":\""
                + name + "\"},\"spec\":{\"selector\":\"app == 'x'\",\"order\":" + order + ",\"ingress\":[{\"action\":"
                + "\"Allow\",\"protocol\":\"TCP\",\"destination\":{\"ports\":[80,443]}}]}}";
    }
}
