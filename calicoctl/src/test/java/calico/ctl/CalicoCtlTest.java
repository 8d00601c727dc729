package calico.ctl;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.model.GlobalNetworkPolicy;
import calico.libcalico.datastore.DatastoreConfig;
import calico.libcalico.testing.EtcdServerExtension;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** calicoctl end to end against a real etcd, through the same entry point {@code main} uses. */
class CalicoCtlTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static final Path DEMO = Path.of("..", "examples", "demo.yaml");

    @TempDir
    Path tmp;

    private Map<String, String> env;
    private String stdout;
    private String stderr;

    @BeforeEach
    void wipe() {
        env = Map.of("DATASTORE_TYPE", "etcdv3", "ETCD_ENDPOINTS", ETCD.endpoint().toString());
        // Each test starts from an empty datastore: delete what a previous test applied.
        assertThat(run("delete", "-f", DEMO.toString(), "--skip-not-exists")).as(stderr).isZero();
    }

    private int run(String... args) {
        return runWithInput("", args);
    }

    private int runWithInput(String stdin, String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        var ctl = new CalicoCtl(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                e -> DatastoreConfig.fromEnvironment(e).open());
        int status = ctl.run(List.of(args), env);
        stdout = out.toString(StandardCharsets.UTF_8);
        stderr = err.toString(StandardCharsets.UTF_8);
        return status;
    }

    @Test
    void appliesTheDemoResourcesAndReadsThemBack() {
        assertThat(run("apply", "-f", DEMO.toString())).as(stderr).isZero();
        assertThat(stdout).contains("Successfully applied 9 resource(s)");

        assertThat(run("get", "tiers")).isZero();
        assertThat(stdout.lines()).containsExactly("NAME", "default", "security");

        assertThat(run("get", "networkpolicies", "-A")).isZero();
        assertThat(stdout).contains("demo").contains("allow-frontend-to-backend");

        assertThat(run("get", "GlobalNetworkPolicy", "security.deny-blocked", "-o", "yaml")).isZero();
        var gnp = (GlobalNetworkPolicy) ResourceCodec.get().parse(stdout);
        assertThat(gnp.spec().tier()).isEqualTo("security");
        assertThat(gnp.metadata().resourceVersion()).isNotBlank();

        assertThat(run("get", "globalnetworksets", "-l", "role == 'blocked'", "-o", "json")).isZero();
        assertThat(ResourceCodec.get().parseAll(stdout)).extracting(r -> r.metadata().name())
                .containsExactly("blocked-ranges");

        // Applying again overwrites instead of failing.
        assertThat(run("apply", "-f", DEMO.toString())).as(stderr).isZero();
        assertThat(run("create", "-f", DEMO.toString())).isEqualTo(1);
        assertThat(stderr).contains("already exists");
    }

    @Test
    void aFileWithOneInvalidResourceWritesNothingAndNamesTheField() throws Exception {
        Path file = tmp.resolve("mixed.yaml");
        Files.writeString(file, """
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: good}
                spec: {order: 5}
                ---
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkSet
                metadata: {name: bad}
                spec:
                  nets: [10.0.0.0/8, 300.1.1.1/32]
                """);

        assertThat(run("apply", "-f", file.toString())).isEqualTo(1);
        assertThat(stderr).contains("spec.nets[1]");

        assertThat(run("get", "tier", "good")).isEqualTo(1);
        assertThat(stderr).contains("not found");
    }

    @Test
    void malformedInputIsRefusedWithTheFieldNamed() {
        String typo = """
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: typo}
                spec: {ordr: 5}
                """;
        assertThat(runWithInput(typo, "create", "-f", "-")).isEqualTo(1);
        assertThat(stderr).contains("spec.ordr: unknown field");

        assertThat(run("get", "bogus")).isEqualTo(2);
        assertThat(stderr).contains("unknown resource kind \"bogus\"");
        assertThat(run("apply")).isEqualTo(2);
        assertThat(stderr).contains("apply needs -f FILE");
        assertThat(run("apply", "-f", tmp.resolve("missing.yaml").toString())).isEqualTo(1);
        assertThat(stderr).contains("no such file");
    }

    @Test
    void deletesByNameAndReportsMissingResources() {
        assertThat(run("apply", "-f", DEMO.toString())).isZero();

        assertThat(run("delete", "networkpolicy", "allow-frontend-to-backend", "-n", "demo")).as(stderr).isZero();
        assertThat(stdout).contains("Successfully deleted 1 resource(s)");
        assertThat(run("delete", "networkpolicy", "allow-frontend-to-backend", "-n", "demo")).isEqualTo(1);
        assertThat(stderr).contains("not found");
    }

    @Test
    void aBadDatastoreSettingNamesTheVariable() {
        env = Map.of("DATASTORE_TYPE", "zookeeper");
        assertThat(run("get", "tiers")).isEqualTo(1);
        assertThat(stderr).contains("DATASTORE_TYPE");
    }
}
