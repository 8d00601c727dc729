package calico.whisker.browser;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;
import java.util.ArrayList;
import java.util.List;

/**
 * A small, realistic cluster's traffic: a storefront in {@code shop} calling services in
 * {@code payments}, DNS to kube-system, traffic from the internet. Allowed flows hit namespaced
 * allow policies, denied ones a security-tier deny or the end of tier, passes hand over to the
 * next tier; a staged lock-down policy gives pending verdicts. Deterministic (index based).
 */
final class DemoFlows {

    static final String SHOP = "shop";
    static final String PAYMENTS = "payments";
    private static final String[] SHOP_APPS = {"frontend", "cart", "catalog", "checkout", "search", "recommend",
        "reviews", "images", "auth", "sessions", "gateway", "ads"};
    private static final String[] PAY_APPS = {"ledger", "charge", "refund", "fraud", "invoice", "tax", "wallet",
        "postgres", "redis", "audit"};
    private static final int[] PORTS = {8080, 443, 5432};

    private DemoFlows() {
    }

    static PolicyHit hit(PolicyKind kind, String tier, String ns, String name, Action action, int index, int rule) {
        return PolicyHit.newBuilder().setKind(kind).setTier(tier).setNamespace(ns).setName(name).setAction(action)
                .setPolicyIndex(index).setRuleIndex(rule).build();
    }

    /** The verdict of shop app {@code s} → payments app {@code d} on port {@code p}; a fixed mix. */
    static Action verdict(int s, int d, int p) {
        int h = (s * 7 + d * 3 + p * 5) % 10;
        return h < 6 ? Action.Allow : h < 9 ? Action.Deny : Action.Pass;
    }

