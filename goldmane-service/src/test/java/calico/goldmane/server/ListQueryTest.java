package calico.goldmane.server;

import static calico.goldmane.server.TestFlows.flow;
import static calico.goldmane.server.TestFlows.hit;
import static calico.goldmane.server.TestFlows.key;
import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.FilterHintsRequest;
import calico.libcalico.goldmane.proto.FilterType;
import calico.libcalico.goldmane.proto.Filter;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.MatchType;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.PolicyMatch;
import calico.libcalico.goldmane.proto.PolicyTrace;
import calico.libcalico.goldmane.proto.PortMatch;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.goldmane.proto.SortBy;
import calico.libcalico.goldmane.proto.SortOption;
import calico.libcalico.goldmane.proto.StringMatch;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** List and FilterHints over gRPC: filters, sort, pages and totals, aggregation across buckets. */
class ListQueryTest {

    private Goldmane gm;

    @BeforeEach
    void start() throws Exception {
        gm = Goldmane.start();
        long t = gm.now();
        // Bucket 0: three keys. Bucket 1 (after rollover): two of them again, plus a staged-policy flow.
        gm.ingest(flow(key("shop", "web-", "shop", "db-", 5432, Action.Allow), t, t + 10, 10, 1000),
                flow(key("shop", "web-", "shop", "cache-", 6379, Action.Deny), t, t + 10, 1, 60),
                flow(key("ops", "probe-", "shop", "web-", 80, Action.Allow).setReporter(Reporter.Src), t, t + 10,
                        2, 200));
        gm.advance(Duration.ofSeconds(15));
        long t1 = gm.now();
        var staged = key("shop", "web-", "shop", "db-", 5432, Action.Allow).setPolicies(PolicyTrace.newBuilder()
                .addEnforcedPolicies(hit(PolicyKind.CalicoNetworkPolicy, "default", "shop", "allow-db-",
                        Action.Allow, 0, 0))
                .addPendingPolicies(hit(PolicyKind.StagedNetworkPolicy, "security", "shop", "lockdown",
                        Action.Deny, 0, 2)));
        gm.ingest(flow(key("shop", "web-", "shop", "db-", 5432, Action.Allow), t1, t1 + 10, 5, 500),
                flow(key("ops", "probe-", "shop", "web-", 80, Action.Allow).setReporter(Reporter.Src), t1, t1 + 10,
                        3, 300),
                flow(staged, t1, t1 + 10, 7, 700));
    }

    @AfterEach
    void stop() {
        gm.close();
    }

    private FlowListResult list(FlowListRequest.Builder r) {
        return gm.flows().list(r.build());
    }

    private static List<String> dests(FlowListResult r) {
        return r.getFlowsList().stream().map(f -> f.getFlow().getKey().getDestName() + ":"
                + f.getFlow().getKey().getDestPort()).toList();
    }

    private static StringMatch exact(String v) {
        return StringMatch.newBuilder().setValue(v).build();
    }

    @Test
    void aggregatesEachKeyAcrossBucketsNewestFirst() {
        FlowListResult r = list(FlowListRequest.newBuilder());
        assertThat(r.getMeta().getTotalResults()).isEqualTo(4);
        assertThat(r.getMeta().getTotalPages()).isEqualTo(1);
        FlowResult db = r.getFlowsList().stream().filter(f -> f.getFlow().getKey().getDestName().equals("db-")
                && f.getFlow().getKey().getPolicies().getPendingPoliciesCount() == 0).findFirst().orElseThrow();
        assertThat(db.getFlow().getPacketsIn()).isEqualTo(15);
        assertThat(db.getFlow().getBytesOut()).isEqualTo(1500);
        assertThat(db.getFlow().getNumConnectionsStarted()).isEqualTo(2);
        long b0 = gm.buckets.start(gm.buckets.index(Goldmane.T0));
        assertThat(db.getFlow().getStartTime()).isEqualTo(b0);
        assertThat(db.getFlow().getEndTime()).isEqualTo(b0 + 30);
        // Time sort: flows whose first bucket is newer come first (the staged one is new in bucket 1).
        assertThat(r.getFlows(0).getFlow().getKey().getPolicies().getPendingPoliciesCount()).isEqualTo(1);
    }

    @Test
    void aggregationIntervalSplitsPerWindow() {
        FlowListResult r = list(FlowListRequest.newBuilder().setAggregationInterval(15)
                .setFilter(Filter.newBuilder().addDestNames(exact("db-"))));
        // db- without pending: two windows; the staged variant: one.
        assertThat(r.getMeta().getTotalResults()).isEqualTo(3);
        assertThat(r.getFlowsList()).allSatisfy(f -> assertThat(f.getFlow().getEndTime()
                - f.getFlow().getStartTime()).isEqualTo(15));
    }

    @Test
    void timeRangeSelectsBuckets() {
        // Only the older bucket: starts before the open bucket's start.
        long open = gm.buckets.start(gm.buckets.index(gm.now()));
        FlowListResult r = list(FlowListRequest.newBuilder().setStartTimeLt(open));
        assertThat(r.getMeta().getTotalResults()).isEqualTo(3);
        assertThat(r.getFlowsList()).allSatisfy(f -> assertThat(f.getFlow().getEndTime()).isEqualTo(open));
        // Relative: the last 10 seconds hold only the open bucket.
        assertThat(list(FlowListRequest.newBuilder().setStartTimeGte(-10)).getMeta().getTotalResults()).isEqualTo(3);
        // Absolute start after the data's buckets but before now: nothing.
        assertThat(list(FlowListRequest.newBuilder().setStartTimeGte(open + 1).setStartTimeLt(open + 60)).getFlowsCount()).isZero();
    }

