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
import calico.libcalico.health.PrometheusMetricsServer;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Felix's configuration as the real {@code application.yml} maps it: defaults, Calico's
 * environment names, and start-up failures that name the variable at fault. (Environment
 * variables are supplied as the highest-precedence properties, which is how the placeholders in
 * application.yml see them.)
 */
class FelixConfigurationTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(FelixProperties.class)
    @Import(FelixConfiguration.class)
    static class ConfigOnly {
    }

    /** A stand-in for the dataplane drivers. */
    @Configuration(proxyBeanMethods = false)
    static class DriverDataplane {
        @Bean
        Dataplane driver() {
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
    }

    // HOSTNAME is blanked so the host running the tests does not supply the node name.
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new ConfigDataApplicationContextInitializer())
            .withUserConfiguration(ConfigOnly.class)
            .withConfiguration(AutoConfigurations.of(FelixDataplaneAutoConfiguration.class))
            .withPropertyValues("HOSTNAME=");

    @Test
    void defaultsAreCalicos() {
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=node-a").run(context -> {
            assertThat(context).hasNotFailed();
            FelixProperties p = context.getBean(FelixProperties.class);
            assertThat(p.hostname()).isEqualTo("node-a");
            DatastoreProperties d = context.getBean(DatastoreProperties.class);
            assertThat(d.datastoreType()).isEqualTo("etcdv3");
            assertThat(d.toConfig().etcd().endpoints()).containsExactly(URI.create("http://127.0.0.1:2379"));
            assertThat(context.getBean(FelixEnvironment.class).settings().logSeverityScreen()).isEqualTo("Info");
            assertThat(context.getBean(FelixConfiguration.FelixLogLevel.class).level()).isEqualTo(LogLevel.INFO);
            assertThat(context.getEnvironment().getProperty("calico.health.port")).isEqualTo("9099");
            assertThat(context.getEnvironment().getProperty("calico.health.host")).isEqualTo("localhost");
            assertThat(context.getEnvironment().getProperty("calico.health.enabled")).isEqualTo("true");
            ProgrammedState state = context.getBean(ProgrammedState.class);
            assertThat(context.getBean(Dataplane.class)).isInstanceOf(ModelDataplane.class);
            assertThat(state.model()).isSameAs(state.dataplane().model());
            // Calico's default: no separate metrics port.
            assertThat(context).doesNotHaveBean(PrometheusMetricsServer.class);
            assertThat(context.getEnvironment().getProperty("felix.prometheus-metrics-port")).isEqualTo("9091");
        });
    }

    @Test
    void calicoEnvironmentNamesMapOntoProperties() {
        runner.withPropertyValues("HOSTNAME=pod-host", "DATASTORE_TYPE=etcdv3",
                "ETCD_ENDPOINTS=http://10.0.0.1:2379", "FELIX_ETCDENDPOINTS=http://10.0.0.2:2379,http://10.0.0.3:2379",
                "FELIX_LOGSEVERITYSCREEN=warning", "FELIX_HEALTHPORT=9199", "FELIX_HEALTHHOST=0.0.0.0",
                "FELIX_HEALTHENABLED=false", "FELIX_IPIPMTU=1400").run(context -> {
            assertThat(context).hasNotFailed();
            FelixProperties p = context.getBean(FelixProperties.class);
            assertThat(p.hostname()).isEqualTo("pod-host");
            assertThat(context.getBean(DatastoreProperties.class).toConfig().etcd().endpoints())
                    .containsExactly(URI.create("http://10.0.0.2:2379"), URI.create("http://10.0.0.3:2379"));
            assertThat(context.getBean(FelixEnvironment.class).settings().logSeverityScreen()).isEqualTo("Warning");
            assertThat(context.getBean(FelixConfiguration.FelixLogLevel.class).level()).isEqualTo(LogLevel.WARN);
            assertThat(context.getEnvironment().getProperty("calico.health.port")).isEqualTo("9199");
            assertThat(context.getEnvironment().getProperty("calico.health.host")).isEqualTo("0.0.0.0");
            assertThat(context.getEnvironment().getProperty("calico.health.enabled")).isEqualTo("false");
            assertThat(context.getBean(FelixEnvironment.class).variables())
                    .containsEntry("FELIX_IPIPMTU", "1400").containsEntry("FELIX_LOGSEVERITYSCREEN", "warning");
        });
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=node-b", "HOSTNAME=pod-host", "DATASTORE_TYPE=etcdv3",
                "FELIX_DATASTORETYPE=memory").run(context -> {
            FelixProperties p = context.getBean(FelixProperties.class);
            assertThat(p.hostname()).isEqualTo("node-b");
            assertThat(context.getBean(DatastoreProperties.class).toConfig().type()).isEqualTo(DatastoreConfig.Type.MEMORY);
        });
    }

    @Test
    void theNftablesNetlinkEncoderIsOnUnlessFelixNftablesNetlinkRulesTurnsItOff() {
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n").run(context ->
                assertThat(context.getBean(FelixProperties.class).nftablesNetlinkRules()).isTrue());
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_NFTABLESNETLINKRULES=false").run(context ->
                assertThat(context.getBean(FelixProperties.class).nftablesNetlinkRules()).isFalse());
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_NFTABLESNETLINKRULES=maybe").run(context ->
                assertThat(context).getFailure().hasStackTraceContaining("nftables-netlink-rules"));
    }

    @Test
    void theMtuFileIsCalicosUnlessFelixMtuFilePathSaysOtherwise() {
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n").run(context -> assertThat(
                context.getBean(FelixProperties.class).mtuFile()).isEqualTo(Path.of("/var/lib/calico/mtu")));
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_MTUFILEPATH=/run/calico/node1/mtu").run(context ->
                assertThat(context.getBean(FelixProperties.class).mtuFile()).isEqualTo(Path.of("/run/calico/node1/mtu")));
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "FELIX_MTUFILEPATH=relative/mtu").run(context ->
                assertThat(context).getFailure().hasStackTraceContaining("FELIX_MTUFILEPATH")
                        .hasStackTraceContaining("not an absolute file path"));
    }

    @Test
    void kubernetesDatastoreReadsKubeconfigAndNamesItWhenUnusable(@TempDir Path dir) throws Exception {
        Path kubeconfig = Kubeconfigs.write(dir, "https://10.96.0.1:443");
        // KUBECONFIG and K8S_API_ENDPOINT as Spring sees them (environment or --KUBECONFIG=).
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig)
                .run(context -> {
                    DatastoreConfig config = context.getBean(DatastoreProperties.class).toConfig();
                    assertThat(config.type()).isEqualTo(DatastoreConfig.Type.KUBERNETES);
                    assertThat(config.kubernetes().client().getMasterUrl()).startsWith("https://10.96.0.1");
                });
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "DATASTORE_TYPE=kubernetes", "KUBECONFIG=" + kubeconfig,
                "K8S_API_ENDPOINT=https://10.96.0.9:6443").run(context -> assertThat(context.getBean(
                        DatastoreProperties.class).toConfig().kubernetes().client().getMasterUrl())
                .startsWith("https://10.96.0.9:6443"));
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "DATASTORE_TYPE=kubernetes",
                "KUBECONFIG=" + dir.resolve("missing")).run(context -> assertThatThrownBy(
                        () -> context.getBean(DatastoreProperties.class).toConfig()).hasMessageContaining("KUBECONFIG"));
    }

    @Test
    void etcdFilesBindFromFelixsAndCalicosVariables(@TempDir Path dir) throws Exception {
        Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "ca");
        Path cert = java.nio.file.Files.writeString(dir.resolve("cert.pem"), "cert");
        Path key = java.nio.file.Files.writeString(dir.resolve("key.pem"), "key");
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "ETCD_CA_CERT_FILE=/elsewhere", "FELIX_ETCDCAFILE=" + ca,
                "ETCD_CERT_FILE=" + cert, "FELIX_ETCDKEYFILE=" + key).run(context -> {
            var etcd = context.getBean(DatastoreProperties.class).toConfig().etcd();
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
        assertFails(runner.withPropertyValues("FELIX_FELIXHOSTNAME=n", "felix.datastore-timeout=0s"),
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
        runner.withPropertyValues("FELIX_FELIXHOSTNAME=n").withUserConfiguration(DriverDataplane.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBeansOfType(Dataplane.class)).containsOnlyKeys("driver");
            ProgrammedState state = context.getBean(ProgrammedState.class);
            assertThat(state.dataplane()).isNotInstanceOf(ModelDataplane.class);
            assertThat(state.model()).as("no mirror: the driver's own model").isSameAs(state.dataplane().model());
        });
    }

    private static void assertFails(ApplicationContextRunner r, String... fragments) {
        r.run((AssertableApplicationContext context) -> {
            assertThat(context).hasFailed();
            StringBuilder messages = new StringBuilder();
            for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertThat(messages.toString()).contains(fragments);
        });
    }
}
