package calico.felix.app;

import calico.felix.dataplane.Dataplane;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.ModelDataplane;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.kubernetes.Kubeconfigs;
import ch.qos.logback.classic.Level;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Felix's configuration as {@link FelixConfiguration#fromVariables} reads Calico's variables: defaults, Calico's
 * environment names, and start-up failures that name the variable at fault.
 */
class FelixConfigurationTest {

    /** A stand-in for the dataplane drivers. */
    static Dataplane driver() {
        return new Dataplane() {
            private final DataplaneModel model = new DataplaneModel();

            @Override
            public void apply(List<DataplaneUpdate> batch) {
            }

            @Override
            public boolean inSync() {
                return false;
            }

            @Override
            public DataplaneModel model() {
                return model;
            }
        };
    }

    /** The settings {@code variables} ({@code NAME=value} each) give; HOSTNAME blank so the test host's is not used. */
    private static final class Runner {
        private final Map<String, String> variables = new LinkedHashMap<>(Map.of("HOSTNAME", ""));

        Runner withPropertyValues(String... pairs) {
            Runner r = new Runner();
            r.variables.putAll(variables);
            for (String p : pairs) {
                int eq = p.indexOf('=');
                r.variables.put(p.substring(0, eq), p.substring(eq + 1));
            }
            return r;
        }

        void run(Consumer<FelixConfiguration> check) {
            check.accept(FelixConfiguration.fromVariables(variables));
        }

        /** {@return why the settings are refused} */
        Throwable failure() {
            try {
                FelixConfiguration.fromVariables(variables);
            } catch (RuntimeException e) {
                return e;
            }
            throw new AssertionError("accepted: " + variables);
        }
    }

    private final Runner runner = new Runner();

