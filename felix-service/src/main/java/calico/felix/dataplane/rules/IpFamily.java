package calico.felix.dataplane.rules;

/** The address family a rendered rule or set applies to. */
public enum IpFamily {
    V4, V6;

    /** {@return the family of a CIDR or address literal} (IPv6 literals contain a colon). */
    public static IpFamily of(String cidrOrAddress) {
        return cidrOrAddress.indexOf(':') >= 0 ? V6 : V4;
    }
}
