package calico.goldmane.query;

import calico.goldmane.store.Buckets;
import calico.libcalico.goldmane.proto.FilterHintsRequest;
import calico.libcalico.goldmane.proto.FilterType;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.libcalico.goldmane.proto.PolicyMatch;
import calico.libcalico.goldmane.proto.SortBy;
import calico.libcalico.goldmane.proto.StatisticType;
import calico.libcalico.goldmane.proto.StatisticsGroupBy;
import calico.libcalico.goldmane.proto.StatisticsRequest;
import java.util.function.IntConsumer;

/**
 * Validates requests and turns them into scans. Every rejection is an {@link InvalidRequest}
 * naming the field. The open bucket is read when the request arrives; a rollover before the
 * scan begins shifts nothing that matters (ranges are in absolute buckets).
 */
public final class Requests {

    private final Buckets buckets;
    private final int maxPageSize;

    public Requests(Buckets buckets, int maxPageSize) {
        this.buckets = buckets;
        this.maxPageSize = maxPageSize;
    }

    public ListScan list(FlowListRequest r, long nowSeconds) {
        int head = buckets.index(nowSeconds);
        BucketRange range = BucketRange.resolve(r.getStartTimeGte(), r.getStartTimeLt(), nowSeconds, buckets, head,
                "start_time_gte", "start_time_lt");
        Paging paging = Paging.of(r.getPage(), r.getPageSize(), maxPageSize, "page", "page_size");
        if (r.getSortByCount() > 1) {
            throw new InvalidRequest("sort_by", "at most one sort option is supported, got " + r.getSortByCount());
        }
        SortBy sort = SortBy.Time;
        if (r.getSortByCount() == 1) {
            sort = SortBy.forNumber(r.getSortBy(0).getSortByValue());
            if (sort == null) {
                throw new InvalidRequest("sort_by[0].sort_by", "unknown sort key " + r.getSortBy(0).getSortByValue());
            }
        }
        long interval = r.getAggregationInterval();
        if (interval < 0 || interval % buckets.widthSeconds() != 0) {
            throw new InvalidRequest("aggregation_interval", interval + " is not 0 or a positive multiple of "
                    + buckets.widthSeconds());
        }
        return new ListScan(buckets, range, new FlowFilter(r.getFilter(), "filter"), sort, paging,
                (int) (interval / buckets.widthSeconds()));
    }

    public HintsScan hints(FilterHintsRequest r, long nowSeconds) {
        FilterType type = FilterType.forNumber(r.getTypeValue());
        if (type == null || type == FilterType.FilterTypeUnspecified) {
            throw new InvalidRequest("type", type == null ? "unknown filter type " + r.getTypeValue()
                    : "a filter type is required");
        }
        int head = buckets.index(nowSeconds);
        BucketRange range = BucketRange.resolve(r.getStartTimeGte(), r.getStartTimeLt(), nowSeconds, buckets, head,
                "start_time_gte", "start_time_lt");
        Paging paging = Paging.of(r.getPage(), r.getPageSize(), maxPageSize, "page", "page_size");
        return new HintsScan(type, range, new FlowFilter(r.getFilter(), "filter"), paging);
    }

    public StatsScan statistics(StatisticsRequest r, long nowSeconds) {
        int head = buckets.index(nowSeconds);
        BucketRange range = BucketRange.resolve(r.getStartTimeGte(), r.getStartTimeLt(), nowSeconds, buckets, head,
                "start_time_gte", "start_time_lt");
        StatisticType type = StatisticType.forNumber(r.getTypeValue());
        if (type == null) {
            throw new InvalidRequest("type", "unknown statistic type " + r.getTypeValue());
        }
        StatisticsGroupBy groupBy = StatisticsGroupBy.forNumber(r.getGroupByValue());
        if (groupBy == null) {
            throw new InvalidRequest("group_by", "unknown grouping " + r.getGroupByValue());
        }
        PolicyMatch m = r.hasPolicyMatch() ? r.getPolicyMatch() : PolicyMatch.getDefaultInstance();
        return new StatsScan(buckets, range, type, groupBy, FlowFilter.policyPredicate(m, "policy_match"),
                r.getTimeSeries());
    }

    /** A validated stream request: its filter, and the first bucket to backfill (none when > head). */
    public record StreamPlan(FlowFilter filter, int backfillFrom) {
    }

    public StreamPlan stream(FlowStreamRequest r, long nowSeconds) {
        long interval = r.getAggregationInterval();
        if (interval != 0 && interval != buckets.widthSeconds()) {
            throw new InvalidRequest("aggregation_interval", interval + " must be 0 or " + buckets.widthSeconds());
        }
        int head = buckets.index(nowSeconds);
        long gte = r.getStartTimeGte();
        int from;
        if (gte == 0) {
            from = head; // now: live only
        } else {
            long at = gte > 0 ? gte : nowSeconds + gte;
            if (at > nowSeconds) {
                throw new InvalidRequest("start_time_gte", "resolves to " + at + ", after now (" + nowSeconds + ")");
            }
            from = Math.max(buckets.oldestRetained(head), buckets.firstStartingAtOrAfter(at));
        }
        return new StreamPlan(new FlowFilter(r.getFilter(), "filter"), from);
    }

    public BackfillScan backfill(StreamPlan plan, IntConsumer onBegin) {
        return new BackfillScan(buckets, plan.backfillFrom(), plan.filter(), onBegin);
    }
}
