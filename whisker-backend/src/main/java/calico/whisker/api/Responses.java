package calico.whisker.api;

import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.FlowResult;
import calico.libcalico.goldmane.proto.ListMetadata;
import calico.libcalico.goldmane.proto.PolicyHit;
import calico.libcalico.goldmane.proto.StatisticsResult;
import java.time.Instant;
import java.util.List;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

/** The JSON shapes of API.md, built from goldmane's messages. Field names come from the record components. */
public final class Responses {

    private Responses() {
    }

    public record Meta(long totalResults, long totalPages) {
        public static Meta of(ListMetadata m) {
            return new Meta(m.getTotalResults(), m.getTotalPages());
        }
    }

    public record Page<T>(Meta meta, List<T> items) {
    }

    public record Hint(String value) {
    }

    public record StatisticsItems(List<Statistic> items) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Policy(String kind, String name, String namespace, String tier, String action, long policyIndex,
                  long ruleIndex, Policy trigger) {
        public static Policy of(PolicyHit h) {
            return new Policy(Enums.name(h.getKind()), h.getName(), h.getNamespace(), h.getTier(),
                    Enums.name(h.getAction()), h.getPolicyIndex(), h.getRuleIndex(),
                    h.hasTrigger() ? of(h.getTrigger()) : null);
        }
    }

    public record Policies(List<Policy> enforced, List<Policy> pending) {
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record FlowResponse(String id, String startTime, String endTime, String action,
                        String sourceName, String sourceNamespace, String sourceType, List<String> sourceLabels,
                        String destName, String destNamespace, String destType, List<String> destLabels,
                        String destServiceName, String destServiceNamespace, String destServicePortName,
                        long destServicePort, String protocol, long destPort, String reporter, Policies policies,
                        long packetsIn, long packetsOut, long bytesIn, long bytesOut,
                        long numConnectionsStarted, long numConnectionsCompleted, long numConnectionsLive,
                        List<String> sourceIps, List<String> destIps, boolean partial) {

        public static FlowResponse of(FlowResult r) {
            Flow f = r.getFlow();
            FlowKey k = f.getKey();
            return new FlowResponse(Long.toString(r.getId()), time(f.getStartTime()), time(f.getEndTime()),
                    Enums.name(k.getAction()),
                    k.getSourceName(), k.getSourceNamespace(), Enums.name(k.getSourceType()),
                    List.copyOf(f.getSourceLabelsList()),
                    k.getDestName(), k.getDestNamespace(), Enums.name(k.getDestType()),
                    List.copyOf(f.getDestLabelsList()),
                    k.getDestServiceName(), k.getDestServiceNamespace(), k.getDestServicePortName(),
                    k.getDestServicePort(), k.getProto(), k.getDestPort(), Enums.name(k.getReporter()),
                    new Policies(k.getPolicies().getEnforcedPoliciesList().stream().map(Policy::of).toList(),
                            k.getPolicies().getPendingPoliciesList().stream().map(Policy::of).toList()),
                    f.getPacketsIn(), f.getPacketsOut(), f.getBytesIn(), f.getBytesOut(),
                    f.getNumConnectionsStarted(), f.getNumConnectionsCompleted(), f.getNumConnectionsLive(),
                    List.copyOf(f.getSourceIpsList()), List.copyOf(f.getDestIpsList()), k.getPartial());
        }
    }

    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Statistic(Policy policy, String direction, String groupBy, String type,
                     List<Long> allowedIn, List<Long> allowedOut, List<Long> deniedIn, List<Long> deniedOut,
                     List<Long> passedIn, List<Long> passedOut, List<String> x) {
        public static Statistic of(StatisticsResult s) {
            return new Statistic(Policy.of(s.getPolicy()), Enums.name(s.getDirection()), s.getGroupBy().name(),
                    s.getType().name(), s.getAllowedInList(), s.getAllowedOutList(), s.getDeniedInList(),
                    s.getDeniedOutList(), s.getPassedInList(), s.getPassedOutList(),
                    s.getXList().stream().map(Responses::time).toList());
        }
    }

    /** RFC 3339 UTC, whole seconds ("2026-12-01T18:20:15Z"). */
    static String time(long epochSeconds) {
        return Instant.ofEpochSecond(epochSeconds).toString();
    }
}
