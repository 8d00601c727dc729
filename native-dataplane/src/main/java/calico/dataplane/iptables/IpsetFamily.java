package calico.dataplane.iptables;

/** An ipset's address family: {@code inet} (IPv4, Calico names {@code cali40…}) or {@code inet6} ({@code cali60…}). */
public enum IpsetFamily {
    INET("inet"),
    INET6("inet6");

    private final String kernelName;

    IpsetFamily(String kernelName) {
        this.kernelName = kernelName;
    }

    public String kernelName() {
        return kernelName;
    }

    static IpsetFamily fromKernelName(String name) {
        return switch (name) {
            case "inet" -> INET;
            case "inet6" -> INET6;
            default -> throw new IllegalArgumentException("ipset family: " + name + " is not inet or inet6");
        };
    }
}
