package calico.whisker.api;

import calico.libcalico.goldmane.proto.Action;
import calico.libcalico.goldmane.proto.EndpointType;
import calico.libcalico.goldmane.proto.FilterType;
import calico.libcalico.goldmane.proto.MatchType;
import calico.libcalico.goldmane.proto.PolicyKind;
import calico.libcalico.goldmane.proto.Reporter;
import calico.libcalico.goldmane.proto.RuleDirection;
import calico.libcalico.goldmane.proto.SortBy;
import calico.libcalico.goldmane.proto.StatisticType;
import calico.libcalico.goldmane.proto.StatisticsGroupBy;
import com.google.protobuf.ProtocolMessageEnum;
import java.util.LinkedHashMap;
import java.util.Map;

/** API names of goldmane's enums (API.md): the proto names, without the "unspecified" values. */
final class Enums {

    static final Map<String, Action> ACTIONS = of(Action.values(), Action.ActionUnspecified);
    static final Map<String, Reporter> REPORTERS = of(Reporter.values(), Reporter.ReporterUnspecified);
    static final Map<String, PolicyKind> KINDS = of(PolicyKind.values(), PolicyKind.KindUnspecified);
    static final Map<String, MatchType> MATCH_TYPES = of(MatchType.values(), null);
    static final Map<String, SortBy> SORT_BY = of(SortBy.values(), null);
    static final Map<String, StatisticType> STATISTIC_TYPES = of(StatisticType.values(), null);
    static final Map<String, StatisticsGroupBy> GROUP_BY = of(StatisticsGroupBy.values(), null);
    /** "SourceName" → FilterTypeSourceName. */
    static final Map<String, FilterType> FILTER_TYPES;

    static {
        Map<String, FilterType> m = new LinkedHashMap<>();
        for (FilterType t : FilterType.values()) {
            if (t != FilterType.UNRECOGNIZED && t != FilterType.FilterTypeUnspecified) {
                m.put(t.name().substring("FilterType".length()), t);
            }
        }
        FILTER_TYPES = Map.copyOf(m);
    }

    private Enums() {
    }

    private static <E extends Enum<E> & ProtocolMessageEnum> Map<String, E> of(E[] values, E unspecified) {
        Map<String, E> m = new LinkedHashMap<>();
        for (E e : values) {
            if (e != unspecified && !e.name().equals("UNRECOGNIZED")) {
                m.put(e.name(), e);
            }
        }
        return Map.copyOf(m);
    }

    /** Response names: the proto name, "" for unspecified or unknown numbers. */
    static String name(Action a) {
        return a == Action.ActionUnspecified || a == Action.UNRECOGNIZED ? "" : a.name();
    }

    static String name(Reporter r) {
        return r == Reporter.ReporterUnspecified || r == Reporter.UNRECOGNIZED ? "" : r.name();
    }

    static String name(EndpointType t) {
        return t == EndpointType.EndpointTypeUnspecified || t == EndpointType.UNRECOGNIZED ? "" : t.name();
    }

    static String name(PolicyKind k) {
        return k == PolicyKind.KindUnspecified || k == PolicyKind.UNRECOGNIZED ? "" : k.name();
    }

    static String name(RuleDirection d) {
        return d == RuleDirection.UNRECOGNIZED ? "" : d.name();
    }
}
