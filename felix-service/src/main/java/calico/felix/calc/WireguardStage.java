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
 * address. A node with neither is removed; a key that is not 32 bytes of base64 counts as none
 * (logged), so no peer is ever built from it.
 */
public final class WireguardStage {

    private static final Logger log = LoggerFactory.getLogger(WireguardStage.class);

    private final InfraListener out;
    private final Map<String, DataplaneUpdate.WireguardEndpointUpdate> sent = new HashMap<>();

    public WireguardStage(InfraListener out) {
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.NODE, this::onUpdate);
    }

    private void onUpdate(Update update) {
        String name = update.key().name();
        DataplaneUpdate.WireguardEndpointUpdate next = update.value() instanceof Node node ? endpoint(name, node) : null;
        if (next == null) {
            if (sent.remove(name) != null) {
                out.onInfraUpdate(new DataplaneUpdate.WireguardEndpointRemove(name));
            }
            return;
        }
        if (!next.equals(sent.put(name, next))) {
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
        log.warn("Node {} status.wireguardPublicKey \"{}\" is not a 32-byte base64 key; treated as unset", node, text);
        return null;
    }
}
