package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Spec of a {@link Node}: its BGP identity, the tunnel addresses Calico assigned to it, and
 * the addresses and interfaces it reported. Tunnel fields are system-managed.
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record NodeSpec(
        BGP bgp,
        @JsonProperty("ipv4VXLANTunnelAddr") String ipv4VXLANTunnelAddr,
        @JsonProperty("vxlanTunnelMACAddr") String vxlanTunnelMACAddr,
        @JsonProperty("ipv6VXLANTunnelAddr") String ipv6VXLANTunnelAddr,
        @JsonProperty("vxlanTunnelMACAddrV6") String vxlanTunnelMACAddrV6,
        List<OrchRef> orchRefs,
        Wireguard wireguard,
        List<Address> addresses,
        List<Interface> interfaces) {

    public NodeSpec {
        orchRefs = orchRefs == null ? List.of() : List.copyOf(orchRefs);
        addresses = addresses == null ? List.of() : List.copyOf(addresses);
        interfaces = interfaces == null ? List.of() : List.copyOf(interfaces);
    }

    /** {@return a spec with only BGP settings}. */
    public static NodeSpec ofBgp(BGP bgp) {
        return new NodeSpec(bgp, null, null, null, null, null, null, null, null);
    }

    /**
     * The node's BGP settings. Addresses are CIDRs ({@code 10.0.0.5/24}): the address is the
     * BGP next hop, the prefix the node's subnet (used for CrossSubnet decisions).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record BGP(
            ASNumber asNumber,
            @JsonProperty("ipv4Address") String ipv4Address,
            @JsonProperty("ipv6Address") String ipv6Address,
            @JsonProperty("ipv4IPIPTunnelAddr") String ipv4IPIPTunnelAddr,
            @JsonProperty("routeReflectorClusterID") String routeReflectorClusterID) {
    }

    /** Ties the node to its name in an orchestrator (e.g. {@code k8s}). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record OrchRef(String nodeName, String orchestrator) {
    }

    /** Addresses of the node's WireGuard interfaces. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Wireguard(@JsonProperty("interfaceIPv4Address") String interfaceIPv4Address,
                            @JsonProperty("interfaceIPv6Address") String interfaceIPv6Address) {
    }

    /** An address the node can be reached at; {@code type} is CalicoNodeIP, InternalIP or ExternalIP. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Address(String address, String type) {
    }

    /** A host interface and its addresses. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Interface(String name, List<String> addresses) {
        public Interface {
            addresses = addresses == null ? List.of() : List.copyOf(addresses);
        }
    }
}
