package calico.felix.e2e;

import calico.felix.app.FelixApplication;
import calico.libcalico.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The whole felix application, configured only through Calico's {@code FELIX_*} settings (as
 * command-line properties), talking to a real datastore ({@link TestDatastore#felixArgs}) and
 * programming one network namespace. Its
 * HTTP ports are random; {@link #get} reads the admin API and {@link #awaitReady} the readiness
 * probe, as an operator and the kubelet would.
 */
final class FelixProcess implements AutoCloseable {

    private final FelixApplication app;
    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final int adminPort;
    private final int healthPort;
    /** Holds the MTU file felix writes (never the node's {@code /var/lib/calico/mtu}); deleted on close. */
    private final Path mtuDir;
    /** The eBPF driver's private bpffs (never the machine's {@code /sys/fs/bpf}); unmounted and deleted on close. */
    private final calico.dataplane.testing.PrivateBpfFs bpf;
    private final Path bpfFs;

    /** {@return felix's settings for the etcd at {@code etcd}}. */
    static List<String> etcdArgs(URI etcd) {
        return List.of("--FELIX_DATASTORETYPE=etcdv3", "--FELIX_ETCDENDPOINTS=" + etcd);
    }

    /** {@return felix's settings for the kubernetes datastore that {@code kubeconfig} names}. */
    static List<String> kubernetesArgs(Path kubeconfig) {
        return List.of("--FELIX_DATASTORETYPE=kubernetes", "--KUBECONFIG=" + kubeconfig);
    }

    /** Felix on the datastore {@code datastoreArgs} name ({@code FELIX_DATASTORETYPE} and its settings). */
    FelixProcess(List<String> datastoreArgs, String hostNetns, Backend backend, String logSeverity, String... extraArgs) {
        this(Cluster.NODE, datastoreArgs, hostNetns, backend, logSeverity, extraArgs);
    }

    /** Felix for node {@code hostname} ({@code FELIX_FELIXHOSTNAME}), programming namespace {@code hostNetns}. */
    FelixProcess(String hostname, List<String> datastoreArgs, String hostNetns, Backend backend, String logSeverity,
                 String... extraArgs) {
        List<String> args = new ArrayList<>(List.of("--FELIX_ADMINPORT=0", "--FELIX_ADMINHOST=127.0.0.1",
                "--FELIX_HEALTHPORT=0", "--FELIX_HEALTHHOST=127.0.0.1", "--HOSTNAME=",
                "--FELIX_FELIXHOSTNAME=" + hostname));
        args.addAll(datastoreArgs);
        try {
            mtuDir = java.nio.file.Files.createTempDirectory("felix-e2e-mtu");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        args.add("--FELIX_MTUFILEPATH=" + mtuDir.resolve("mtu"));
        args.add("--FELIX_ENDPOINTSTATUSPATHPREFIX=" + mtuDir); // not the host's /var/run/calico: one per felix
        bpf = calico.dataplane.testing.PrivateBpfFs.unmounted();
        bpfFs = bpf.path();
        args.add("--FELIX_BPFFSPATH=" + bpfFs);
        args.addAll(List.of("--FELIX_DATAPLANENETNS=" + hostNetns,
                "--FELIX_LOGSEVERITYSCREEN=" + logSeverity, "--FELIX_READYPOLLINITIAL=50ms",
                "--FELIX_READYPOLLMAX=200ms"));
        args.addAll(List.of(extraArgs));
        args.addAll(backend.felixArgs());
        app = FelixApplication.start(variables(args));
        adminPort = app.adminPort();
        healthPort = app.healthPort();
    }

    /** {@return the variables {@code --NAME=value} arguments set}, a later one winning, as felix's main reads them */
    private static java.util.Map<String, String> variables(List<String> args) {
        java.util.Map<String, String> variables = new java.util.LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            variables.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return variables;
    }

    /** {@return where the eBPF driver of this felix pins its maps} ({@code FELIX_BPFFSPATH}/calico) */
    Path bpfPins() {
        return bpfFs.resolve("calico");
    }

    /** {@return where this felix writes the pod MTU} ({@code FELIX_MTUFILEPATH}; a file of its own per felix). */
    Path mtuFile() {
        return mtuDir.resolve("mtu");
    }

    /** Waits for {@code /readiness} to answer 200 (datastore ready, dataplane in sync). */
    void awaitReady(Duration timeout) {
        Await.until("felix ready", timeout, () -> readiness(), r -> r.startsWith("200 "));
    }

    /**
     * {@return the kernel dataplane's last apply as the admin API reports it}: finish time and
     * applies since start ({@code /felix/v1/dataplane}: felix hands batches to the kernel
     * dataplane's queue, so {@code /felix/v1/status} says when a batch was handed over, this when
     * it was in the kernel; batches that queued meanwhile are applied as one).
     */
    LastApply lastApply() {
        try {
            JsonNode d = json.readTree(get("/felix/v1/dataplane"));
            JsonNode a = d.path("status").path("lastApply");
            String at = a.path("at").asText(null);
            return new LastApply(at == null || at.equals("null") ? null : Instant.parse(at),
                    d.path("status").path("applies").asLong(), a.path("batchSize").asInt(), d.path("errors").size(),
                    d.path("status").path("queuedBatches").asLong(), took(a.path("took").asText(null)),
                    a.path("batches").asInt(), a.path("stats").toString());
        } catch (java.io.IOException e) {
            throw new IllegalStateException("felix status is not JSON: " + e.getMessage(), e);
        }
    }

    /** {@return the kernel dataplane's counters}: graph batches handed over, applies, time in applies. */
    String dataplaneStatus() {
        try {
            JsonNode st = json.readTree(get("/felix/v1/dataplane")).path("status");
            return "graph batches " + st.path("batches").asLong() + ", applies " + st.path("applies").asLong()
                    + ", time in applies " + st.path("applyTime").asText() + ", resyncs " + st.path("resyncs").asLong();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("felix dataplane status is not JSON: " + e.getMessage(), e);
        }
    }

    /**
     * {@return the kernel dataplane's counters since start} ({@code /felix/v1/dataplane}): driver
     * applies, full rewrites, periodic read-backs, items those repaired, recorded failures.
     */
    Counters counters() {
        try {
            JsonNode st = json.readTree(get("/felix/v1/dataplane")).path("status");
            return new Counters(st.path("applies").asLong(), st.path("resyncs").asLong(), st.path("refreshes").asLong(),
                    st.path("repairs").asLong(), st.path("failures").asLong());
        } catch (java.io.IOException e) {
            throw new IllegalStateException("felix dataplane status is not JSON: " + e.getMessage(), e);
        }
    }

    /** The kernel dataplane's counters; {@link #writes()} leaves out the read-backs, which write nothing unless they repair. */
    record Counters(long applies, long resyncs, long refreshes, long repairs, long failures) {
        Counters writes() {
            return new Counters(applies, resyncs, 0, repairs, failures);
        }
    }

    /** {@return whether {@code /readiness} answers 200 now}. */
    boolean ready() {
        HttpResponse<String> r = request(healthPort, "/readiness");
        return r != null && r.statusCode() == 200;
    }

    /** {@return whether {@code /liveness} answers 200 now}. */
    boolean live() {
        HttpResponse<String> r = request(healthPort, "/liveness");
        return r != null && r.statusCode() == 200;
    }

    /**
     * The kernel dataplane's last-apply record.
     *
     * @param at      when the apply finished (kernel programmed)
     * @param batches applies so far
     * @param took    how long the apply itself took (render, driver, kernel), null if unknown
     * @param merged  graph batches in the last apply
     * @param stats   what its driver wrote (JSON)
     */
    record LastApply(Instant at, long batches, int batchSize, int errors, long queued, Duration took, int merged,
                     String stats) {
    }

    private static Duration took(String iso) {
        try {
            return iso == null || iso.equals("null") ? null : Duration.parse(iso);
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    /**
     * Waits (at most {@code timeout}) until felix has finished applying a batch after
     * {@code since}; {@return whether it did}. A write that changes nothing felix programs
     * produces no batch, so callers treat false as "nothing to wait for".
     */
    boolean awaitApplyAfter(Instant since, Duration timeout) {
        return Await.within(timeout, () -> {
            LastApply a = lastApply();
            return a.at() != null && a.at().isAfter(since) && a.queued() == 0;
        });
    }

    /** {@return the value of a gauge in the Prometheus scrape}, NaN if absent. */
    double gauge(String name) {
        HttpResponse<String> r = request(healthPort, "/actuator/prometheus");
        if (r == null) {
            return Double.NaN;
        }
        return r.body().lines().filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).findFirst().orElse(Double.NaN);
    }

    /** {@return the body of an admin API path, or the failure} (for diagnostics). */
    String get(String path) {
        HttpResponse<String> r = request(adminPort, path);
        return r == null ? "(no answer from " + path + ")" : r.body();
    }

    /** {@return the readiness probe's body} (for diagnostics). */
    String readiness() {
        HttpResponse<String> r = request(healthPort, "/readiness");
        return r == null ? "(no answer)" : r.statusCode() + " " + r.body();
    }

    private HttpResponse<String> request(int port, String path) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET()
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public void close() {
        app.close();
        bpf.close();
        try {
            java.nio.file.Files.deleteIfExists(mtuDir.resolve("mtu"));
            java.nio.file.Files.deleteIfExists(mtuDir);
        } catch (java.io.IOException e) {
            // a temporary directory: nothing depends on it going
        }
    }
}
