package calico.whisker.api;

import calico.libcalico.goldmane.proto.FilterHintsRequest;
import calico.libcalico.goldmane.proto.FilterHintsResult;
import calico.libcalico.goldmane.proto.FlowListRequest;
import calico.libcalico.goldmane.proto.FlowListResult;
import calico.libcalico.goldmane.proto.FlowStreamRequest;
import calico.libcalico.goldmane.proto.SortOption;
import calico.whisker.api.Responses.FlowResponse;
import calico.whisker.api.Responses.Hint;
import calico.whisker.api.Responses.Meta;
import calico.whisker.api.Responses.Page;
import calico.whisker.goldmane.GoldmaneClient;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/** {@code GET /flows} (JSON page, or SSE with {@code watch=true}) and {@code GET /flows-filter-hints}. */
@RestController
public class FlowsController {

    static final long DEFAULT_PAGE_SIZE = 100;

    private final GoldmaneClient goldmane;
    private final FlowWatches watches;

    public FlowsController(GoldmaneClient goldmane, FlowWatches watches) {
        this.goldmane = goldmane;
        this.watches = watches;
    }

    @GetMapping("/flows")
    public Page<FlowResponse> list(@RequestParam(required = false) String startTimeGte,
                                   @RequestParam(required = false) String startTimeLt,
                                   @RequestParam(required = false) String sortBy,
                                   @RequestParam(required = false) String page,
                                   @RequestParam(required = false) String pageSize,
                                   @RequestParam(required = false) String filters,
                                   @RequestParam(required = false) String watch) {
        // watch=true is routed to watch(); anything else but false is malformed.
        Params.bool("watch", watch);
        FlowListRequest r = FlowListRequest.newBuilder()
                .setStartTimeGte(Params.time("startTimeGte", startTimeGte))
                .setStartTimeLt(Params.time("startTimeLt", startTimeLt))
                .addSortBy(SortOption.newBuilder().setSortBy(Params.oneOf("sortBy", sortBy, Enums.SORT_BY,
                        calico.libcalico.goldmane.proto.SortBy.Time)))
                .setPage(Params.atLeast("page", page, 0, 0))
                .setPageSize(Params.atLeast("pageSize", pageSize, DEFAULT_PAGE_SIZE, 1))
                .setFilter(FilterParser.parse(filters))
                .build();
        FlowListResult res = goldmane.list(r);
        return new Page<>(Meta.of(res.getMeta()), res.getFlowsList().stream().map(FlowResponse::of).toList());
    }

    @GetMapping(value = "/flows", params = "watch=true")
    public SseEmitter watch(@RequestParam(required = false) String startTimeGte,
                            @RequestParam(required = false) String startTimeLt,
                            @RequestParam(required = false) String sortBy,
                            @RequestParam(required = false) String page,
                            @RequestParam(required = false) String pageSize,
                            @RequestParam(required = false) String filters) {
        String live = "not allowed with watch=true (a live stream has no pages, order or end)";
        Params.absent("startTimeLt", startTimeLt, live);
        Params.absent("sortBy", sortBy, live);
        Params.absent("page", page, live);
        Params.absent("pageSize", pageSize, live);
        FlowStreamRequest r = FlowStreamRequest.newBuilder()
                .setStartTimeGte(Params.time("startTimeGte", startTimeGte))
                .setFilter(FilterParser.parse(filters))
                .build();
        return watches.open(r);
    }

    @GetMapping(value = "/flows-filter-hints", produces = MediaType.APPLICATION_JSON_VALUE)
    public Page<Hint> hints(@RequestParam(required = false) String type,
                            @RequestParam(required = false) String startTimeGte,
                            @RequestParam(required = false) String startTimeLt,
                            @RequestParam(required = false) String page,
                            @RequestParam(required = false) String pageSize,
                            @RequestParam(required = false) String filters) {
        FilterHintsRequest r = FilterHintsRequest.newBuilder()
                .setType(Params.oneOf("type", type, Enums.FILTER_TYPES, null))
                .setStartTimeGte(Params.time("startTimeGte", startTimeGte))
                .setStartTimeLt(Params.time("startTimeLt", startTimeLt))
                .setPage(Params.atLeast("page", page, 0, 0))
                .setPageSize(Params.atLeast("pageSize", pageSize, DEFAULT_PAGE_SIZE, 1))
                .setFilter(FilterParser.parse(filters))
                .build();
        FilterHintsResult res = goldmane.hints(r);
        return new Page<>(Meta.of(res.getMeta()), res.getHintsList().stream().map(h -> new Hint(h.getValue())).toList());
    }
}
