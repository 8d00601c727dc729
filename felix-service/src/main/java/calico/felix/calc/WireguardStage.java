package calico.felix.calc;

import calico.api.model.Node;
import calico.api.model.ResourceKind;
import calico.libcalico.syncer.Update;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Node resources to {@link DataplaneUpdate.WireguardEndpointUpdate}/{@code WireguardEndpointRemove}
 * (Calico's WireGuard endpoint updates), keyed by node name: the node's published public key
 * ({@code status.wireguardPublicKey}; on the kubernetes datastore libcalico reads it from the
 * Node's {@code projectcalico.org/WireguardPublicKey} annotation) and its WireGuard interface
 * address; and likewise {@link DataplaneUpdate.WireguardEndpointV6Update}/{@code WireguardEndpointV6Remove}
 * from {@code status.wireguardPublicKeyV6} ({@code projectcalico.org/WireguardPublicKeyV6}) and
 * {@code spec.wireguard.interfaceIPv6Address}. A node with neither (of a family) is removed (for that
 * family); a key that is not 32 bytes of base64 counts as none (logged), so no peer is ever built from it.
 */
public final class WireguardStage {

    private static final Logger log = LoggerFactory.getLogger(WireguardStage.class);

    private final InfraListener out;
    private final Map<String, DataplaneUpdate.WireguardEndpointUpdate> sent = new HashMap<>();
    private final Map<String, DataplaneUpdate.WireguardEndpointV6Update> sentV6 = new HashMap<>();

    public WireguardStage(InfraListener out) {
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.NODE, this::onUpdate);
    }

    private void onUpdate(Update update) {
        String name = update.key().name();
        Node node = update.value() instanceof Node n ? n : null;
        emit(name, node == null ? null : endpoint(name, node), sent, DataplaneUpdate.WireguardEndpointRemove::new);
        emit(name, node == null ? null : endpointV6(name, node), sentV6, DataplaneUpdate.WireguardEndpointV6Remove::new);
    }

    /** Sends {@code next} (null: the remove) for {@code name} when it differs from what was sent. */
    private <U extends DataplaneUpdate> void emit(String name, U next, Map<String, U> sentOfFamily,
                                                 java.util.function.Function<String, DataplaneUpdate> remove) {
        if (next == null) {
            if (sentOfFamily.remove(name) != null) {
                out.onInfraUpdate(remove.apply(name));
            }
            return;
        }
        if (!next.equals(sentOfFamily.put(name, next))) {
            out.onInfraUpdate(next);
        }
    }

    private static DataplaneUpdate.WireguardEndpointUpdate endpoint(String name, Node node) {
        String key = node.status() == null ? null : validKey(name, node.status().wireguardPublicKey());
        String addr = node.spec() == null || node.spec().wireguard() == null ? null
                : HostMetadataStage.bareAddress(name, "wireguard.interfaceIPv4Address",
                        node.spec().wireguard().interfaceIPv4Address(), 4);
        return key == null && addr == null ? null : new DataplaneUpdate.WireguardEndpointUpdate(name, key, addr);
    }

    private static DataplaneUpdate.WireguardEndpointV6Update endpointV6(String name, Node node) {
        String key = node.status() == null ? null : validKey(name, node.status().wireguardPublicKeyV6());
        String addr = node.spec() == null || node.spec().wireguard() == null ? null
                : HostMetadataStage.bareAddress(name, "wireguard.interfaceIPv6Address",
                        node.spec().wireguard().interfaceIPv6Address(), 6);
        return key == null && addr == null ? null : new DataplaneUpdate.WireguardEndpointV6Update(name, key, addr);
    }

    static String validKey(String node, String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            if (Base64.getDecoder().decode(text.strip()).length == 32) {
                return text.strip();
            }
        } catch (IllegalArgumentException e) {
            // below
        }
        log.warn("Node {} WireGuard public key \"{}\" is not a 32-byte base64 key; treated as unset", node, text);
        return null;
    }
}
