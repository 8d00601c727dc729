package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.app.FelixConfiguration;
import calico.felix.app.FelixDataplaneAutoConfiguration;
import calico.felix.app.FelixEnvironment;
import calico.felix.app.FelixProperties;
import calico.felix.app.KernelDataplaneConfiguration;
import calico.felix.calc.FelixSettings;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.context.annotation.Import;

/**
 * Which {@link Dataplane} felix gets, from the real {@code application.yml} and Calico-style variables
 * (checked at start-up by felix's own wiring, {@link FelixConfiguration}).
 */
class KernelDataplaneSelectionTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(FelixProperties.class)
    @Import({KernelDataplaneConfiguration.class, FelixConfiguration.class})
    static class Drivers {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withInitializer(new ConfigDataApplicationContextInitializer())
            .withUserConfiguration(Drivers.class)
            .withConfiguration(AutoConfigurations.of(FelixDataplaneAutoConfiguration.class))
            .withPropertyValues("HOSTNAME=", "FELIX_FELIXHOSTNAME=node-a",
                    "FELIX_MTUFILEPATH=" + System.getProperty("java.io.tmpdir") + "/felix-selection-test-mtu");

    /** The typed settings felix's environment gives (their owner; the dataplane gets them resolved). */
    private static FelixSettings settings(ApplicationContext context) {
        return FelixEnvironment.from((ConfigurableEnvironment) context.getEnvironment()).settings();
    }

    /** As in Calico, felix programs the kernel unless told otherwise. */
    @Test
    void kernelIsTheDefault() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (NetNs ns = NetNs.create("kdd")) {
            runner.withPropertyValues("FELIX_DATAPLANENETNS=" + ns.name()).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(Dataplane.class)).isInstanceOf(KernelDataplane.class);
                FelixProperties p = context.getBean(FelixProperties.class);
                assertThat(p.dataplaneDriver()).isEqualTo("kernel");
                assertThat(settings(context).iptablesBackend()).isEqualTo("Auto");
            });
        }
    }

    @Test
    void modelOnlyWhenAskedFor() {
        runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=model").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Dataplane.class)).isInstanceOf(ModelDataplane.class);
            FelixProperties p = context.getBean(FelixProperties.class);
            assertThat(p.dataplaneDriver()).isEqualTo("model");
            assertThat(p.dataplaneNetns()).isEmpty();
            assertThat(settings(context).iptablesBackend()).isEqualTo("Auto");
        });
    }

    @Test
    void iptablesDriverIsTheKernelDataplaneInTheGivenNamespace() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (NetNs ns = NetNs.create("kds")) {
            runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=iptables", "FELIX_DATAPLANENETNS=" + ns.name(),
                    "FELIX_IPTABLESBACKEND=nft").run(context -> {
                assertThat(context).hasNotFailed();
                Dataplane d = context.getBean(Dataplane.class);
                assertThat(d).isInstanceOf(KernelDataplane.class);
                assertThat(((KernelDataplane) d).netns()).isEqualTo(ns.name());
                assertThat(settings(context).iptablesBackend()).isEqualTo("NFT");
            });
        }
    }

    @Test
    void kernelIsTheSameKernelDataplane() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (NetNs ns = NetNs.create("kdk")) {
            runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=Kernel", "FELIX_DATAPLANENETNS=" + ns.name())
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        assertThat(context.getBean(Dataplane.class)).isInstanceOf(KernelDataplane.class);
                        assertThat(context.getBean(FelixProperties.class).dataplaneDriver()).isEqualTo("kernel");
                        assertThat(((KernelDataplane) context.getBean(Dataplane.class)).backend())
                                .as("chosen at the first batch, from its config").isEqualTo("none");
                    });
        }
    }

    @Test
    void aMissingNamespaceFailsStartUpNamingIt() {
        assumeTrue(NetNs.available(), "needs root");
        runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=iptables", "FELIX_DATAPLANENETNS=no-such-ns-kd",
                "FELIX_IPTABLESBACKEND=NFT").run(context -> assertThat(context).getFailure()
                .hasStackTraceContaining("/run/netns/no-such-ns-kd"));
    }

    @Test
    void badValuesFailStartUpNamingTheVariable() {
        runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=bpf").run(context -> assertThat(context).getFailure()
                .hasStackTraceContaining("FELIX_DATAPLANEDRIVERNAME").hasStackTraceContaining("model, kernel, iptables"));
        runner.withPropertyValues("FELIX_IPTABLESBACKEND=xt").run(context -> assertThat(context).getFailure()
                .hasStackTraceContaining("FELIX_IPTABLESBACKEND").hasStackTraceContaining("Auto, NFT, Legacy"));
        runner.withPropertyValues("FELIX_DATAPLANENETNS=../etc").run(context -> assertThat(context).getFailure()
                .hasStackTraceContaining("FELIX_DATAPLANENETNS"));
    }
}
