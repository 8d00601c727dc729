package calico.felix.flows;

import calico.dataplane.bpf.Conntrack;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.netfilter.ConntrackCounters;
import calico.dataplane.netfilter.ConntrackEntry;
import calico.dataplane.netfilter.FlowTuple;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The eBPF driver's conntrack as the aggregator reads the kernel's: each live entry of the pinned
 * {@code cali_ct4} an entry with its counters, so a BPF flow counts packets and bytes and ends as
 * a netfilter one does. An approval is per endpoint direction, so a flow between two local
 * workloads has two entries with the same tuple and the same packets (the aggregator keeps the
 * larger counters); a flow is over when its TCP entry saw a RST or a FIN each way (reported as
 * TIME_WAIT), or when its entry expired or is gone (missing from the dump).
 */
final class BpfConntrack {

    private BpfConntrack() {
    }

    /** {@return the live entries pinned in {@code pinDir}, none when the driver's map is not pinned} */
    static List<ConntrackEntry> dump(Path pinDir, long nowNs) {
        if (pinDir == null || !Files.exists(pinDir.resolve(PolicyMaps.CONNTRACK))
                || !Files.exists(pinDir.resolve(PolicyMaps.CT_TIMEOUTS))) {
            return List.of();
        }
        List<ConntrackEntry> out = new ArrayList<>();
        for (Map.Entry<PolicyMaps.CtEntry, PolicyMaps.CtValue> e : Conntrack.livePinned(pinDir, nowNs).entrySet()) {
            out.add(entry(e.getKey(), e.getValue()));
        }
        return out;
    }

    /** One approval as a conntrack entry: the key's tuple is the original one (ICMP without the echo ID, as NFLOG's). */
    static ConntrackEntry entry(PolicyMaps.CtEntry k, PolicyMaps.CtValue v) {
        boolean ports = k.proto() == 6 || k.proto() == 17 || k.proto() == 132;
        FlowTuple original = new FlowTuple(k.src(), k.dst(), k.proto(), ports ? k.srcPort() : 0,
                ports ? k.dstPort() : 0);
        int tcpState = k.proto() != 6 ? ConntrackEntry.NO_TCP_STATE
                : v.closed() ? ConntrackEntry.TCP_TIME_WAIT : ConntrackEntry.TCP_ESTABLISHED;
        return new ConntrackEntry(original, original.reversed(), new ConntrackCounters(v.packets(), v.bytes()),
                new ConntrackCounters(v.replyPackets(), v.replyBytes()), 0, 0,
                ConntrackEntry.STATUS_CONFIRMED, false, tcpState);
    }
}
