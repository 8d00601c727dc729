package calico.dataplane.netfilter;

import java.net.InetAddress;

/**
 * The L3/L4 identity of a packet or of one conntrack direction. Ports are 0 for protocols
 * without ports (ICMP and ICMPv6 included: their type, code and id are not part of the key) and
 * for IP fragments after the first, which carry no L4 header.
 *
 * @param protocol IANA protocol number (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6, 132 SCTP, ...)
 */
public record FlowTuple(InetAddress src, InetAddress dst, int protocol, int srcPort, int dstPort) {

    /** {@return this tuple seen from the other end}: addresses and ports swapped. */
    public FlowTuple reversed() {
        return new FlowTuple(dst, src, protocol, dstPort, srcPort);
    }

    @Override
    public String toString() {
        return protocol + " " + src.getHostAddress() + ":" + srcPort + " -> " + dst.getHostAddress() + ":" + dstPort;
    }
}