    static PolicyTrace trace(String dstNs, String dst, Action action, int rule) {
        PolicyTrace.Builder t = PolicyTrace.newBuilder();
        switch (action) {
            case Allow -> t.addEnforcedPolicies(hit(PolicyKind.GlobalNetworkPolicy, "security", "", "baseline", Action.Pass, 0, 2))
                    .addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy, "default", dstNs, "allow-" + dst, Action.Allow, 1, rule));
            case Deny -> t.addEnforcedPolicies(hit(PolicyKind.GlobalNetworkPolicy, "security", "", "deny-cross-ns", Action.Deny, 0, rule));
            default -> t.addEnforcedPolicies(hit(PolicyKind.GlobalNetworkPolicy, "security", "", "baseline", Action.Pass, 0, 2))
                    .addEnforcedPolicies(PolicyHit.newBuilder(hit(PolicyKind.EndOfTier, "default", dstNs, "", Action.Pass, 1, -1))
                            .setTrigger(hit(PolicyKind.CalicoNetworkPolicy, "default", dstNs, "allow-" + dst, Action.Pass, 1, -1)));
        }
        // The staged lock-down would deny everything but the frontend path.
        boolean lockdown = rule % 2 == 1;
        t.addPendingPolicies(hit(PolicyKind.StagedNetworkPolicy, "default", dstNs, "staged-lockdown",
                lockdown ? Action.Deny : Action.Allow, 0, lockdown ? -1 : 0));
        return t.build();
    }

    static Flow flow(String srcNs, String src, EndpointType srcType, String dstNs, String dst, int port, String proto,
                     Action action, int rule, long start, long packets, int ip) {
        FlowKey key = FlowKey.newBuilder().setSourceNamespace(srcNs).setSourceName(src).setSourceType(srcType)
                .setDestNamespace(dstNs).setDestName(dst).setDestType(EndpointType.WorkloadEndpoint).setDestPort(port)
                .setDestServiceName(dst).setDestServiceNamespace(dstNs).setDestServicePortName(port == 53 ? "dns" : "http")
                .setDestServicePort(port).setProto(proto).setReporter(ip % 3 == 0 ? Reporter.Src : Reporter.Dst)
                .setAction(action).setPolicies(trace(dstNs, dst, action, rule)).build();
        return Flow.newBuilder().setKey(key).setStartTime(start).setEndTime(start + 5).setPacketsIn(packets)
                .setPacketsOut(packets / 2 + 1).setBytesIn(packets * 740).setBytesOut(packets * 310)
                .setNumConnectionsStarted(1 + packets % 4).setNumConnectionsCompleted(packets % 3)
                .setNumConnectionsLive(1)
                .addSourceLabels("app=" + src.replaceAll("-.*", "")).addSourceLabels("tier=" + (srcNs.isEmpty() ? "external" : srcNs))
                .addDestLabels("app=" + dst.replaceAll("-.*", "")).addDestLabels("team=" + dstNs)
                .addSourceIps("10.10." + (ip % 200) + "." + (1 + ip % 250)).addDestIps("10.20." + (ip % 50) + ".7").build();
    }

    /** Several hundred distinct flow keys over the last {@code spanSeconds}, ending at {@code now}. */
    static List<Flow> cluster(long now, int spanSeconds) {
        List<Flow> out = new ArrayList<>();
        int i = 0;
        for (int s = 0; s < SHOP_APPS.length; s++) {
            for (int d = 0; d < PAY_APPS.length; d++) {
                for (int p = 0; p < PORTS.length; p++) {
                    Action a = verdict(s, d, p);
                    long start = now - 10 - (long) (i * 37L % spanSeconds);
                    out.add(flow(SHOP, SHOP_APPS[s] + "-*", EndpointType.WorkloadEndpoint, PAYMENTS, PAY_APPS[d] + "-*",
                            PORTS[p], "tcp", a, p, start, 5 + i % 90, i));
                    i++;
                }
            }
            // everyone resolves names
            out.add(flow(SHOP, SHOP_APPS[s] + "-*", EndpointType.WorkloadEndpoint, "kube-system", "coredns-*", 53, "udp",
                    Action.Allow, 0, now - 10 - s * 11L, 40 + s, i++));
        }
        // internal calls inside payments, and internet traffic to the shop gateway
        for (int d = 0; d < PAY_APPS.length; d++) {
            out.add(flow(PAYMENTS, PAY_APPS[d] + "-*", EndpointType.WorkloadEndpoint, PAYMENTS, "postgres-*", 5432, "tcp",
                    Action.Allow, 0, now - 20 - d * 13L, 300 + d, i++));
            out.add(flow("", "pub", EndpointType.Network, SHOP, SHOP_APPS[d] + "-*", 443, "tcp",
                    d < 2 ? Action.Allow : Action.Deny, d, now - 30 - d * 17L, 12 + d, i++));
        }
        return out;
    }

    /**
     * A batch of new flows for live mode: keys not seen before (a fresh client name per batch),
     * starting now, so they land in the open bucket; goldmane streams a bucket when it closes,
     * and a flow added to an already closed bucket would be listed but never streamed.
     */
    static List<Flow> liveBatch(long now, int batch, int size) {
        List<Flow> out = new ArrayList<>(size);
        for (int k = 0; k < size; k++) {
            int d = k % PAY_APPS.length;
            Action a = verdict(batch, d, k % 3);
            out.add(flow(SHOP, "live-" + batch + "-" + k, EndpointType.WorkloadEndpoint, PAYMENTS, PAY_APPS[d] + "-*",
                    PORTS[k % 3], "tcp", a, k % 3, now, 3 + k, batch * 31 + k));
        }
        return out;
    }

    /** {@code n} distinct keys (for the benchmark): n / 100 sources × 100 destinations in 8 namespaces. */
    static List<Flow> many(long now, int n, int spanSeconds) {
        List<Flow> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int s = i / 100, d = i % 100;
            Action a = verdict(s, d, i % 3);
            out.add(flow("ns-" + (s % 8), "src-" + s + "-*", EndpointType.WorkloadEndpoint, "ns-" + (d % 8), "dst-" + d + "-*",
                    PORTS[i % 3], "tcp", a, i % 3, now - 5 - (i % spanSeconds), 1 + i % 500, i));
        }
        return out;
    }
}
