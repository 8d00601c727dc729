package calico.felix.flows;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.bpf.PolicyMaps.CtState;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.netfilter.ConntrackEntry;
import calico.dataplane.netfilter.FlowTuple;
import calico.felix.dataplane.rules.Names;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.Reporter;
import java.net.Inet4Address;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The eBPF driver's conntrack approvals read as the kernel's entries: counters each way, a TCP
 * flow over on a RST or a FIN each way, ICMP without its echo ID; through the aggregator, a BPF
 * flow reports its packets and bytes and completes as a netfilter one. The real map:
 * native-dataplane's {@code PolicyProgramTest.conntrackFollowsTcpStates…}; end to end:
 * {@code FlowLogsE2ETest.bpf}.
 */
class BpfConntrackTest {

    static final Inet4Address CLIENT = (Inet4Address) FlowAggregatorTest.ip("10.70.1.1");
    static final Inet4Address API = (Inet4Address) FlowAggregatorTest.ip("10.70.0.2");

    static PolicyMaps.CtEntry key(int proto, int sport, int dport, Dir dir, int ifindex) {
        return new PolicyMaps.CtEntry(CLIENT, API, sport, dport, proto, dir, ifindex);
    }

    @Test
    void anApprovalIsAConntrackEntryWithItsCountersAndItsEnd() {
        ConntrackEntry open = BpfConntrack.entry(key(6, 40001, 8080, Dir.TO_ENDPOINT, 7),
                new PolicyMaps.CtValue(1, CtState.TCP_ESTABLISHED, PolicyMaps.CT_FIN_FWD, 5, 400, 4, 2000));
        assertThat(open.original()).isEqualTo(new FlowTuple(CLIENT, API, 6, 40001, 8080));
        assertThat(open.reply()).isEqualTo(open.original().reversed());
        assertThat(open.originalCounters().packets()).isEqualTo(5);
        assertThat(open.originalCounters().bytes()).isEqualTo(400);
        assertThat(open.replyCounters().packets()).isEqualTo(4);
        assertThat(open.replyCounters().bytes()).isEqualTo(2000);
        assertThat(open.dnat()).isFalse();
        assertThat(open.tcpClosed()).as("a FIN one way: half closed").isFalse();

        assertThat(BpfConntrack.entry(key(6, 40001, 8080, Dir.TO_ENDPOINT, 7), new PolicyMaps.CtValue(1,
                CtState.TCP_FIN, PolicyMaps.CT_FIN_FWD | PolicyMaps.CT_FIN_REV, 5, 400, 4, 2000)).tcpClosed())
                .as("a FIN each way").isTrue();
        assertThat(BpfConntrack.entry(key(6, 40001, 8080, Dir.TO_ENDPOINT, 7),
                new PolicyMaps.CtValue(1, CtState.TCP_RST, 0, 1, 60, 1, 40)).tcpClosed()).as("a RST").isTrue();
        ConntrackEntry ping = BpfConntrack.entry(key(1, 77, 77, Dir.FROM_ENDPOINT, 7),
                new PolicyMaps.CtValue(1, CtState.ICMP, 0, 1, 84, 1, 84));
        assertThat(ping.original()).as("ICMP: ports 0, as NFLOG's tuple").isEqualTo(new FlowTuple(CLIENT, API, 1, 0, 0));
        assertThat(ping.tcpClosed()).isFalse();
    }

    @Test
    void aBpfFlowCountsAndCompletesThroughTheAggregator() {
        FlowAggregatorTest t = new FlowAggregatorTest();
        FlowTuple tuple = new FlowTuple(CLIENT, API, 6, 40001, 8080);
        String ingressAllow = FlowAggregatorTest.renderedPrefix(t.rendered, Names.policyInbound(FlowAggregatorTest.ALLOW_80), 0);
        t.agg.onNflog(FlowAggregatorTest.nflog(1, ingressAllow, tuple));
        // Both legs approved the flow (the client's egress, the api's ingress): the same packets.
        PolicyMaps.CtValue counted = new PolicyMaps.CtValue(1, CtState.TCP_ESTABLISHED, 0, 5, 400, 4, 2000);
        t.agg.onConntrackDump(List.of(BpfConntrack.entry(key(6, 40001, 8080, Dir.FROM_ENDPOINT, 6), counted),
                BpfConntrack.entry(key(6, 40001, 8080, Dir.TO_ENDPOINT, 7), counted)));
        Flow first = t.only(t.agg.flush(1000, 1001), Reporter.Dst, 8080);
        assertThat(first.getPacketsIn()).isEqualTo(5);
        assertThat(first.getBytesIn()).isEqualTo(400);
        assertThat(first.getPacketsOut()).isEqualTo(4);
        assertThat(first.getBytesOut()).isEqualTo(2000);
        assertThat(first.getNumConnectionsLive()).isEqualTo(1);

        PolicyMaps.CtValue over = new PolicyMaps.CtValue(2, CtState.TCP_FIN,
                PolicyMaps.CT_FIN_FWD | PolicyMaps.CT_FIN_REV, 7, 480, 6, 2080);
        t.agg.onConntrackDump(List.of(BpfConntrack.entry(key(6, 40001, 8080, Dir.TO_ENDPOINT, 7), over)));
        Flow last = t.only(t.agg.flush(1001, 1002), Reporter.Dst, 8080);
        assertThat(last.getPacketsIn()).as("the delta").isEqualTo(2);
        assertThat(last.getBytesOut()).isEqualTo(80);
        assertThat(last.getNumConnectionsCompleted()).isEqualTo(1);
        assertThat(last.getNumConnectionsLive()).isZero();
        assertThat(t.agg.connections()).as("forgotten once reported over").isZero();
    }
}
