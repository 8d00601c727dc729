package calico.dataplane.iptables;

/** The address family a restore or save acts on: {@code iptables-*} for V4, {@code ip6tables-*} for V6. */
public enum IpVersion {
    V4("iptables"),
    V6("ip6tables");

    private final String toolPrefix;

    IpVersion(String toolPrefix) {
        this.toolPrefix = toolPrefix;
    }

    String toolPrefix() {
        return toolPrefix;
    }
}
