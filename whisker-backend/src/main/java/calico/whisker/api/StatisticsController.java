package calico.whisker.api;

import calico.libcalico.goldmane.proto.PolicyMatch;
import calico.libcalico.goldmane.proto.StatisticType;
import calico.libcalico.goldmane.proto.StatisticsGroupBy;
import calico.libcalico.goldmane.proto.StatisticsRequest;
import calico.whisker.api.Responses.Statistic;
import calico.whisker.api.Responses.StatisticsItems;
import calico.whisker.goldmane.GoldmaneClient;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /policies/statistics}: goldmane's Statistics.List, collected (one item per policy or rule). */
@RestController
public class StatisticsController {

    private final GoldmaneClient goldmane;

    public StatisticsController(GoldmaneClient goldmane) {
        this.goldmane = goldmane;
    }

    @GetMapping(value = "/policies/statistics", produces = MediaType.APPLICATION_JSON_VALUE)
    public StatisticsItems statistics(@RequestParam(required = false) String startTimeGte,
                                      @RequestParam(required = false) String startTimeLt,
                                      @RequestParam(required = false) String type,
                                      @RequestParam(required = false) String groupBy,
                                      @RequestParam(required = false) String timeSeries,
                                      @RequestParam(required = false) String kind,
                                      @RequestParam(required = false) String tier,
                                      @RequestParam(required = false) String namespace,
                                      @RequestParam(required = false) String name,
                                      @RequestParam(required = false) String action) {
        PolicyMatch.Builder m = PolicyMatch.newBuilder();
        if (kind != null && !kind.isEmpty()) {
            m.setKind(Params.oneOf("kind", kind, Enums.KINDS, null));
        }
        if (action != null && !action.isEmpty()) {
            m.setAction(Params.oneOf("action", action, Enums.ACTIONS, null));
        }
        if (tier != null) {
            m.setTier(tier);
        }
        if (namespace != null) {
            m.setNamespace(namespace);
        }
        if (name != null) {
            m.setName(name);
        }
        StatisticsRequest r = StatisticsRequest.newBuilder()
                .setStartTimeGte(Params.time("startTimeGte", startTimeGte))
                .setStartTimeLt(Params.time("startTimeLt", startTimeLt))
                .setType(Params.oneOf("type", type, Enums.STATISTIC_TYPES, StatisticType.PacketCount))
                .setGroupBy(Params.oneOf("groupBy", groupBy, Enums.GROUP_BY, StatisticsGroupBy.Policy))
                .setTimeSeries(Params.bool("timeSeries", timeSeries))
                .setPolicyMatch(m)
                .build();
        return new StatisticsItems(goldmane.statistics(r).stream().map(Statistic::of).toList());
    }
}
