package calico.goldmane.query;

import calico.goldmane.engine.ScanTask;
import calico.goldmane.store.Buckets;
import calico.goldmane.store.KeyEntry;
import calico.goldmane.store.Stat;
import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.goldmane.proto.RuleDirection;
import calico.libcalico.goldmane.proto.StatisticType;
import calico.libcalico.goldmane.proto.StatisticsGroupBy;
import calico.libcalico.goldmane.proto.StatisticsResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Statistics: every enforced policy hit of every flow in range contributes the flow's counters
 * to its policy (or rule), in the column of the hit's action. "in"/"out" are the flow's
 * packets/bytes in and out; live connections go to "in" for flows reported by the destination
 * and "out" for those reported by the source. Rules carry the direction of the reporter:
 * destination-reported flows hit ingress rules, source-reported ones egress rules.
 */
public final class StatsScan implements ScanTask<List<StatisticsResult>> {

    private record Group(PolicyHit policy, RuleDirection direction) {
    }

    private static final int ALLOWED = 0;
    private static final int DENIED = 1;
    private static final int PASSED = 2;

    private final Buckets buckets;
    private final BucketRange range;
    private final StatisticType type;
    private final StatisticsGroupBy groupBy;
    private final Predicate<PolicyHit> match;
    private final boolean timeSeries;
    // Per group: [verdict][in=0/out=1][point]
    private final Map<Group, long[][][]> groups = new HashMap<>();

    StatsScan(Buckets buckets, BucketRange range, StatisticType type, StatisticsGroupBy groupBy,
              Predicate<PolicyHit> match, boolean timeSeries) {
        this.buckets = buckets;
        this.range = range;
        this.type = type;
        this.groupBy = groupBy;
        this.match = match;
        this.timeSeries = timeSeries;
    }

    @Override
    public void visit(KeyEntry e) {
        if (!e.hasRowIn(range.from(), range.to())) {
            return;
        }
        List<PolicyHit> hits = e.key().getPolicies().getEnforcedPoliciesList();
        if (hits.isEmpty()) {
            return;
        }
        List<long[][][]> targets = new ArrayList<>(hits.size());
        List<Integer> verdicts = new ArrayList<>(hits.size());
        for (PolicyHit h : hits) {
            if (!match.test(h)) {
                continue;
            }
            int v = h.getAction() == Action.Allow ? ALLOWED : h.getAction() == Action.Deny ? DENIED
                    : h.getAction() == Action.Pass ? PASSED : -1;
            if (v < 0) {
                continue;
            }
            targets.add(groups.computeIfAbsent(group(h, e.key().getReporter()),
                    g -> new long[3][2][timeSeries ? range.size() : 1]));
            verdicts.add(v);
        }
        if (targets.isEmpty()) {
            return;
        }
        boolean dst = e.key().getReporter() == Reporter.Dst;
        for (int r = e.firstRowFrom(range.from()), n = e.rows(); r < n; r++) {
            int b = e.bucketAt(r);
            if (b > range.to()) {
                break;
            }
            long in;
            long out;
            switch (type) {
                case ByteCount -> {
                    in = e.stat(r, Stat.BYTES_IN);
                    out = e.stat(r, Stat.BYTES_OUT);
                }
                case LiveConnectionCount -> {
                    in = dst ? e.stat(r, Stat.LIVE) : 0;
                    out = dst ? 0 : e.stat(r, Stat.LIVE);
                }
                default -> {
                    in = e.stat(r, Stat.PACKETS_IN);
                    out = e.stat(r, Stat.PACKETS_OUT);
                }
            }
            int point = timeSeries ? b - range.from() : 0;
            for (int i = 0; i < targets.size(); i++) {
                long[][] col = targets.get(i)[verdicts.get(i)];
                col[0][point] += in;
                col[1][point] += out;
            }
        }
    }

    private Group group(PolicyHit h, Reporter reporter) {
        PolicyHit.Builder b = PolicyHit.newBuilder().setKind(h.getKind()).setNamespace(h.getNamespace())
                .setName(h.getName()).setTier(h.getTier());
        if (groupBy == StatisticsGroupBy.PolicyRule) {
            b.setAction(h.getAction()).setRuleIndex(h.getRuleIndex());
            return new Group(b.build(), reporter == Reporter.Dst ? RuleDirection.Ingress
                    : reporter == Reporter.Src ? RuleDirection.Egress : RuleDirection.Any);
        }
        return new Group(b.build(), RuleDirection.Any);
    }

    @Override
    public List<StatisticsResult> finish() {
        var out = new ArrayList<StatisticsResult>(groups.size());
        groups.forEach((g, v) -> {
            var r = StatisticsResult.newBuilder().setPolicy(g.policy).setDirection(g.direction).setGroupBy(groupBy)
                    .setType(type);
            for (long x : v[ALLOWED][0]) {
                r.addAllowedIn(x);
            }
            for (long x : v[ALLOWED][1]) {
                r.addAllowedOut(x);
            }
            for (long x : v[DENIED][0]) {
                r.addDeniedIn(x);
            }
            for (long x : v[DENIED][1]) {
                r.addDeniedOut(x);
            }
            for (long x : v[PASSED][0]) {
                r.addPassedIn(x);
            }
            for (long x : v[PASSED][1]) {
                r.addPassedOut(x);
            }
            if (timeSeries) {
                for (int b = range.from(); b <= range.to(); b++) {
                    r.addX(buckets.start(b));
                }
            }
            out.add(r.build());
        });
        out.sort(Comparator.<StatisticsResult, String>comparing(r -> r.getPolicy().getTier())
                .thenComparing(r -> r.getPolicy().getNamespace()).thenComparing(r -> r.getPolicy().getName())
                .thenComparingInt(r -> r.getPolicy().getKindValue())
                .thenComparingLong(r -> r.getPolicy().getRuleIndex())
                .thenComparingInt(r -> r.getPolicy().getActionValue()).thenComparingInt(r -> r.getDirectionValue()));
        return out;
    }
}
