package calico.whisker.testing;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;

/** Flows as felix reports them. */
public final class Flows {

    private Flows() {
    }

    public static PolicyHit hit(PolicyKind kind, String tier, String ns, String name, Action action, int rule) {
        return PolicyHit.newBuilder().setKind(kind).setTier(tier).setNamespace(ns).setName(name).setAction(action)
                .setPolicyIndex(0).setRuleIndex(rule).build();
    }

    /** A workload-to-workload TCP key whose enforced trace is one namespaced policy "allow-&lt;dst&gt;". */
    public static FlowKey.Builder key(String srcNs, String src, String dstNs, String dst, int port, Action action) {
        return FlowKey.newBuilder().setSourceNamespace(srcNs).setSourceName(src)
                .setSourceType(EndpointType.WorkloadEndpoint).setDestNamespace(dstNs).setDestName(dst)
                .setDestType(EndpointType.WorkloadEndpoint).setDestPort(port).setProto("tcp")
                .setReporter(Reporter.Dst).setAction(action)
                .setPolicies(PolicyTrace.newBuilder().addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy,
                        "default", dstNs, "allow-" + dst, action, action == Action.Allow ? 0 : 1)));
    }

    public static Flow flow(FlowKey.Builder key, long start, long packets, long bytes) {
        return Flow.newBuilder().setKey(key).setStartTime(start).setEndTime(start + 5).setPacketsIn(packets)
                .setPacketsOut(packets).setBytesIn(bytes).setBytesOut(bytes).setNumConnectionsStarted(1)
                .addSourceLabels("app=" + key.getSourceName()).addDestLabels("app=" + key.getDestName())
                .addSourceIps("10.0.0.1").addDestIps("10.0.1.1").build();
    }
}
