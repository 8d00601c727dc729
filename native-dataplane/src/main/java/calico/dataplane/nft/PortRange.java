package calico.dataplane.nft;

/** A port or an inclusive port range, 0..65535. */
public record PortRange(int first, int last) {

    public PortRange {
        if (first < 0 || last > 65535 || first > last) {
            throw new IllegalArgumentException("port range: need 0 <= first <= last <= 65535, was " + first + "-" + last);
        }
    }

    public static PortRange of(int port) {
        return new PortRange(port, port);
    }

    public boolean single() {
        return first == last;
    }
}
