package calico.felix.e2e;

import java.time.Duration;

/** One real packet exchange between two workloads: a TCP handshake, a UDP echo or an ICMP echo. */
record Probe(Workload from, Workload to, Protocol protocol, int port) {

    enum Protocol { TCP, UDP, ICMP }

    static Probe tcp(Workload from, Workload to, int port) {
        return new Probe(from, to, Protocol.TCP, port);
    }

    static Probe udp(Workload from, Workload to, int port) {
        return new Probe(from, to, Protocol.UDP, port);
    }

    static Probe icmp(Workload from, Workload to) {
        return new Probe(from, to, Protocol.ICMP, 0);
    }

    /** {@return whether the exchange completes within {@code timeout}}; any failure is no. */
    boolean passes(Duration timeout) {
        return switch (protocol) {
            case TCP -> from.netns().tcpConnects(to.ip(), port, timeout);
            case UDP -> from.netns().udpEchoes(to.ip(), port, timeout);
            case ICMP -> from.netns().pings(to.ip(), timeout);
        };
    }

    @Override
    public String toString() {
        return from.pod() + "->" + to.pod() + " " + protocol + (protocol == Protocol.ICMP ? "" : " " + port);
    }
}
