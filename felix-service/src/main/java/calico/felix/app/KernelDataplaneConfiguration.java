package calico.felix.app;

import calico.felix.dataplane.Dataplane;
import calico.felix.flows.FlowLogs;

import calico.felix.dataplane.DataplaneObserver;
import calico.felix.dataplane.EndpointStatusFiles;
import calico.felix.dataplane.KernelDataplane;
import calico.felix.dataplane.wireguard.WireguardHost;
import calico.felix.dataplane.KernelPolicyDrivers;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The kernel dataplane as felix's {@link Dataplane} when {@code felix.dataplane-driver} is
 * {@code kernel} (the default, as in Calico) or its synonym {@code iptables}
 * ({@code FELIX_DATAPLANEDRIVERNAME}); only for {@code model} does
 * {@link FelixDataplaneAutoConfiguration} supply the in-memory model. The policy backend is
 * not fixed here: the dataplane resolves it from each effective FelixConfiguration
 * ({@code nftablesMode}, {@code iptablesBackend}, where {@code FELIX_*} variables win) and
 * restarts its driver when it changes.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnSetting(name = "felix.dataplane-driver", matches = "(?i)\\s*(kernel|iptables)\\s*", ifMissing = "kernel")
public class KernelDataplaneConfiguration {

    @Bean
    KernelDataplaneMetrics kernelDataplaneMetrics(ObjectProvider<MeterRegistry> registry) {
        return new KernelDataplaneMetrics(registry.getIfAvailable(SimpleMeterRegistry::new));
    }

    /** The policy drivers' tool runs (iptables, ipset, nftables, child processes) under Calico's names. */
    @Bean
    ToolCallMetrics toolCallMetrics(ObjectProvider<MeterRegistry> registry) {
        return new ToolCallMetrics(registry.getIfAvailable(SimpleMeterRegistry::new));
    }

    /**
     * Flow logs beside the kernel dataplane, reading its model: idle until {@code flowLogsGoldmaneServer}
     * is set; over mutual TLS with felix's typha client files when they are set, as Calico's felix.
     */
    @Bean(destroyMethod = "close")
    FlowLogs flowLogs(FelixProperties properties, ObjectProvider<FelixTyphaProperties> typha, Dataplane dataplane,
                      ObjectProvider<MeterRegistry> registry,
                      ObjectProvider<calico.libcalico.health.HealthAggregator> health) {
        return new FlowLogs(properties.hostname(), properties.dataplaneNetns(),
                typha.getIfAvailable(FelixTyphaProperties::none).clientCertificate(), dataplane.model(),
                java.time.Clock.systemUTC(),
                registry.getIfAvailable(SimpleMeterRegistry::new), health.getIfAvailable(),
                properties.bpfFs().resolve("calico"));
    }

    /** Writes this node's WireGuard public key into its Node, with a datastore client of its own. */
    @Bean(destroyMethod = "close")
    WireguardKeyPublisher wireguardKeyPublisher(FelixProperties properties,
                                                calico.libcalico.datastore.config.DatastoreProperties datastore) {
        return new WireguardKeyPublisher(properties.hostname(), () -> datastore.toConfig().open());
    }

    @Bean(destroyMethod = "close")
    Dataplane dataplane(FelixProperties properties, KernelDataplaneMetrics metrics, ToolCallMetrics tools,
                        WireguardKeyPublisher keys) {
        String netns = properties.dataplaneNetns();
        // The status files read the dataplane's model, which exists once the dataplane does.
        java.util.concurrent.atomic.AtomicReference<KernelDataplane> built = new java.util.concurrent.atomic.AtomicReference<>();
        EndpointStatusFiles statusFiles = new EndpointStatusFiles(() -> built.get() == null ? null : built.get().model());
        KernelDataplane dp = new KernelDataplane(netns,
                new KernelPolicyDrivers(KernelDataplane.commandPrefix(netns), properties.bpfFs(), tools,
                        properties.nftablesNetlinkRules()),
                DataplaneObserver.of(metrics, statusFiles),
                java.util.Optional.of(new calico.felix.dataplane.mtu.MtuFile(properties.mtuFile())),
                new WireguardHost(properties.hostname(), WireguardHost.socketDirFor(netns), keys, keys::acceptV6));
        built.set(dp);
        return dp;
    }
}