    @Test
    void filtersAndTogetherAndOrWithin() {
        assertThat(dests(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addDestNames(exact("cache-")).addDestNames(exact("web-"))
))))
                .containsExactlyInAnyOrder("cache-:6379", "web-:80");
        assertThat(dests(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addDestNames(StringMatch.newBuilder().setValue("ach").setType(MatchType.Fuzzy))))))
                .containsExactly("cache-:6379");
        assertThat(dests(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addDestNames(exact("ach")))))).isEmpty();
        assertThat(dests(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addSourceNamespaces(exact("shop")).addActions(Action.Deny))))).containsExactly("cache-:6379");
        assertThat(dests(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addDestPorts(PortMatch.newBuilder().setPort(80)).addProtocols(exact("tcp"))))))
                .containsExactly("web-:80");
        assertThat(dests(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addReporters(Reporter.Src))))).containsExactly("web-:80");
        assertThat(dests(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addSourceNames(exact("probe-")).addSourceNamespaces(exact("shop")))))).isEmpty();
    }

    @Test
    void pendingActionAndPolicyFilters() {
        // The staged deny turns the pending verdict of one allowed flow into deny.
        FlowListResult pendingDeny = list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder()
                .addPendingActions(Action.Deny)));
        assertThat(pendingDeny.getFlowsList()).extracting(f -> f.getFlow().getKey().getAction())
                .containsExactlyInAnyOrder(Action.Allow, Action.Deny);
        assertThat(pendingDeny.getFlowsList()).anySatisfy(f -> assertThat(f.getFlow().getKey().getPolicies()
                .getPendingPolicies(0).getName()).isEqualTo("lockdown"));
        assertThat(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addPolicies(PolicyMatch
                .newBuilder().setKind(PolicyKind.StagedNetworkPolicy).setTier("security")))).getFlowsCount())
                .isEqualTo(1);
        assertThat(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addPolicies(PolicyMatch
                .newBuilder().setName("allow-db-").setNamespace("shop").setAction(Action.Allow)))).getFlowsCount())
                .isEqualTo(2);
        assertThat(list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addPolicies(PolicyMatch
                .newBuilder().setName("allow-db-").setAction(Action.Deny)))).getFlowsCount()).isZero();
    }

    @Test
    void sortsByNameNamespaceAndType() {
        var byDest = list(FlowListRequest.newBuilder().addSortBy(SortOption.newBuilder().setSortBy(SortBy.DestName)));
        assertThat(byDest.getFlowsList()).extracting(f -> f.getFlow().getKey().getDestName())
                .containsExactly("cache-", "db-", "db-", "web-");
        var bySrc = list(FlowListRequest.newBuilder().addSortBy(SortOption.newBuilder()
                .setSortBy(SortBy.SourceNamespace)));
        assertThat(bySrc.getFlowsList()).extracting(f -> f.getFlow().getKey().getSourceNamespace())
                .containsExactly("ops", "shop", "shop", "shop");
    }

    @Test
    void pagesCarryTotals() {
        var sort = SortOption.newBuilder().setSortBy(SortBy.DestName);
        var p0 = list(FlowListRequest.newBuilder().addSortBy(sort).setPageSize(3).setPage(0));
        var p1 = list(FlowListRequest.newBuilder().addSortBy(sort).setPageSize(3).setPage(1));
        var p2 = list(FlowListRequest.newBuilder().addSortBy(sort).setPageSize(3).setPage(2));
        assertThat(p0.getMeta().getTotalResults()).isEqualTo(4);
        assertThat(p0.getMeta().getTotalPages()).isEqualTo(2);
        assertThat(p0.getFlowsCount()).isEqualTo(3);
        assertThat(p1.getFlowsCount()).isEqualTo(1);
        assertThat(p1.getFlows(0).getFlow().getKey().getDestName()).isEqualTo("web-");
        assertThat(p2.getFlowsCount()).isZero();
        assertThat(p2.getMeta().getTotalResults()).isEqualTo(4);
    }

    @Test
    void filterHintsAreDistinctSortedFilteredAndPaged() {
        var names = gm.flows().filterHints(FilterHintsRequest.newBuilder().setType(FilterType.FilterTypeDestName)
                .build());
        assertThat(names.getHintsList()).extracting(h -> h.getValue()).containsExactly("cache-", "db-", "web-");
        assertThat(names.getMeta().getTotalResults()).isEqualTo(3);
        var filtered = gm.flows().filterHints(FilterHintsRequest.newBuilder()
                .setType(FilterType.FilterTypeDestName)
                .setFilter(Filter.newBuilder().addSourceNamespaces(exact("ops"))).build());
        assertThat(filtered.getHintsList()).extracting(h -> h.getValue()).containsExactly("web-");
        var tiers = gm.flows().filterHints(FilterHintsRequest.newBuilder().setType(FilterType.FilterTypePolicyTier)
                .build());
        assertThat(tiers.getHintsList()).extracting(h -> h.getValue()).containsExactly("default", "security");
        var page = gm.flows().filterHints(FilterHintsRequest.newBuilder().setType(FilterType.FilterTypePolicyName)
                .setPageSize(2).setPage(1).build());
        assertThat(page.getMeta().getTotalResults()).isEqualTo(4);
        assertThat(page.getMeta().getTotalPages()).isEqualTo(2);
        assertThat(page.getHintsList()).extracting(h -> h.getValue()).containsExactly("allow-web-", "lockdown");
    }
}
