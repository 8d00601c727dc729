package calico.felix.calc;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.libcalico.syncer.Update;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Node resources to {@link DataplaneUpdate.HostMetadataUpdate}/{@code HostMetadataRemove},
 * keyed by node name.
 *
 * <p>Addresses are sent bare ({@code 10.0.0.5}, not {@code 10.0.0.5/24}), as Calico's
 * {@code HostMetadataUpdate} carries them: consumers want a next hop or an IP set member, and
 * the subnet (used only for CrossSubnet) stays in the Node resource. A missing or unparsable
 * address is sent as {@code null} (an unparsable one is logged), never guessed.
 */
public final class HostMetadataStage {

    private static final Logger log = LoggerFactory.getLogger(HostMetadataStage.class);

    private final InfraListener out;
    /** What was last sent per node, so unchanged nodes stop here and removes follow only adds. */
    private final Map<String, DataplaneUpdate.HostMetadataUpdate> sent = new HashMap<>();

    public HostMetadataStage(InfraListener out) {
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.NODE, this::onUpdate);
    }

    private void onUpdate(Update update) {
        String name = update.key().name();
        if (!(update.value() instanceof Node node)) {
            if (sent.remove(name) != null) {
                out.onInfraUpdate(new DataplaneUpdate.HostMetadataRemove(name));
            }
            return;
        }
        NodeSpec.BGP bgp = node.spec() == null ? null : node.spec().bgp();
        var next = new DataplaneUpdate.HostMetadataUpdate(name,
                bgp == null ? null : bareAddress(name, "ipv4Address", bgp.ipv4Address(), 4),
                bgp == null ? null : bareAddress(name, "ipv6Address", bgp.ipv6Address(), 6),
                node.metadata().labels());
        if (!next.equals(sent.put(name, next))) {
            out.onInfraUpdate(next);
        }
    }

    /** {@return the address part of a Node's BGP address}, or {@code null} when unset or invalid. */
    static String bareAddress(String node, String field, String text, int version) {
        if (text == null || text.isBlank()) {
            return null;
        }
        var cidr = Cidr.tryParseCidrOrIp(text.trim());
        if (cidr.isEmpty() || cidr.get().version() != version) {
            log.warn("Node {} spec.bgp.{} \"{}\" is not an IPv{} address or CIDR; treated as unset",
                    node, field, text, version);
            return null;
        }
        return cidr.get().address().toString();
    }
}
