package calico.felix.calc;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
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
        Identity v4 = node == null ? new Identity(null, null) : identity(name, node, false);
        Identity v6 = node == null ? new Identity(null, null) : identity(name, node, true);
        emit(name, v4.none() ? null : new DataplaneUpdate.WireguardEndpointUpdate(name, v4.key(), v4.address()), sent,
                DataplaneUpdate.WireguardEndpointRemove::new);
        emit(name, v6.none() ? null : new DataplaneUpdate.WireguardEndpointV6Update(name, v6.key(), v6.address()), sentV6,
                DataplaneUpdate.WireguardEndpointV6Remove::new);
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

    /** A Node's WireGuard key and interface address of one family (either may be null). */
    private record Identity(String key, String address) {
        boolean none() {
            return key == null && address == null;
        }
    }

    private static Identity identity(String name, Node node, boolean v6) {
        String key = node.status() == null ? null
                : validKey(name, v6 ? node.status().wireguardPublicKeyV6() : node.status().wireguardPublicKey());
        NodeSpec.Wireguard wg = node.spec() == null ? null : node.spec().wireguard();
        String addr = wg == null ? null : HostMetadataStage.bareAddress(name,
                v6 ? "wireguard.interfaceIPv6Address" : "wireguard.interfaceIPv4Address",
                v6 ? wg.interfaceIPv6Address() : wg.interfaceIPv4Address(), v6 ? 6 : 4);
        return new Identity(key, addr);
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
