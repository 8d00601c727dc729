package calico.dataplane.iptables;

import java.util.Set;

/** One set as {@code ipset save} printed it; members in the kernel's normal form (e.g. {@code 10.0.0.1,tcp:80}). */
public record IpsetInfo(String name, IpsetType type, IpsetFamily family, Set<String> members) {

    public IpsetInfo {
        members = Set.copyOf(members);
    }
}