    @Test
    void defaultsAreCalicos() {
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=node-a").run(context -> {
            FelixProperties p = context.felix();
            assertThat(p.hostname()).isEqualTo("node-a");
            DatastoreProperties d = context.datastore();
            assertThat(d.datastoreType()).isEqualTo("etcdv3");
            assertThat(d.toConfig().etcd().endpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
            assertThat(context.environment().settings().logSeverityScreen()).isEqualTo("Info");
            assertThat(context.logLevel().level()).isEqualTo(Level.INFO);
            assertThat(context.health().port()).isEqualTo(9099);
            assertThat(context.health().host()).isEqualTo("localhost");
            assertThat(context.health().enabled()).isTrue();
            assertThat(context.admin().port()).isEqualTo(9097);
            assertThat(p.kernelDataplane()).as("Calico's default: the kernel").isTrue();
            // Calico's default: no separate metrics port.
            assertThat(context.metrics().enabled()).isFalse();
            assertThat(context.metrics().port()).isEqualTo(9091);
            assertThat(context.debug().enabled()).isFalse();
        });
    }

    @Test
    void calicoEnvironmentNamesMapOntoProperties() {
        runner.withPropertyValues("HOSTNAME=pod-host", "DATASTORE_TYPE=etcdv3",
                "ETCD_ENDPOINTS=http://10.0.0.1:2379", "FELIX_ETCDENDPOINTS=http://10.0.0.2:2379,http://10.0.0.3:2379",
                "FELIX_LOGSEVERITYSCREEN=warning", "FELIX_HEALTHPORT=9199", "FELIX_HEALTHHOST=0.0.0.0",
                "FELIX_HEALTHENABLED=false", "FELIX_IPIPMTU=1400").run(context -> {
            FelixProperties p = context.felix();
            assertThat(p.hostname()).isEqualTo("pod-host");
            assertThat(context.datastore().toConfig().etcd().endpoints())
                    .containsExactly(URI.create("http://10.0.0.2:2379"), URI.create("http://10.0.0.3:2379"));
            assertThat(context.environment().settings().logSeverityScreen()).isEqualTo("Warning");
            assertThat(context.logLevel().level()).isEqualTo(Level.WARN);
            assertThat(context.health().port()).isEqualTo(9199);
            assertThat(context.health().host()).isEqualTo("0.0.0.0");
            assertThat(context.health().enabled()).isFalse();
            assertThat(context.environment().variables())
                    .containsEntry("FELIX_IPIPMTU", "1400").containsEntry("FELIX_LOGSEVERITYSCREEN", "warning");
        });
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=node-b", "HOSTNAME=pod-host", "DATASTORE_TYPE=etcdv3",
                "FELIX_DATASTORETYPE=memory").run(context -> {
            FelixProperties p = context.felix();
            assertThat(p.hostname()).isEqualTo("node-b");
            assertThat(context.datastore().toConfig().type()).isEqualTo(DatastoreConfig.Type.MEMORY);
        });
    }

    @Test
    void theNftablesNetlinkEncoderIsOnUnlessFelixNftablesNetlinkRulesTurnsItOff() {
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n").run(context ->
                assertThat(context.felix().nftablesNetlinkRules()).isTrue());
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_NFTABLESNETLINKRULES=false").run(context ->
                assertThat(context.felix().nftablesNetlinkRules()).isFalse());
        assertThat(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_NFTABLESNETLINKRULES=maybe").failure()).hasMessageContaining("nftables-netlink-rules");
    }

    @Test
    void theMtuFileIsCalicosUnlessFelixMtuFilePathSaysOtherwise() {
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n").run(context -> assertThat(
                context.felix().mtuFile()).isEqualTo(Path.of("/var/lib/calico/mtu")));
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_MTUFILEPATH=/run/calico/node1/mtu").run(context ->
                assertThat(context.felix().mtuFile()).isEqualTo(Path.of("/run/calico/node1/mtu")));
        assertThat(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_MTUFILEPATH=relative/mtu").failure())
                .hasMessageContaining("FELIX_MTUFILEPATH").hasMessageContaining("not an absolute file path");
    }

    @Test
    void kubernetesDatastoreReadsKubeconfigAndNamesItWhenUnusable(@TempDir Path dir) throws Exception {
        Path kubeconfig = Kubeconfigs.write(dir, "https://10.96.0.1:443");
        // KUBECONFIG and K8S_API_ENDPOINT as Spring sees them (environment or --KUBECONFIG=).
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig)
                .run(context -> {
                    DatastoreConfig config = context.datastore().toConfig();
                    assertThat(config.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
                    assertThat(config.kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.1");
                });
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig,
                "K8S_API_ENDPOINT=https://10.96.0.9:6443").run(context -> assertThat(context.datastore().toConfig().kubernetes().client().getMasterUrl())
                .startsWith("https://10.96.0.9:6443"));
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "DATASTORE_TYPE=kubernetes",
                "KUBECONFIG=" + dir.resolve("missing")).run(context -> assertThatThrownBy(
                        () -> context.datastore().toConfig()).hasMessageContaining("KUBECONFIG"));
    }

    @Test
    void etcdFilesBindFromFelixsAndCalicosVariables(@TempDir Path dir) throws Exception {
        Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "ca");
        Path cert = java.nio.file.Files.writeString(dir.resolve("cert.pem"), "cert");
        Path key = java.nio.file.Files.writeString(dir.resolve("key.pem"), "key");
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "ETCD_CA_CERT_FILE=/elsewhere", "FELIX_ETCDCAFILE=" + ca,
                "ETCD_CERT_FILE=" + cert, "FELIX_ETCDKEYFILE=" + key).run(context -> {
            var etcd = context.datastore().toConfig().etcd();
            assertThat(etcd.caCertFile()).as("FELIX_ETCDCAFILE wins").isEqualTo(ca);
            assertThat(etcd.certFile()).isEqualTo(cert);
            assertThat(etcd.keyFile()).isEqualTo(key);
        });
    }

    @Test
    void invalidValuesFailStartUpNamingTheVariable() {
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_DATASTORETYPE=zookeeper"),
                "FELIX_DATASTORETYPE", "zookeeper");
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_ETCDENDPOINTS=127.0.0.1:2379"),
                "FELIX_ETCDENDPOINTS", "127.0.0.1:2379");
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_LOGSEVERITYSCREEN=Loud"),
                "FELIX_LOGSEVERITYSCREEN", "Loud");
        assertFails(runner, "FELIX_FELIXHOSTNAME", "required");
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_DATASTORETIMEOUT=0s"),
                "felix.datastore-timeout", "positive");
        // Values only the calculation graph reads are checked by its resolver, up front.
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_IPIPMTU=big"), "FELIX_IPIPMTU", "big");
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_BPFENABLED=maybe"),
                "FELIX_BPFENABLED", "maybe");
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_INTERFACEPREFIX=cali,tap/0"),
                "FELIX_INTERFACEPREFIX", "tap/0");
    }

    @Test
    void aDriverDataplaneReplacesTheModelDataplaneAndItsModelIsTheOneRead() {
        Dataplane driver = driver();
        try (FelixApplication app = FelixTestApps.start(new FelixApplication.Parts(driver, null), "--HOSTNAME=",
                "--FELIX_FELIXHOSTNAME=n", "--FELIX_DATASTORETYPE=memory", "--FELIX_HEALTHPORT=0",
                "--FELIX_HEALTHHOST=127.0.0.1", "--FELIX_ADMINPORT=0", "--FELIX_ADMINHOST=127.0.0.1")) {
            ProgrammedState state = app.state();
            assertThat(state.dataplane()).isSameAs(driver).isNotInstanceOf(ModelDataplane.class);
            assertThat(state.model()).as("no mirror: the driver's own model").isSameAs(state.dataplane().model());
        }
        try (FelixApplication app = FelixTestApps.start(FelixApplication.Parts.none(), "--HOSTNAME=",
                "--FELIX_FELIXHOSTNAME=n", "--FELIX_DATASTORETYPE=memory", "--FELIX_DATAPLANEDRIVERNAME=model",
                "--FELIX_HEALTHPORT=0", "--FELIX_HEALTHHOST=127.0.0.1", "--FELIX_ADMINPORT=0",
                "--FELIX_ADMINHOST=127.0.0.1")) {
            ProgrammedState state = app.state();
            assertThat(state.dataplane()).isInstanceOf(ModelDataplane.class);
            assertThat(state.model()).isSameAs(state.dataplane().model());
        }
    }

    private static void assertFails(Runner r, String... fragments) {
        StringBuilder messages = new StringBuilder();
        for (Throwable t = r.failure(); t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
        }
        assertThat(messages.toString()).contains(fragments);
    }
}
