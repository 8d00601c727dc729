package calico.controllers.node;

import java.util.List;

/**
 * {@code spec.controllers.node.hostEndpoint}, parsed.
 *
 * @param autoCreate    whether the controller keeps host endpoints at all; off deletes every one it made
 * @param createDefault whether each node gets its {@code <node>-auto-hep} (interface {@code *})
 * @param templates     the templates whose host endpoints are kept (only while {@code autoCreate})
 */
public record HostEndpointSettings(boolean autoCreate, boolean createDefault, List<HostEndpointTemplate> templates) {

    public HostEndpointSettings {
        templates = List.copyOf(templates);
    }

    /** No host endpoints (Calico's default: {@code autoCreate: Disabled}). */
    public static HostEndpointSettings off() {
        return new HostEndpointSettings(false, true, List.of());
    }

    /** One {@code <node>-auto-hep} per node, no templates. */
    public static HostEndpointSettings defaultOnly() {
        return new HostEndpointSettings(true, true, List.of());
    }
}
