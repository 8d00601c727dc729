package calico.dataplane.nft;

import java.util.List;

/**
 * The shape of a named set or map key: one or more element types (more than one is a
 * concatenation, e.g. {@code ipv4_addr . inet_proto . inet_service} for named ports) and whether
 * elements may be intervals (needed for CIDRs and port ranges).
 */
public record SetSpec(List<String> type, boolean interval) {

    public SetSpec {
        if (type == null || type.isEmpty()) {
            throw new IllegalArgumentException("set type: at least one element type is required");
        }
        type = List.copyOf(type);
        for (String t : type) {
            NftBatch.requireName("set type", t);
        }
    }

    /** {@return CIDRs of one family: {@code ipv4_addr} or {@code ipv6_addr} with {@code flags interval}} */
    public static SetSpec cidrs(int ipVersion) {
        return new SetSpec(List.of(addrType(ipVersion)), true);
    }

    /** {@return named-port members: address . protocol . port} */
    public static SetSpec namedPorts(int ipVersion) {
        return new SetSpec(List.of(addrType(ipVersion), "inet_proto", "inet_service"), false);
    }

    public static SetSpec of(String... type) {
        return new SetSpec(List.of(type), false);
    }

    static String addrType(int ipVersion) {
        return switch (ipVersion) {
            case 4 -> "ipv4_addr";
            case 6 -> "ipv6_addr";
            default -> throw new IllegalArgumentException("ipVersion: must be 4 or 6, was " + ipVersion);
        };
    }
}
