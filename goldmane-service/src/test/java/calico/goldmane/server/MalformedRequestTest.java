package calico.goldmane.server;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.libcalico.goldmane.proto.Filter;
import calico.libcalico.goldmane.proto.FilterHintsRequest;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.libcalico.goldmane.proto.FlowsGrpc;
import calico.libcalico.goldmane.proto.PolicyMatch;
import calico.libcalico.goldmane.proto.PortMatch;
import calico.libcalico.goldmane.proto.SortOption;
import calico.libcalico.goldmane.proto.StatisticsRequest;
import calico.libcalico.goldmane.proto.StringMatch;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Iterator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad requests are answered with INVALID_ARGUMENT and a message naming the field. */
class MalformedRequestTest {

    private static Goldmane gm;

    @BeforeAll
    static void start() {
        gm = Goldmane.start();
    }

    @AfterAll
    static void stop() {
        gm.close();
    }

    private static void invalid(ThrowingCallable call, String field) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            org.assertj.core.api.Assertions.assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            org.assertj.core.api.Assertions.assertThat(e.getStatus().getDescription()).startsWith(field + ":");
        });
    }

    private static void list(FlowListRequest.Builder r, String field) {
        invalid(() -> gm.flows().list(r.build()), field);
    }

    @Test
    void badTimeRanges() {
        long now = gm.now();
        list(FlowListRequest.newBuilder().setStartTimeGte(now + 100), "start_time_gte");
        list(FlowListRequest.newBuilder().setStartTimeGte(now - 10).setStartTimeLt(now - 20), "start_time_gte");
        list(FlowListRequest.newBuilder().setStartTimeGte(-10).setStartTimeLt(-60), "start_time_gte");
        invalid(() -> gm.statistics().list(StatisticsRequest.newBuilder().setStartTimeGte(-5).setStartTimeLt(-5)
                .build()).hasNext(), "start_time_gte");
        invalid(() -> {
            Iterator<FlowResult> it = gm.flows().stream(FlowStreamRequest.newBuilder().setStartTimeGte(now + 60)
                    .build());
            it.hasNext();
        }, "start_time_gte");
    }

    @Test
    void pagesOutOfRange() {
        list(FlowListRequest.newBuilder().setPageSize(-1), "page_size");
        list(FlowListRequest.newBuilder().setPageSize(1001), "page_size");
        list(FlowListRequest.newBuilder().setPageSize(10).setPage(-1), "page");
        list(FlowListRequest.newBuilder().setPage(3), "page");
        invalid(() -> gm.flows().filterHints(FilterHintsRequest.newBuilder().setTypeValue(1).setPageSize(5000)
                .build()), "page_size");
    }

    @Test
    void unknownEnums() {
        list(FlowListRequest.newBuilder().addSortBy(SortOption.newBuilder().setSortByValue(42)), "sort_by[0].sort_by");
        list(FlowListRequest.newBuilder().addSortBy(SortOption.newBuilder()).addSortBy(SortOption.newBuilder()),
                "sort_by");
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addActionsValue(9)), "filter.actions[0]");
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addPendingActionsValue(0)),
                "filter.pending_actions[0]");
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addReportersValue(7)), "filter.reporters[0]");
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addPolicies(PolicyMatch.newBuilder()
                .setKindValue(99))), "filter.policies[0].kind");
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addSourceNames(StringMatch.newBuilder()
                .setValue("x").setTypeValue(5))), "filter.source_names[0].type");
        invalid(() -> gm.flows().filterHints(FilterHintsRequest.newBuilder().setTypeValue(77).build()), "type");
        invalid(() -> gm.flows().filterHints(FilterHintsRequest.newBuilder().build()), "type");
        invalid(() -> gm.statistics().list(StatisticsRequest.newBuilder().setTypeValue(8).build()).hasNext(), "type");
        invalid(() -> gm.statistics().list(StatisticsRequest.newBuilder().setGroupByValue(8).build()).hasNext(),
                "group_by");
    }

    @Test
    void emptyOrOutOfRangeFilterValues() {
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addDestNamespaces(StringMatch.newBuilder())),
                "filter.dest_namespaces[0].value");
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addProtocols(StringMatch.newBuilder()
                .setValue("tcp")).addProtocols(StringMatch.newBuilder())), "filter.protocols[1].value");
        list(FlowListRequest.newBuilder().setFilter(Filter.newBuilder().addDestPorts(PortMatch.newBuilder()
                .setPort(70000))), "filter.dest_ports[0].port");
        list(FlowListRequest.newBuilder().setAggregationInterval(20), "aggregation_interval");
        invalid(() -> FlowsGrpc.newBlockingStub(gm.channel()).stream(FlowStreamRequest.newBuilder()
                .setAggregationInterval(30).build()).hasNext(), "aggregation_interval");
    }
}
