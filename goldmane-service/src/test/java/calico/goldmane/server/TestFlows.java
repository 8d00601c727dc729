package calico.goldmane.server;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;

/** Builders for flows as felix would report them. */
final class TestFlows {

    private TestFlows() {
    }

    static PolicyHit hit(PolicyKind kind, String tier, String ns, String name, Action action, int policyIndex,
                         int rule) {
        return PolicyHit.newBuilder().setKind(kind).setTier(tier).setNamespace(ns).setName(name).setAction(action)
                .setPolicyIndex(policyIndex).setRuleIndex(rule).build();
    }

    static FlowKey.Builder key(String srcNs, String src, String dstNs, String dst, int port, Action action) {
        PolicyHit enforced = hit(PolicyKind.CalicoNetworkPolicy, "default", dstNs, "allow-" + dst, action, 0,
                action == Action.Allow ? 0 : 1);
        return FlowKey.newBuilder().setSourceNamespace(srcNs).setSourceName(src)
                .setSourceType(EndpointType.WorkloadEndpoint).setDestNamespace(dstNs).setDestName(dst)
                .setDestType(EndpointType.WorkloadEndpoint).setDestPort(port).setProto("tcp")
                .setReporter(Reporter.Dst).setAction(action)
                .setPolicies(PolicyTrace.newBuilder().addEnforcedPolicies(enforced));
    }

    static Flow.Builder flow(FlowKey.Builder key, long start, long end, long packets, long bytes) {
        return Flow.newBuilder().setKey(key).setStartTime(start).setEndTime(end).setPacketsIn(packets)
                .setPacketsOut(packets).setBytesIn(bytes).setBytesOut(bytes).setNumConnectionsStarted(1);
    }
}
