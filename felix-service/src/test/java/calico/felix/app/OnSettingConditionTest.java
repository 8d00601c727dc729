package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@link ConditionalOnSetting} as felix's three settings use it: the value (or its stand-in) matched in full. */
class OnSettingConditionTest {

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        @ConditionalOnSetting(name = "felix.dataplane-driver", matches = "(?i)\\s*(kernel|iptables)\\s*", ifMissing = "kernel")
        String kernel() {
            return "kernel";
        }

        @Bean
        @ConditionalOnSetting(name = "felix.typha-k8s-service-name", matches = "(?s).*\\S.*")
        Integer typhaDiscovery() {
            return 1;
        }

        @Bean
        @ConditionalOnSetting(name = "felix.debug-port", matches = "(?s)(?!\\s*0*\\s*$).*")
        Long debugPort() {
            return 2L;
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Beans.class);

    @Test
    void theKernelDataplaneByDefaultAndForItsNamesInAnyCase() {
        runner.run(c -> assertThat(c).hasSingleBean(String.class));
        for (String v : new String[] {"kernel", " Kernel ", "IPTABLES"}) {
            runner.withPropertyValues("felix.dataplane-driver=" + v).run(c -> assertThat(c).as(v).hasSingleBean(String.class));
        }
        for (String v : new String[] {"model", "", "kernelx", "nftables"}) {
            runner.withPropertyValues("felix.dataplane-driver=" + v).run(c -> assertThat(c).as(v).doesNotHaveBean(String.class));
        }
    }

    @Test
    void typhaDiscoveryOnlyForANonBlankServiceName() {
        runner.run(c -> assertThat(c).doesNotHaveBean(Integer.class));
        runner.withPropertyValues("felix.typha-k8s-service-name=  ").run(c -> assertThat(c).doesNotHaveBean(Integer.class));
        runner.withPropertyValues("felix.typha-k8s-service-name=calico-typha").run(c -> assertThat(c).hasSingleBean(Integer.class));
    }

    @Test
    void theDebugPortForAnyValueButZero() {
        runner.run(c -> assertThat(c).doesNotHaveBean(Long.class));
        for (String v : new String[] {"0", "", " 00 "}) {
            runner.withPropertyValues("felix.debug-port=" + v).run(c -> assertThat(c).as(v).doesNotHaveBean(Long.class));
        }
        // A bad value turns it on, so that the server refuses it naming FELIX_DEBUGPORT.
        for (String v : new String[] {"6060", "10", "-1", "x"}) {
            runner.withPropertyValues("felix.debug-port=" + v).run(c -> assertThat(c).as(v).hasSingleBean(Long.class));
        }
    }
}
