package calico.dataplane.iptables;

/** The iptables tables Calico programs. */
public enum Table {
    FILTER("filter"),
    MANGLE("mangle"),
    NAT("nat"),
    RAW("raw");

    private final String kernelName;

    Table(String kernelName) {
        this.kernelName = kernelName;
    }

    /** {@return the name as iptables spells it} ({@code filter}, {@code nat}, ...). */
    public String kernelName() {
        return kernelName;
    }
}
