package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * Spec of a {@link BGPFilter}: ordered import/export rules per address family. The first
 * rule that matches a route decides (Accept or Reject); IPv4 and IPv6 rules have the same
 * shape, only the valid prefix lengths differ (the validator checks them).
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record BGPFilterSpec(
        @JsonProperty("exportV4") List<FilterRule> exportV4,
        @JsonProperty("importV4") List<FilterRule> importV4,
        @JsonProperty("exportV6") List<FilterRule> exportV6,
        @JsonProperty("importV6") List<FilterRule> importV6) {

    public BGPFilterSpec {
        exportV4 = copy(exportV4);
        importV4 = copy(importV4);
        exportV6 = copy(exportV6);
        importV6 = copy(importV6);
    }

    private static <T> List<T> copy(List<T> l) {
        return l == null ? List.of() : List.copyOf(l);
    }

    /**
     * One filter rule. Every present match field must match; {@code cidr} goes with
     * {@code matchOperator} and optionally {@code prefixLength}.
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record FilterRule(
            String cidr,
            PrefixLength prefixLength,
            MatchSource source,
            @JsonProperty("interface") String iface,
            MatchOperator matchOperator,
            PeerType peerType,
            CommunityMatch communities,
            @JsonProperty("asPathPrefix") List<ASNumber> asPathPrefix,
            Integer priority,
            FilterAction action,
            List<Operation> operations) {

        public FilterRule {
            asPathPrefix = copy(asPathPrefix);
            operations = copy(operations);
        }

        public static FilterRule of(FilterAction action, String cidr, MatchOperator op) {
            return new FilterRule(cidr, null, null, null, op, null, null, null, null, action, null);
        }
    }

    /** Bounds on the matched route's prefix length. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PrefixLength(Integer min, Integer max) {
    }

    /** Routes carrying one of these communities match. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record CommunityMatch(List<String> values) {
        public CommunityMatch {
            values = copy(values);
        }
    }

    /** One route modification applied on Accept; exactly one field is set. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Operation(AddCommunity addCommunity, @JsonProperty("prependASPath") PrependASPath prependASPath,
                            SetPriority setPriority) {
    }

    /** Adds a community value to the route. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record AddCommunity(String value) {
    }

    /** Prepends AS numbers to the route's AS path. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record PrependASPath(List<ASNumber> prefix) {
        public PrependASPath {
            prefix = copy(prefix);
        }
    }

    /** Sets the route's priority (metric). */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record SetPriority(Integer value) {
    }

    /** What a matching rule does with the route. */
    public enum FilterAction {
        Accept, Reject
    }

    /** How the route's prefix is compared with {@code cidr}. */
    public enum MatchOperator {
        Equal, NotEqual, In, NotIn
    }

    /** {@code RemotePeers}: only routes learned from BGP peers. */
    public enum MatchSource {
        RemotePeers
    }

    /** Only sessions of this type. */
    public enum PeerType {
        eBGP, iBGP
    }
}
