package calico.dataplane.nft;

import java.util.Set;

/** A table: address family ({@code ip}, {@code ip6}, {@code inet}, ...) and name. */
public record TableRef(String family, String name) {

    private static final Set<String> FAMILIES = Set.of("ip", "ip6", "inet", "arp", "bridge", "netdev");

    public TableRef {
        if (family == null || !FAMILIES.contains(family)) {
            throw new IllegalArgumentException("family: must be one of " + FAMILIES + ", was " + family);
        }
        NftBatch.requireName("table name", name);
    }

    public static TableRef inet(String name) {
        return new TableRef("inet", name);
    }
}
