package calico.node.startup.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ASNumber;
import calico.api.model.EncapsulationMode;
import calico.api.net.Cidr;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.node.startup.autodetect.AutodetectionMethod;
import calico.node.startup.steps.AddressSetting;
import calico.node.startup.steps.NodeStartup;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Calico's variables, through the real {@code application.yml}, into the typed start-up settings;
 * bad values fail start-up naming the property, the variable and the reason.
 */
class StartupPropertiesTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(StartupProperties.class)
    static class Settings {
        @Bean
        DatastoreProperties datastore(Environment env) {
            return DatastoreProperties.bind(env, NodeStartupApplication.DATASTORE);
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new ConfigDataApplicationContextInitializer()).withUserConfiguration(Settings.class)
            .withPropertyValues("HOSTNAME=");

    @Test
    void calicosDefaults() {
        runner.withPropertyValues("NODENAME=Node-A").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            NodeStartup.Settings s = ctx.getBean(StartupProperties.class).toSettings(false);
            assertThat(s.node().nodeName()).as("lower-cased, as Calico").isEqualTo("node-a");
            assertThat(s.node().kubernetesNodeName()).isEqualTo("node-a");
            assertThat(s.node().ipv4()).isInstanceOf(AddressSetting.Unset.class);
            assertThat(s.node().ipv4Method()).isEqualTo(new AutodetectionMethod.FirstFound());
            assertThat(s.node().asNumber()).isNull();
            assertThat(s.node().policyOnly()).isFalse();
            assertThat(s.ipv4Pool().enabled()).isTrue();
            assertThat(s.ipv4Pool().cidr()).as("192.168.0.0/16 chosen by the step").isEmpty();
            assertThat(s.ipv4Pool().blockSize()).isEqualTo(26);
            assertThat(s.ipv4Pool().ipipMode()).isEqualTo(EncapsulationMode.Never);
            assertThat(s.ipv4Pool().natOutgoing()).isTrue();
            assertThat(s.ipv6Pool().blockSize()).isEqualTo(122);
            assertThat(s.ipv6Pool().natOutgoing()).isFalse();
            assertThat(s.ipv6Supported()).isTrue();
            assertThat(ctx.getBean(DatastoreProperties.class).type()).isEqualTo(DatastoreConfig.Type.ETCDV3);
            assertThat(ctx.getBean(StartupProperties.class).waitsForDatastore()).as("WAIT_FOR_DATASTORE unset").isFalse();
            assertThat(s.node().wireguardHostEncryption()).as("FELIX_WIREGUARDHOSTENCRYPTIONENABLED unset").isFalse();
        });
        runner.withPropertyValues("FELIX_WIREGUARDHOSTENCRYPTIONENABLED=true").run(ctx -> assertThat(
                ctx.getBean(StartupProperties.class).toSettings(false).node().wireguardHostEncryption()).isTrue());
        runner.withPropertyValues("WAIT_FOR_DATASTORE=true").run(ctx ->
                assertThat(ctx.getBean(StartupProperties.class).waitsForDatastore()).isTrue());
        runner.withPropertyValues("WAIT_FOR_DATASTORE=True").run(ctx ->
                assertThat(ctx.getBean(StartupProperties.class).waitsForDatastore()).as("only \"true\", as Calico").isFalse());
    }

    @Test
    void calicosVariables() {
        runner.withPropertyValues("NODENAME=n1", "IP=10.0.0.5", "IP6=autodetect",
                "IP_AUTODETECTION_METHOD=cidr=10.0.0.0/8, 192.168.0.0/16", "IP6_AUTODETECTION_METHOD=can-reach=2001:db8::1",
                "AS=64512.7", "CALICO_IPV4POOL_CIDR=10.244.1.0/16", "CALICO_IPV4POOL_BLOCK_SIZE=24",
                "CALICO_IPV4POOL_IPIP=cross-subnet", "CALICO_IPV4POOL_VXLAN=Never", "CALICO_IPV4POOL_NAT_OUTGOING=no",
                "CALICO_IPV4POOL_NODE_SELECTOR=zone == 'a'", "CALICO_IPV6POOL_CIDR=none", "CALICO_K8S_NODE_REF=k8s-n1",
                "DATASTORE_TYPE=kubernetes", "FELIX_IPV6SUPPORT=false").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            NodeStartup.Settings s = ctx.getBean(StartupProperties.class).toSettings(true);
            assertThat(s.node().ipv4()).isEqualTo(new AddressSetting.Explicit(Cidr.parse("10.0.0.5/32"), false));
            assertThat(s.node().ipv6()).isInstanceOf(AddressSetting.Autodetect.class);
            assertThat(s.node().ipv4Method()).isEqualTo(new AutodetectionMethod.Cidrs(
                    List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("192.168.0.0/16"))));
            assertThat(s.node().ipv6Method()).isEqualTo(new AutodetectionMethod.CanReach("2001:db8::1"));
            assertThat(s.node().asNumber()).isEqualTo(ASNumber.dotted(64512, 7));
            assertThat(s.node().kubernetesNodeName()).isEqualTo("k8s-n1");
            assertThat(s.node().orchestratorRef()).isTrue();
            assertThat(s.ipv4Pool().cidr()).as("masked to its network").isEqualTo(Optional.of(Cidr.parse("10.244.0.0/16")));
            assertThat(s.ipv4Pool().blockSize()).isEqualTo(24);
            assertThat(s.ipv4Pool().ipipMode()).isEqualTo(EncapsulationMode.CrossSubnet);
            assertThat(s.ipv4Pool().natOutgoing()).isFalse();
            assertThat(s.ipv4Pool().nodeSelector()).isEqualTo("zone == 'a'");
            assertThat(s.ipv6Pool().enabled()).as("CALICO_IPV6POOL_CIDR=none").isFalse();
            assertThat(s.ipv6Supported()).isFalse();
            assertThat(s.cluster().kubernetesDatastore()).isTrue();
        });
    }

    @Test
    void badValuesNameTheVariableAndTheReason() {
        fails("IP=10.0.0", "node.ip (IP)", "\"10.0.0\" is not an IPv4 address");
        fails("IP=2001:db8::1", "node.ip (IP)", "not an IPv4 address");
        fails("IP6=10.0.0.1", "node.ip6 (IP6)", "not an IPv6 address");
        fails("IP_AUTODETECTION_METHOD=fastest", "IP_AUTODETECTION_METHOD", "\"fastest\"");
        fails("IP6_AUTODETECTION_METHOD=skip-interface=[", "IP6_AUTODETECTION_METHOD", "not a regular expression");
        fails("AS=70000.1", "node.as (AS)", "70000.1");
        fails("CALICO_IPV4POOL_CIDR=10.0.0.0/33", "CALICO_IPV4POOL_CIDR", "not an IPv4 CIDR");
        fails("CALICO_IPV6POOL_CIDR=10.0.0.0/8", "CALICO_IPV6POOL_CIDR", "not an IPv6 CIDR");
        fails("CALICO_IPV4POOL_BLOCK_SIZE=33", "CALICO_IPV4POOL_BLOCK_SIZE", "33 is not between 20 and 32");
        fails("CALICO_IPV6POOL_BLOCK_SIZE=big", "CALICO_IPV6POOL_BLOCK_SIZE", "\"big\" is not a number");
        fails("CALICO_IPV4POOL_IPIP=sometimes", "CALICO_IPV4POOL_IPIP", "not one of Always, CrossSubnet, Never");
        fails("CALICO_IPV6POOL_VXLAN=yes", "CALICO_IPV6POOL_VXLAN", "\"yes\"");
        fails("CALICO_IPV4POOL_NODE_SELECTOR=zone ==", "CALICO_IPV4POOL_NODE_SELECTOR", "not a selector");
        fails("CALICO_NETWORKING_BACKEND=gobgp", "CALICO_NETWORKING_BACKEND", "gobgp");
        fails("DATASTORE_TYPE=consul", "DATASTORE_TYPE", "consul");
        runner.withPropertyValues("NODENAME=n", "NO_DEFAULT_POOLS=true", "CALICO_IPV4POOL_CIDR=10.0.0.0/16")
                .run(ctx -> assertThat(ctx).getFailure().rootCause().hasMessageContaining("NO_DEFAULT_POOLS")
                        .hasMessageContaining("CALICO_IPV4POOL_CIDR"));
    }

    private void fails(String setting, String names, String reason) {
        runner.withPropertyValues("NODENAME=n", setting).run(ctx -> assertThat(ctx).getFailure().rootCause()
                .as(setting).hasMessageContaining(names).hasMessageContaining(reason));
    }
}
