package calico.felix.app;

import calico.dataplane.iptables.IptablesBackend;
import calico.felix.dataplane.KernelDataplane;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The kernel dataplane as felix's {@link Dataplane} when {@code felix.dataplane-driver=iptables}
 * ({@code FELIX_DATAPLANEDRIVERNAME}); otherwise {@link FelixDataplaneAutoConfiguration} supplies
 * the in-memory model. The iptables backend {@code Auto} is resolved, as in Calico, by counting
 * the rules each backend holds in the namespace to be programmed.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "felix", name = "dataplane-driver", havingValue = "iptables")
public class KernelDataplaneConfiguration {

    @Bean(destroyMethod = "close")
    Dataplane dataplane(FelixProperties properties) {
        String netns = properties.dataplaneNetns();
        return new KernelDataplane(backend(properties.iptablesBackend(), netns), netns);
    }

    static IptablesBackend backend(String configured, String netns) {
        return switch (configured.toLowerCase(Locale.ROOT)) {
            case "nft" -> IptablesBackend.NFT;
            case "legacy" -> IptablesBackend.LEGACY;
            default -> IptablesBackend.detect(netns.isEmpty() ? List.of() : List.of("ip", "netns", "exec", netns));
        };
    }
}
