package calico.dataplane.iptables;

/** The ipset types Calico uses: addresses, CIDRs, and address+protocol:port for named ports. */
public enum IpsetType {
    HASH_IP("hash:ip"),
    HASH_NET("hash:net"),
    HASH_IP_PORT("hash:ip,port");

    private final String kernelName;

    IpsetType(String kernelName) {
        this.kernelName = kernelName;
    }

    public String kernelName() {
        return kernelName;
    }

    static IpsetType fromKernelName(String name) {
        for (IpsetType t : values()) {
            if (t.kernelName.equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("ipset type: " + name + " is not one of hash:ip, hash:net, hash:ip,port");
    }
}
