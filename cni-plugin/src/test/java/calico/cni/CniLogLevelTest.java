package calico.cni;

import static org.assertj.core.api.Assertions.assertThat;

import calico.cni.plugin.CalicoCni;
import calico.cni.plugin.WorkloadNetwork;
import calico.cni.spec.CniRequest;
import calico.cni.spec.CniResponse;
import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.EtcdServerExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code log_level} decides what each call logs: the same three calls (an ADD, an ADD of a new
 * sandbox of the same pod, which replaces the old host veth with a warning, and an ADD without
 * {@code CNI_NETNS}, which fails) are run at every level, each into its own {@code log_file_path}.
 */
class CniLogLevelTest {
    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @TempDir
    Path dir;

    private CniHarness h;

    @BeforeEach
    void node() {
        h = new CniHarness(ETCD.endpoint());
        if (h.store.get(calico.api.model.ResourceKey.of(calico.api.model.ResourceKind.IP_POOL, "p-log")).isEmpty()) {
            h.pool("p-log", "10.209.0.0/24", 26); // one etcd for the class
        }
    }

    @AfterEach
    void cleanUp() {
        h.close();
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(CniHarness.leftoverNamespaces()).isEmpty();
    }

    private String conf(String level, Path file) {
        String base = h.calicoConf("1.0.0", "10.209.0.0/24").replace("\"log_level\":\"info\"", "\"log_level\":\"" + level + "\"");
        return file == null ? base : base.replace("\"mtu\":1440", "\"mtu\":1440,\"log_file_path\":\"" + file + "\"");
    }

    /** Runs the three calls for pod {@code pod} at {@code level}; {@return the log lines} (none: no file). */
    private List<String> threeCalls(String level, String pod) throws Exception {
        Path file = dir.resolve("sub").resolve(level + ".log");
        String conf = conf(level, file);
        CniResponse first = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(h.pod()), "ns1", pod), conf);
        assertThat(first.exitCode()).as(first.stdout()).isZero();
        CniResponse second = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(h.pod()), "ns1", pod), conf);
        assertThat(second.exitCode()).as(second.stdout()).isZero();
        CniResponse failed = h.call(CniHarness.env("ADD", CniHarness.containerId(), null, "ns1", pod + "-x"), conf);
        assertThat(h.parse(failed).path("code").asInt()).as(failed.stdout()).isEqualTo(4);
        return Files.exists(file) ? Files.readAllLines(file) : List.of();
    }

    private static long count(List<String> lines, String level) {
        return lines.stream().filter(l -> l.contains(" [" + level + "][")).count();
    }

    @Test
    void eachLevelLogsItsOwnAndHigherLevelsOnly() throws Exception {
        List<String> debug = threeCalls("debug", "l-debug");
        assertThat(count(debug, "DEBUG")).isPositive();
        assertThat(count(debug, "INFO")).isPositive();
        assertThat(count(debug, "WARNING")).isPositive();
        assertThat(count(debug, "ERROR")).isPositive();
        assertThat(debug).anyMatch(l -> l.contains("[DEBUG]") && l.contains("assigned [10.209.0."));

        List<String> info = threeCalls("INFO", "l-info");
        assertThat(count(info, "DEBUG")).isZero();
        assertThat(info).anyMatch(l -> l.contains("[INFO]") && l.contains("networked ns1/l-info: [10.209.0."));
        assertThat(count(info, "WARNING")).isPositive();

        List<String> warning = threeCalls("warning", "l-warn");
        assertThat(count(warning, "DEBUG") + count(warning, "INFO")).isZero();
        assertThat(warning).anyMatch(l -> l.contains("[WARNING]") && l.contains("replacing cali"));
        assertThat(count(warning, "ERROR")).isPositive();

        List<String> error = threeCalls("error", "l-error");
        assertThat(error).hasSize(1);
        assertThat(error.get(0)).contains("[ERROR]").contains("ADD ").contains("code 4").contains("CNI_NETNS");

        assertThat(threeCalls("none", "l-none")).as("none writes nothing, not even the file").isEmpty();
        assertThat(dir.resolve("sub").resolve("none.log")).doesNotExist();
    }

    @Test
    void withoutLogFilePathLinesGoToStandardErrorAtTheCallsLevel() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CalicoCni cni = new CalicoCni(h.json, CniHarness.NODE, h.datastores, new WorkloadNetwork(),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        NetNs pod = h.pod();
        String cid = CniHarness.containerId();
        CniResponse r = h.host.call(() -> cni.handle(new CniRequest(CniHarness.env("ADD", cid, CniHarness.netns(pod), "ns1",
                "l-stderr"), conf("error", null).getBytes(StandardCharsets.UTF_8))));
        assertThat(r.exitCode()).as(r.stdout()).isZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).as("a successful ADD at error level logs nothing").isEmpty();
        CniResponse d = h.host.call(() -> cni.handle(new CniRequest(CniHarness.env("DEL", cid, CniHarness.netns(pod), "ns1",
                "l-stderr"), conf("Debug", null).getBytes(StandardCharsets.UTF_8))));
        assertThat(d.exitCode()).as(d.stdout()).isZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("[DEBUG]").contains("DEL " + cid.substring(0, 12))
                .contains("[INFO]").contains("removed ns1/l-stderr");
    }

    @Test
    void anUnknownLevelIsRefusedNamingTheField() {
        CniResponse r = h.call(CniHarness.env("ADD", CniHarness.containerId(), CniHarness.netns(h.pod()), "ns1", "l-bad"),
                conf("verbose", null));
        assertThat(r.exitCode()).isOne();
        assertThat(h.parse(r).path("code").asInt()).isEqualTo(7);
        assertThat(h.parse(r).path("msg").asText()).isEqualTo("log_level: 'verbose' is not debug, info, warning, error or none");
        assertThat(h.caliLinks()).isEmpty();
    }
}
