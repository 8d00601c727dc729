package calico.felix.calc;

import calico.api.net.Cidr;
import java.util.Objects;

/**
 * One member of an IP set: a CIDR, or for named-port sets an address with a protocol and port.
 *
 * @param protocol lower-case protocol name ({@code tcp}, {@code udp}, {@code sctp}) or {@code null} for NET members
 * @param port     the port for named-port members, 0 otherwise
 */
public record IpSetMember(Cidr cidr, String protocol, int port) {

    public IpSetMember {
        Objects.requireNonNull(cidr, "cidr");
    }

    public static IpSetMember net(Cidr cidr) {
        return new IpSetMember(cidr, null, 0);
    }

    @Override
    public String toString() {
        return protocol == null ? cidr.toString() : cidr.address() + "," + protocol + ":" + port;
    }
}
