package calico.felix.calc;

import calico.api.model.BGPConfiguration;
import calico.api.model.BGPConfigurationSpec;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.libcalico.syncer.Update;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * BGPConfiguration {@code default}'s advertised service ranges ({@code serviceClusterIPs},
 * {@code serviceExternalIPs}, {@code serviceLoadBalancerIPs}) as one {@link DataplaneUpdate.ServiceCidrsUpdate},
 * sent only when the set changes (the first time only when it is not empty): what {@code serviceLoopPrevention}
 * guards. Other BGPConfigurations (per node) are not read, as Calico's felix reads the global one.
 */
public final class ServiceCidrStage {

    private static final Logger log = LoggerFactory.getLogger(ServiceCidrStage.class);

    private final InfraListener out;
    private List<String> sent = List.of();

    public ServiceCidrStage(InfraListener out) {
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.BGP_CONFIGURATION, this::onUpdate);
    }

    private void onUpdate(Update update) {
        if (!"default".equals(update.key().name())) {
            return;
        }
        List<String> next = update.value() instanceof BGPConfiguration c ? cidrs(c.spec()) : List.of();
        if (!next.equals(sent)) {
            sent = next;
            out.onInfraUpdate(new DataplaneUpdate.ServiceCidrsUpdate(next));
        }
    }

    private static List<String> cidrs(BGPConfigurationSpec spec) {
        if (spec == null) {
            return List.of();
        }
        TreeSet<String> out = new TreeSet<>();
        Stream.of(spec.serviceClusterIPs(), spec.serviceExternalIPs(), spec.serviceLoadBalancerIPs())
                .flatMap(List::stream).forEach(b -> {
                    var c = Cidr.tryParseCidrOrIp(b.cidr());
                    if (c.isPresent()) {
                        out.add(c.get().network().toString());
                    } else {
                        log.warn("BGPConfiguration default: \"{}\" is not a CIDR; not guarded by serviceLoopPrevention",
                                b.cidr());
                    }
                });
        return List.copyOf(out);
    }
}
