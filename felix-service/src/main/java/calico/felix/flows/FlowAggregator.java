package calico.felix.flows;

import calico.api.k8s.AdminNetworkPolicyConverter;
import calico.api.k8s.BaselineAdminNetworkPolicyConverter;
import calico.api.model.ResourceKind;
import calico.dataplane.netfilter.ConntrackEntry;
import calico.dataplane.netfilter.FlowTuple;
import calico.dataplane.netfilter.NflogPacket;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.RuleHit;
import calico.felix.flows.FlowContext.TraceHit;
import calico.felix.dataplane.rules.NflogPrefix.Verdict;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.Reporter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Joins NFLOG rule hits with conntrack counters into per-interval flow reports keyed as goldmane
 * keys flows.
 *
 * <p>A connection is (original tuple, direction of the hit): egress hits (group 2) make a
 * report with reporter Src, ingress hits (group 1) one with reporter Dst, so traffic between two
 * local workloads is reported twice, as Calico does. The kernel logs only a connection's first
 * packet (later ones are ESTABLISHED before any policy), so a repeated first hit is a retransmit
 * of that packet. Allowed connections take their packets and bytes from conntrack (deltas since
 * the last report); denied ones, which conntrack never confirms, from the logged packets.
 *
 * <p>Thread-safe: readers call {@link #onNflog} and {@link #onConntrack} from their threads,
 * the flusher calls {@link #flush}; one monitor, held briefly.
 */
public final class FlowAggregator {

    /** Distinct source and destination addresses kept per flow report. */
    static final int MAX_IPS = 10;

    private final Supplier<FlowContext> context;
    private final Map<ConnKey, Conn> conns = new LinkedHashMap<>();
    /**
     * The connections conntrack held when collection started, as sorted 64-bit hashes of their
     * tuples (8 bytes each), until the first dump with the model in sync adopts those still there
     * as partial connections; null when none are pending.
     */
    private long[] atStart;
    private final AtomicLong unknownPrefixes = new AtomicLong();

    private record ConnKey(FlowTuple original, boolean inbound) {
    }

    /** One connection seen by one direction of policy. */
    private static final class Conn {
        final List<RuleHit> hits = new ArrayList<>();
        final List<String> prefixes = new ArrayList<>();
        long logPackets;
        long logBytes;
        long reportedLogPackets;
        long reportedLogBytes;
        boolean tracked;
        long[] ct = new long[4];          // original packets, bytes; reply packets, bytes
        long[] reportedCt = new long[4];
        boolean ended;
        /** The destination before DNAT (a service VIP and port) when conntrack showed one; port -1 otherwise. */
        java.net.InetAddress preDnatAddress;
        int preDnatPort = -1;
        /**
         * The Kubernetes Service dialled, once found (then kept, as Calico's collector does, so the
         * connection's flow key does not change); an immutable value shared with the index.
         */
        ServiceIndex.ServiceName service;
        boolean startReported;
        boolean endReported;
        /** When its first logged packet passed the rule (the kernel's NFLOG timestamp), epoch ms. */
        long firstSeenMillis;
        /**
         * Found in conntrack at start, never seen open: reported with the key's {@code partial} mark,
         * action Allow (conntrack let its packets through), and {@link #derived} as its enforced trace;
         * live or completed, never started.
         */
        boolean partial;
        /** A partial connection's trace from the policy in force when it was adopted; empty if that would not allow it. */
        List<TraceHit> derived = List.of();
    }

    public FlowAggregator(Supplier<FlowContext> context) {
        this.context = context;
    }

    /** One logged packet; an unknown prefix (a rule from a stranger or an older render) is counted and dropped. */
    public synchronized void onNflog(NflogPacket p) {
        RuleHit hit = context.get().hits().decode(p.prefix());
        if (hit == null) {
            unknownPrefixes.incrementAndGet();
            return;
        }
        Conn c = conns.computeIfAbsent(new ConnKey(p.tuple(), hit.inbound()), k -> {
            Conn n = new Conn();
            n.firstSeenMillis = p.time().toEpochMilli();
            return n;
        });
        if (c.prefixes.isEmpty() || c.prefixes.get(0).equals(p.prefix())) {
            c.logPackets++;
            c.logBytes += p.length();
        }
        if (!c.prefixes.contains(p.prefix())) {
            c.prefixes.add(p.prefix());
            c.hits.add(hit);
        }
    }

    /**
     * A conntrack entry, from a dump or a destroy event: updates the counters of the connections
     * with that original tuple.
     */
    public synchronized void onConntrack(ConntrackEntry e) {
        // NFLOG sees packets after DNAT: a DNAT'd entry is found by its original tuple with the
        // real destination (the reply's source), as Calico's collector does.
        FlowTuple t = e.originalWithoutDnat();
        for (boolean in : new boolean[] {true, false}) {
            Conn c = conns.get(new ConnKey(t, in));
            if (c != null) {
                track(c, e);
            }
        }
    }

    private static void track(Conn c, ConntrackEntry e) {
        c.tracked = true;
        long[] now = {e.originalCounters().packets(), e.originalCounters().bytes(),
                e.replyCounters().packets(), e.replyCounters().bytes()};
        for (int i = 0; i < 4; i++) {
            c.ct[i] = Math.max(c.ct[i], now[i]);
        }
        // Over once destroyed, or once TCP reached TIME_WAIT or later (conntrack keeps the
        // entry for minutes; Calico's collector expires it at that state too).
        c.ended |= e.destroyed() || e.tcpClosed();
        if (e.dnat() && c.preDnatPort < 0) {
            c.preDnatAddress = e.original().dst();
            c.preDnatPort = e.original().dstPort();
        }
    }

    /**
     * A whole dump: tracked connections missing from it have ended (a destroy event was missed).
     * The first one after {@link #onStart} whose context is in sync adopts the connections open at the start
     * that involve a local workload and are not followed yet ({@link #adopt}).
     */
    public synchronized void onConntrackDump(List<ConntrackEntry> dump) {
        Set<FlowTuple> live = new HashSet<>();
        for (ConntrackEntry e : dump) {
            live.add(e.originalWithoutDnat());
            onConntrack(e);
        }
        conns.forEach((k, c) -> {
            if (c.tracked && !live.contains(k.original())) {
                c.ended = true;
            }
        });
        if (atStart != null) {
            FlowContext ctx = context.get();
            if (ctx.inSync()) { // else a local workload may not be known yet: the next dump
                long[] open = atStart;
                atStart = null;
                dump.stream().filter(e -> java.util.Arrays.binarySearch(open, hash(e.originalWithoutDnat())) >= 0)
                        .forEach(e -> adopt(ctx, e));
            }
        }
    }

    /**
     * Collection starts (felix's start, or a restart of the collection) with {@code table} in
     * conntrack: those connections opened before it could see them. At the first dump with the model
     * in sync, each still there with a local workload at either end that this aggregator does not
     * follow is reported from then on as a partial connection with conntrack's counters since it
     * began ({@link Conn#partial}): continuing (live), or completed if it ended since, never started (the
     * previous felix counted its start, or it began while no felix was collecting).
     */
    public synchronized void onStart(List<ConntrackEntry> table) {
        // One already over (TIME_WAIT or later, destroyed) ended before this collection: the previous felix
        // reported its start and end, or died first; either way it is not adopted, so never counted twice.
        atStart = table.stream().filter(e -> !e.destroyed() && !e.tcpClosed())
                .mapToLong(e -> hash(e.originalWithoutDnat())).sorted().toArray();
    }

    /** {@return whether connections open at the start are still to be adopted} */
    public synchronized boolean adoptPending() {
        return atStart != null;
    }

    /** A 64-bit FNV-1a hash of a tuple: a collision could only adopt a connection not followed anyway. */
    private static long hash(FlowTuple t) {
        long h = 0xcbf29ce484222325L;
        for (byte b : t.src().getAddress()) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        for (byte b : t.dst().getAddress()) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        for (int v : new int[] {t.protocol(), t.srcPort(), t.dstPort()}) {
            h = (h ^ v) * 0x100000001b3L;
        }
        return h;
    }

    /** One entry of the first in-sync dump that was open at the start: a partial connection per local workload end. */
    private void adopt(FlowContext ctx, ConntrackEntry e) {
        FlowTuple t = e.originalWithoutDnat();
        if (conns.containsKey(new ConnKey(t, true)) || conns.containsKey(new ConnKey(t, false))) {
            return; // NFLOG saw it open after all (its tuple reused): a complete record
        }
        FlowEndpoint src = ctx.endpoint(t.src());
        FlowEndpoint dst = ctx.endpoint(t.dst());
        if (localWorkload(dst)) {
            adopt(ctx, new ConnKey(t, true), dst, e);
        }
        if (localWorkload(src)) {
            adopt(ctx, new ConnKey(t, false), src, e);
        }
    }

    private static boolean localWorkload(FlowEndpoint e) {
        return e.local() && e.type() == FlowEndpoint.Type.WORKLOAD;
    }

    private void adopt(FlowContext ctx, ConnKey k, FlowEndpoint reporter, ConntrackEntry e) {
        Conn c = new Conn();
        c.partial = true;
        c.startReported = true; // continuing: its start is not this collection's to count
        FlowTuple t = k.original();
        List<TraceHit> trace = ctx.trace(reporter, k.inbound(),
                new FlowContext.Packet(t.src(), t.dst(), t.protocol(), t.srcPort(), t.dstPort()), false);
        // The policy now may not be the one that let it open: a trace that would not allow it says nothing.
        boolean allows = !trace.isEmpty() && trace.get(trace.size() - 1).action() == calico.api.model.Action.Allow;
        c.derived = allows ? trace : List.of();
        track(c, e);
        conns.put(k, c);
    }

    public long unknownPrefixes() {
        return unknownPrefixes.get();
    }

    public synchronized int connections() {
        return conns.size();
    }

    /** {@return the pre-DNAT destination (address:port) of a connection by its post-DNAT tuple, or null} */
    synchronized String preDnat(FlowTuple postDnat, boolean inbound) {
        Conn c = conns.get(new ConnKey(postDnat, inbound));
        return c == null || c.preDnatPort < 0 ? null : c.preDnatAddress.getHostAddress() + ":" + c.preDnatPort;
    }

    /**
     * The reports for the interval {@code [start, end)} (Unix seconds): one per flow key with
     * what changed since the last flush; forgets connections that ended and were reported, and
     * denied ones quiet for a whole interval.
     */
    public synchronized List<Flow> flush(long start, long end) {
        FlowContext ctx = context.get();
        Map<FlowKey, Flow.Builder> out = new LinkedHashMap<>();
        Iterator<Map.Entry<ConnKey, Conn>> it = conns.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<ConnKey, Conn> en = it.next();
            ConnKey k = en.getKey();
            Conn c = en.getValue();
            RuleHit last = c.hits.isEmpty() ? null : c.hits.get(c.hits.size() - 1);
            if (!c.partial && (last == null || !last.terminal())) {
                continue; // the rest of this packet's hits are still on their way
            }
            if (!c.partial && !c.startReported && c.firstSeenMillis >= end * 1000) {
                continue; // seen after this interval (a late flush): it starts in the next one
            }
            boolean allowed = c.partial || last.verdict() == Verdict.ALLOW;
            long pktsOrig;
            long bytesOrig;
            long pktsReply;
            long bytesReply;
            if (c.tracked) {
                pktsOrig = c.ct[0] - c.reportedCt[0];
                bytesOrig = c.ct[1] - c.reportedCt[1];
                pktsReply = c.ct[2] - c.reportedCt[2];
                bytesReply = c.ct[3] - c.reportedCt[3];
            } else {
                pktsOrig = c.logPackets - c.reportedLogPackets;
                bytesOrig = c.logBytes - c.reportedLogBytes;
                pktsReply = 0;
                bytesReply = 0;
            }
            boolean started = !c.startReported;
            boolean completed = c.ended && !c.endReported;
            boolean live = allowed && !c.ended;
            if (!started && !completed && !live && pktsOrig == 0 && pktsReply == 0) {
                it.remove(); // ended and reported, or denied and quiet for a whole interval
                continue;
            }
            FlowTuple t = k.original();
            if (c.preDnatPort >= 0 && c.service == null) {
                c.service = ctx.service(c.preDnatAddress, c.preDnatPort, t.protocol());
            }
            FlowEndpoint src = ctx.endpoint(t.src());
            FlowEndpoint dst = ctx.endpoint(t.dst());
            FlowKey key = key(ctx, k, c, last, src, dst);
            Flow.Builder f = out.get(key);
            if (f == null) {
                f = Flow.newBuilder().setKey(key).setStartTime(start).setEndTime(end)
                        .addAllSourceLabels(src.labels()).addAllDestLabels(dst.labels());
                out.put(key, f);
            } else if (!f.getSourceLabelsList().equals(src.labels()) || !f.getDestLabelsList().equals(dst.labels())) {
                // Several endpoints behind one aggregated name: report the labels they share.
                List<String> s = intersect(f.getSourceLabelsList(), src.labels());
                List<String> d = intersect(f.getDestLabelsList(), dst.labels());
                f.clearSourceLabels().addAllSourceLabels(s).clearDestLabels().addAllDestLabels(d);
            }
            // Reporter Src: the original direction leaves the endpoint (out); Dst: it arrives (in).
            if (k.inbound()) {
                f.setPacketsIn(f.getPacketsIn() + pktsOrig).setBytesIn(f.getBytesIn() + bytesOrig)
                        .setPacketsOut(f.getPacketsOut() + pktsReply).setBytesOut(f.getBytesOut() + bytesReply);
            } else {
                f.setPacketsOut(f.getPacketsOut() + pktsOrig).setBytesOut(f.getBytesOut() + bytesOrig)
                        .setPacketsIn(f.getPacketsIn() + pktsReply).setBytesIn(f.getBytesIn() + bytesReply);
            }
            f.setNumConnectionsStarted(f.getNumConnectionsStarted() + (started ? 1 : 0))
                    .setNumConnectionsCompleted(f.getNumConnectionsCompleted() + (completed ? 1 : 0))
                    .setNumConnectionsLive(f.getNumConnectionsLive() + (live ? 1 : 0));
            addIp(f.getSourceIpsList(), k.original().src(), f::addSourceIps);
            addIp(f.getDestIpsList(), k.original().dst(), f::addDestIps);
            c.startReported = true;
            c.endReported |= completed;
            System.arraycopy(c.ct, 0, c.reportedCt, 0, 4);
            c.reportedLogPackets = c.logPackets;
            c.reportedLogBytes = c.logBytes;
            if (c.ended) {
                it.remove();
            }
            // A denied attempt stays one more interval, so its retransmits count as packets, not connections.
        }
        List<Flow> flows = new ArrayList<>();
        out.values().forEach(b -> flows.add(b.build()));
        return flows;
    }

    /** Adds {@code address} in Go's form (IPv6: RFC 5952, {@code fd00::1}), as Calico's collector reports it. */
    private static void addIp(List<String> have, java.net.InetAddress address, java.util.function.Consumer<String> add) {
        String ip = calico.api.net.IpAddress.of(address.getAddress()).toString();
        if (have.size() < MAX_IPS && !have.contains(ip)) {
            add.accept(ip);
        }
    }

    private static List<String> intersect(List<String> have, List<String> other) {
        List<String> out = new ArrayList<>(have);
        out.retainAll(other);
        return out;
    }

    private static FlowKey key(FlowContext ctx, ConnKey k, Conn c, RuleHit last, FlowEndpoint src,
                               FlowEndpoint dst) {
        FlowTuple t = k.original();
        FlowEndpoint reporter = k.inbound() ? dst : src;
        PolicyTrace.Builder trace = PolicyTrace.newBuilder();
        for (int i = 0; i < c.hits.size(); i++) {
            trace.addEnforcedPolicies(enforced(c.hits.get(i), i, reporter));
        }
        for (int i = 0; i < c.derived.size(); i++) {
            trace.addEnforcedPolicies(traced(c.derived.get(i), i));
        }
        List<TraceHit> pending = reporter.local() && ctx.pendingTraces() ? ctx.trace(reporter, k.inbound(),
                new FlowContext.Packet(t.src(), t.dst(), t.protocol(), t.srcPort(), t.dstPort()), true) : List.of();
        for (int i = 0; i < pending.size(); i++) {
            trace.addPendingPolicies(traced(pending.get(i), i));
        }
        FlowKey.Builder key = FlowKey.newBuilder()
                .setSourceName(src.name()).setSourceNamespace(src.namespace()).setSourceType(type(src))
                .setDestName(dst.name()).setDestNamespace(dst.namespace()).setDestType(type(dst))
                .setDestPort(t.dstPort()).setProto(FlowContext.protocolName(t.protocol()))
                // The port dialled before DNAT, whether or not a known Service answers to it.
                .setDestServicePort(Math.max(c.preDnatPort, 0))
                .setReporter(k.inbound() ? Reporter.Dst : Reporter.Src)
                .setAction(c.partial ? Action.Allow : action(last.verdict())).setPolicies(trace)
                .setPartial(c.partial);
        if (c.service != null) {
            key.setDestServiceNamespace(c.service.namespace()).setDestServiceName(c.service.name())
                    .setDestServicePortName(c.service.portName());
        }
        return key.build();
    }

    private static PolicyHit enforced(RuleHit h, int index, FlowEndpoint reporter) {
        PolicyHit.Builder b = PolicyHit.newBuilder().setPolicyIndex(index).setAction(action(h.verdict()))
                .setRuleIndex(h.ruleIndex());
        switch (h.owner()) {
            case POLICY_RULE, MISSING_POLICY -> policy(b, h.policy());
            case PROFILE_RULE -> b.setKind(PolicyKind.Profile).setName(h.profile());
            case NO_PROFILE -> b.setKind(PolicyKind.Profile);
            case END_OF_TIER -> {
                b.setKind(PolicyKind.EndOfTier).setTier(h.tier());
                PolicyId trigger = firstEnforced(reporter, h.inbound(), h.tier());
                if (trigger != null) {
                    b.setTrigger(policy(PolicyHit.newBuilder(), trigger).setAction(Action.Deny).setRuleIndex(-1));
                }
            }
        }
        return b.build();
    }

    private static PolicyId firstEnforced(FlowEndpoint ep, boolean inbound, String tier) {
        for (TierPolicies t : inbound ? ep.ingress() : ep.egress()) {
            if (t.tier().equals(tier)) {
                return t.policies().stream().filter(p -> !p.staged()).findFirst().orElse(null);
            }
        }
        return null;
    }

    private static PolicyHit traced(TraceHit h, int index) {
        PolicyHit.Builder b = PolicyHit.newBuilder().setPolicyIndex(index).setAction(action(h.action()))
                .setRuleIndex(h.ruleIndex());
        if (h.endOfTier()) {
            b.setKind(PolicyKind.EndOfTier).setTier(h.tier());
            if (h.trigger() != null) {
                b.setTrigger(policy(PolicyHit.newBuilder(), h.trigger()).setAction(Action.Deny).setRuleIndex(-1));
            }
        } else if (h.policy() != null) {
            policy(b, h.policy());
        } else {
            b.setKind(PolicyKind.Profile).setName(h.profile() == null ? "" : h.profile());
        }
        return b.build();
    }

    private static PolicyHit.Builder policy(PolicyHit.Builder b, PolicyId id) {
        PolicyKind kind = kind(id);
        b.setKind(kind).setName(switch (kind) {
            // Goldmane names an admin policy by its Kubernetes name; its kind says where it came from.
            case ClusterNetworkPolicyAdminTier -> AdminNetworkPolicyConverter.kubernetesName(id.name()).orElseThrow();
            case ClusterNetworkPolicyBaselineTier ->
                    BaselineAdminNetworkPolicyConverter.kubernetesName(id.name()).orElseThrow();
            default -> id.name();
        }).setTier(id.tier());
        if (id.namespace() != null) {
            b.setNamespace(id.namespace());
        }
        return b;
    }

    static PolicyKind kind(PolicyId id) {
        ResourceKind k = id.kind();
        return switch (k) {
            // Goldmane's kinds 7 and 8 (Calico 3.30's AdminNetworkPolicy and BaselineAdminNetworkPolicy).
            case GLOBAL_NETWORK_POLICY -> AdminNetworkPolicyConverter.kubernetesName(id.name()).isPresent()
                    ? PolicyKind.ClusterNetworkPolicyAdminTier
                    : BaselineAdminNetworkPolicyConverter.kubernetesName(id.name()).isPresent()
                    ? PolicyKind.ClusterNetworkPolicyBaselineTier : PolicyKind.GlobalNetworkPolicy;
            case STAGED_GLOBAL_NETWORK_POLICY -> PolicyKind.StagedGlobalNetworkPolicy;
            case STAGED_NETWORK_POLICY -> PolicyKind.StagedNetworkPolicy;
            case STAGED_KUBERNETES_NETWORK_POLICY -> PolicyKind.StagedKubernetesNetworkPolicy;
            default -> id.name().startsWith("knp.default.") ? PolicyKind.NetworkPolicy
                    : PolicyKind.CalicoNetworkPolicy;
        };
    }

    static Action action(Verdict v) {
        return switch (v) {
            case ALLOW -> Action.Allow;
            case DENY -> Action.Deny;
            case PASS -> Action.Pass;
        };
    }

    static Action action(calico.api.model.Action a) {
        return switch (a) {
            case Allow -> Action.Allow;
            case Deny -> Action.Deny;
            case Pass -> Action.Pass;
            default -> Action.ActionUnspecified;
        };
    }

    private static EndpointType type(FlowEndpoint e) {
        return switch (e.type()) {
            case WORKLOAD -> EndpointType.WorkloadEndpoint;
            case HOST_ENDPOINT -> EndpointType.HostEndpoint;
            case NETWORK_SET -> EndpointType.NetworkSet;
            case NETWORK -> EndpointType.Network;
        };
    }
}
