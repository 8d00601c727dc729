package calico.felix.calc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A real {@link InfraListener} for tests: records every update and applies it to a map by key,
 * failing at once on a protocol breach (an update equal to the current value, or a remove of a
 * key never added), so every test checks no-op suppression and remove-after-add for free.
 */
final class InfraRecorder implements InfraListener {

    final List<DataplaneUpdate> events = new ArrayList<>();
    /** Current value by key ("config", "host:h", "pool:p", "route:dst"). */
    final Map<String, DataplaneUpdate> state = new TreeMap<>();

    @Override
    public void onInfraUpdate(DataplaneUpdate update) {
        events.add(update);
        String key = key(update);
        boolean remove = update instanceof DataplaneUpdate.HostMetadataRemove
                || update instanceof DataplaneUpdate.IpPoolRemove || update instanceof DataplaneUpdate.RouteRemove
                || update instanceof DataplaneUpdate.WireguardEndpointRemove
                || update instanceof DataplaneUpdate.VtepRemove
                || update instanceof DataplaneUpdate.IpipTunnelAddressRemove;
        if (remove) {
            if (state.remove(key) == null) {
                throw new AssertionError("remove of " + key + " which was never added: " + update);
            }
        } else if (update.equals(state.put(key, update))) {
            throw new AssertionError("no-op update reached the listener: " + update);
        }
    }

    /** {@return the events so far} and forgets them (state is kept). */
    List<DataplaneUpdate> drain() {
        List<DataplaneUpdate> copy = List.copyOf(events);
        events.clear();
        return copy;
    }

    /** {@return current routes by destination}. */
    Map<String, DataplaneUpdate.RouteUpdate> routes() {
        Map<String, DataplaneUpdate.RouteUpdate> out = new TreeMap<>();
        state.values().forEach(u -> {
            if (u instanceof DataplaneUpdate.RouteUpdate r) {
                out.put(r.dst(), r);
            }
        });
        return out;
    }

    static String key(DataplaneUpdate u) {
        if (u instanceof DataplaneUpdate.ConfigUpdate) {
            return "config";
        }
        if (u instanceof DataplaneUpdate.HostMetadataUpdate h) {
            return "host:" + h.hostname();
        }
        if (u instanceof DataplaneUpdate.HostMetadataRemove h) {
            return "host:" + h.hostname();
        }
        if (u instanceof DataplaneUpdate.WireguardEndpointUpdate w) {
            return "wireguard:" + w.hostname();
        }
        if (u instanceof DataplaneUpdate.WireguardEndpointRemove w) {
            return "wireguard:" + w.hostname();
        }
        if (u instanceof DataplaneUpdate.WireguardEndpointV6Update w) {
            return "wireguard-v6:" + w.hostname();
        }
        if (u instanceof DataplaneUpdate.WireguardEndpointV6Remove w) {
            return "wireguard-v6:" + w.hostname();
        }
        if (u instanceof DataplaneUpdate.IpPoolUpdate p) {
            return "pool:" + p.name();
        }
        if (u instanceof DataplaneUpdate.IpPoolRemove p) {
            return "pool:" + p.name();
        }
        if (u instanceof DataplaneUpdate.RouteUpdate r) {
            return "route:" + r.dst();
        }
        if (u instanceof DataplaneUpdate.RouteRemove r) {
            return "route:" + r.dst();
        }
        if (u instanceof DataplaneUpdate.VtepUpdate v) {
            return "vtep:" + v.node();
        }
        if (u instanceof DataplaneUpdate.VtepRemove v) {
            return "vtep:" + v.node();
        }
        if (u instanceof DataplaneUpdate.IpipTunnelAddressUpdate t) {
            return "ipip-tunnel:" + t.node();
        }
        if (u instanceof DataplaneUpdate.IpipTunnelAddressRemove t) {
            return "ipip-tunnel:" + t.node();
        }
        if (u instanceof DataplaneUpdate.ServiceCidrsUpdate) {
            return "service-cidrs";
        }
        throw new AssertionError("not an infrastructure update: " + u);
    }
}
